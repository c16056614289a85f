// Upstream: openclaw/openclaw#82590 "fix(node-host): exit on PAIRING_REQUIRED for systemd restart"
// (a pull request, opened 2026-05-16 by dlebee-agent and closed unmerged by its author: "opened
// without permission, need to investigate further whether this is actually a regression or a
// test issue"). There is no issue of its own; the version it was seen on is not stated (the PR's
// date puts it on the 2026.5 line). Not to be confused with openclaw/openclaw#52014 "Gateway
// crash-loops on config reload when node host pairing fails" (2026.3.13): that one is the
// gateway restarting in a loop under launchd; the maintainers closed it citing this very
// behaviour ("the shared GatewayClient explicitly pauses reconnect on PAIRING_REQUIRED instead of
// hot-looping"), so it is a different bug.
//
// Reporter's steps and symptom (PR description): 1. a node host connects and is refused with
// PAIRING_REQUIRED, and pauses its reconnection ("waiting for operator action"); 2. the operator
// approves the device; 3. "Node never retries connecting because it's waiting". Proposed fix: add
// PAIRING_REQUIRED to NODE_HOST_EXIT_ON_RECONNECT_PAUSE_CODES so the node host exits and its
// supervisor (systemd) starts it again. Not merged; no fix PR, no version carries one.
//
// What the user should have seen (asserted here, R-82590-resume-after-approval): once the
// pending device request is approved, the paused node host connects again by itself within
// RESUME_S (a new WebSocket upgrade at its tap after the approval, a successful connect, and
// node.list shows it connected).
//
// What 2026.9.6 intends instead, documented (docs/cli/node.md, "Pairing"): "A node paused on
// `PAIRING_REQUIRED` does not resume automatically after manual approval", and in the re-pair
// steps: "4. Restart or rerun the node again. A client paused for pairing does not resume
// automatically after approval; this reconnect creates the separate command-surface request."
// (docs/nodes/troubleshooting.md: "then restart or rerun a node paused on `PAIRING_REQUIRED`").
// In its dist, runner-*.mjs NODE_HOST_EXIT_ON_RECONNECT_PAUSE_CODES still lacks PAIRING_REQUIRED
// and the node host logs "node host gateway reconnect paused after close (1008): ...
// detail=PAIRING_REQUIRED; waiting for operator action" and stays up with no reconnect timer.
// So a failure here is registered as differs-from-reference, not as a shortfall. The lab's own
// bring-up works around the same pause (lab/topology/operator.ts approveNodes restarts a node
// that is not connected 1.5 s after its device approval).
//
// How this lab reproduces it: an own lab with one node host (device pairing approved by the
// operator, the default) behind its wire tap; no MCP servers, no git. After bring-up the
// operator removes the node's device pairing (device.pair.remove): the gateway drops the node,
// whose reconnect is refused. The scenario waits (bounded) for a connect refused with
// PAIRING_REQUIRED at the tap, the node's "reconnect paused" log line and its pending device
// request (if the node instead pauses on another code, e.g. AUTH_DEVICE_TOKEN_MISMATCH with no
// request, it restarts it once, as docs/cli/node.md step 2 says), approves that request
// (device.pair.approve) and polls the tap and node.list for RESUME_S. Then it applies the
// documented remedy (restart the node container, approve its command-surface request) and checks
// that the node comes back within REMEDY_S, which shows the approval itself was good.
// The node container has no restart policy (no supervisor): a version that exits on the pause,
// as the PR proposed, would show here as nodeProcess "exited 1", a changed signature to review.
//
// Outcome: reproduced on 2026.9.6, as documented (runs 20261130-123027-1090 and
// 20261130-123844-f45b, both KNOWN-FINDING with the signature below): device.pair.remove closed
// the node (4001 "device removed"), its reconnect was refused with PAIRING_REQUIRED and it logged
// "reconnect paused ... detail=PAIRING_REQUIRED; waiting for operator action"; after the approval
// it opened no connection for 30 s (no upgrade at its tap; node.list connected: false; container
// running). The documented restart brought it back in about 7 s (R-82590-remedy passes).
import { memberLog } from "../../lab/kits/logs.ts";
import { containerState } from "../../lab/kits/container.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import * as op from "../../lab/clients/operator.ts";
import type { Frame } from "../../lab/clients/tap.ts";
import { waitForNode, summarizeNode } from "../../lab/kits/nodes.ts";
import { nodeScene, type NodeScene } from "../../lab/kits/scene.ts";
import { refusal } from "../../lab/kits/session.ts";
import { defineScenario, LabInfraError, type FindingRecord, labStep } from "../../lab/scenario.ts";
import type { Lab } from "../../lab/topology/lab.ts";
import { pollUntil, waitFor } from "../../lab/core/wait.ts";

/** How long after the approval the node must be connected again by itself. */
const RESUME_S = 30;
/** How long the node has to be refused (and pause) after its pairing is removed. */
const REFUSED_S = 60;
/** How long after the paused node's refusal its log line may come. */
const PAUSED_LINE_S = 5;
/** How long the documented remedy (restart, approve the surface request) may take. */
const REMEDY_S = 90;

const EXPECTATION = `a node host refused with PAIRING_REQUIRED connects again by itself within ${RESUME_S} s of its device pairing being approved (a new upgrade at its tap, a successful connect, node.list connected)`;

const findings: FindingRecord[] = [
  {
    // Documented for 2026.9.6 (docs/cli/node.md: "A node paused on `PAIRING_REQUIRED` does not
    // resume automatically after manual approval"): the node host logs "reconnect paused ...
    // waiting for operator action", stays running, and opens no connection after the approval.
    id: "R-82590-resume-after-approval",
    expectation: EXPECTATION,
    signature: { within_s: 30, refusedWith: "PAIRING_REQUIRED", pausedLog: "waiting for operator action", upgradesAfterApproval: 0, connectsAfterApproval: 0, connectedAfterApproval: false, nodeProcess: "running" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-82590-resume-after-approval.json",
  },
];

/** What the body observed (JSON, for the history); the checks below judge it. */
export interface Observed {
  /**
   * RESUME_S after the approval: whether the node connected again by itself (the poll's verdict)
   * and its last read (new upgrades and connects at the tap since the approval, node.list), the
   * action of the node's "reconnect paused" line (null: none), and its container then.
   */
  resumed?: { held: boolean; last: { upgrades: number; connects: number; connected: boolean }; pausedAction: string | null; container: { running: boolean; exitCode: number | null } };
  /** Only when it did not: whether the documented remedy brought it back within REMEDY_S, and its last read. */
  remedy?: { held: boolean; last: { connects: number; connected: boolean } };
}

/** The node host's process as its container shows it. */
const processState = (c: { running: boolean; exitCode: number | null }): string => (c.running ? "running" : `exited ${c.exitCode}`);

export default defineScenario<Observed>({
  name: "repro-82590",
  upstream: {
    issue: 82590,
    kind: "pr",
    title: "fix(node-host): exit on PAIRING_REQUIRED for systemd restart",
    status: "closed-not-fixed",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/82590",
  },
  protocolSteps: [
    "Run a node host paired and connected (device pairing approved).",
    "As an operator, `device.pair.remove` `{\"deviceId\":\"<node>\"}`: the gateway closes the node (4001 \"device removed\"), its reconnect is refused `PAIRING_REQUIRED` and it logs \"reconnect paused ... waiting for operator action\".",
    "Approve the node's pending request: `device.pair.list`, then `device.pair.approve` `{\"requestId\":\"<request>\"}`.",
    "For 30 s the node opens no new connection and `node.list` shows it disconnected; only restarting the node host brings it back. OpenClaw 2026.9.6 documents this (docs/cli/node.md: a node paused on PAIRING_REQUIRED does not resume after approval).",
  ],
  proves: "a node host paused on PAIRING_REQUIRED connects again by itself once its device pairing is approved (openclaw/openclaw#82590)",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 1, devicePairing: "operator" }, mcp: { servers: [] }, git: { enabled: false } },
  needs: [{ method: "device.pair.remove" }, { method: "device.pair.approve" }, { method: "device.pair.list" }],
  findings,
  checks: [
    {
      id: "R-82590-resume-after-approval",
      expectation: EXPECTATION,
      kind: "differs-from-reference",
      judge: (h) => {
        const r = h.resumed;
        if (!r) return undefined;
        return {
          holds: r.held,
          observed: normalise({
            within_s: RESUME_S,
            refusedWith: "PAIRING_REQUIRED",
            pausedLog: r.pausedAction,
            upgradesAfterApproval: r.last.upgrades,
            connectsAfterApproval: r.last.connects,
            connectedAfterApproval: r.last.connected,
            nodeProcess: processState(r.container),
          }),
        };
      },
    },
    {
      id: "R-82590-remedy",
      expectation: `the documented remedy (restart the node host, approve its command-surface request) brings the approved node back connected within ${REMEDY_S} s`,
      // Tried only when the node did not come back by itself.
      optional: true,
      judge: (h) => h.remedy && { holds: h.remedy.held, observed: normalise({ within_s: REMEDY_S, connects: h.remedy.last.connects, connected: h.remedy.last.connected }) },
    },
  ],
  timeoutMs: 420_000,
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const client = lab.operator.client;
    const atEnd = async ({ tap, evidence }: NodeScene<false>) => {
      evidence.tap = await tap.events().catch((e: Error) => ({ unreadable: e.message }));
    };
    await nodeScene(ctx, { faults: false, atEnd }, async ({ alias, tap, evidence }) => {
      const before = await waitForNode(lab, alias, "connected after bring-up", (n) => n.connected, { timeoutMs: 30_000, signal });
      const nodeId = before.nodeId;
      evidence.before = summarizeNode(before);

      // ---- 1. remove the node's device pairing: the gateway drops it, its reconnect is refused
      const removeSince = await labStep("read the tap's seq", () => tap.seq());
      const removedAt = Date.now();
      const removed = await client.request("device.pair.remove", { deviceId: nodeId }).catch((e: unknown) => refusal(e));
      evidence.remove = removed;
      log(`device.pair.remove ${nodeId}: ${JSON.stringify(removed)}`);
      if ((removed as { ok?: unknown }).ok === false) throw new Error(`device.pair.remove of ${alias} was refused: ${JSON.stringify(removed)}`);

      let refused = await waitRefused(lab, alias, nodeId, removeSince, removedAt, signal);
      evidence.refusedFirst = refused;
      if (!refused.request) {
        // docs/cli/node.md, re-pair step 2: "If `openclaw devices list` does not show a request and
        // the node reports AUTH_DEVICE_TOKEN_MISMATCH, restart or rerun it once more."
        log(`${alias} paused without a pairing request (${JSON.stringify(refused.paused)}): restarting it once, as the docs say`);
        const since = await labStep("read the tap's seq", () => tap.seq());
        const at = Date.now();
        evidence.tokenMismatchRestart = await labStep(`restart ${alias}`, () => faults.restart(lab, alias, { timeoutSeconds: 5 }).inject());
        refused = await waitRefused(lab, alias, nodeId, since, at, signal);
        evidence.refusedAfterRestart = refused;
        if (!refused.request) throw new LabInfraError(`${alias} never asked for device pairing again after its pairing was removed and it was restarted once: ${JSON.stringify(refused)}`);
      }
      // The paused line follows the refusal within milliseconds; give it PAUSED_LINE_S.
      const pausedLine = await pollUntil(
        `${alias} to log "reconnect paused" after its PAIRING_REQUIRED refusal`,
        async () => (await pausedLines(lab, alias, refused.sinceMs)).find((p) => p.detail === "PAIRING_REQUIRED"),
        (p) => p !== undefined,
        { deadlineMs: PAUSED_LINE_S * 1000, from: refused.refusedAt, intervalMs: 250, signal },
      );
      log(`${alias} refused with ${refused.refusals.join(", ")}; pending device request ${refused.request.requestId}; paused line: ${pausedLine.last?.line ?? "none"}`);
      evidence.pausedLine = pausedLine.last ?? null;

      // ---- 2. approve the pending device request, as an admin would
      const approveSince = await labStep("read the tap's seq", () => tap.seq());
      const approvedAt = Date.now();
      evidence.approve = await op.approveDevice(client, refused.request.requestId);
      log(`approved device request ${refused.request.requestId} of ${alias}`);

      // ---- 3. does it come back by itself?
      const resumed = await pollUntil(
        `${alias} to connect again by itself after the approval`,
        async () => {
          const [http, frames, nodes] = await Promise.all([labStep("read the tap's HTTP exchanges", () => tap.http({ since: approveSince })), labStep("read the tap's frames", () => tap.frames({ since: approveSince })), op.listNodes(client)]);
          const n = nodes.find((x) => x.displayName === alias || x.nodeId === nodeId);
          return {
            upgrades: http.filter((h) => h.path === "/" && !!h.upgrade).length,
            connects: frames.filter((f) => isConnectReply(f) && f.ok === true).length,
            refusals: frames.filter((f) => isConnectReply(f) && f.ok === false).map((f) => f.errorDetailsCode ?? f.errorCode ?? "?"),
            connected: n?.connected === true,
            node: summarizeNode(n),
          };
        },
        (v) => v.connects > 0 && v.connected,
        { deadlineMs: RESUME_S * 1000, from: approvedAt, intervalMs: 500, signal },
      );
      const st = await labStep(`inspect ${alias}'s container`, () => containerState(lab, alias));
      const nodeProcess = processState(st);
      log(`${resumed.held ? "connected again" : "not connected"} ${Math.round(resumed.ms / 100) / 10} s after the approval: ${JSON.stringify(resumed.last)}; container ${nodeProcess}`);
      evidence.resumed = { held: resumed.held, ms: resumed.ms, polls: resumed.polls, last: resumed.last, container: { status: st.status, startedAt: st.startedAt === undefined ? null : new Date(st.startedAt).toISOString(), restartCount: st.restartCount } };
      observe("resumed", {
        held: resumed.held,
        last: { upgrades: resumed.last.upgrades, connects: resumed.last.connects, connected: resumed.last.connected },
        pausedAction: pausedLine.last?.action ?? null,
        container: { running: st.running, exitCode: st.exitCode },
      }); // R-82590-resume-after-approval

      // ---- 4. the documented remedy: restart (rerun) the node, approve its surface request
      if (!resumed.held) {
        const remedySince = await labStep("read the tap's seq", () => tap.seq());
        const restartedAt = Date.now();
        evidence.remedyRestart = await labStep(`restart ${alias}`, () => faults.restart(lab, alias, { timeoutSeconds: 5 }).inject());
        const approvedSurface: string[] = [];
        const back = await pollUntil(
          `${alias} connected again after the documented restart`,
          async () => {
            // docs/cli/node.md step 5: approve the separate command-surface request.
            for (const p of (await op.listNodePairing(client)).pending.filter((x) => x.displayName === alias || x.nodeId === nodeId)) {
              await op.approveNode(client, p.requestId);
              approvedSurface.push(p.requestId);
            }
            const frames = await labStep("read the tap's frames", () => tap.frames({ since: remedySince }));
            const n = (await op.listNodes(client)).find((x) => x.displayName === alias || x.nodeId === nodeId);
            return { connects: frames.filter((f) => isConnectReply(f) && f.ok === true).length, connected: n?.connected === true, approvalState: n?.approvalState ?? null };
          },
          (v) => v.connects > 0 && v.connected,
          { deadlineMs: REMEDY_S * 1000, from: restartedAt, intervalMs: 500, signal },
        );
        log(`after the documented restart: ${JSON.stringify(back.last)} at ${Math.round(back.ms / 100) / 10} s (surface requests approved: ${approvedSurface.length})`);
        evidence.remedy = { held: back.held, ms: back.ms, last: back.last, surfaceRequestsApproved: approvedSurface };
        observe("remedy", { held: back.held, last: { connects: back.last.connects, connected: back.last.connected } }); // R-82590-remedy
      }
    });
  },
});

interface Refused {
  /** The tap seq and clock time this wait counted from. */
  since: number;
  sinceMs: number;
  /** Detail codes of the connects the gateway refused since then. */
  refusals: string[];
  refusedAt: number;
  /** "reconnect paused" lines the node logged since then. */
  paused: PausedLine[];
  /** The node's pending device request, when there is one. */
  request?: { requestId: string; deviceId: string };
}

/**
 * Wait (REFUSED_S) until the node is refused with PAIRING_REQUIRED and has a pending device
 * request, or has paused without one (the caller then restarts it once).
 */
async function waitRefused(lab: Lab, alias: string, nodeId: string, since: number, sinceMs: number, signal: AbortSignal): Promise<Refused> {
  let last: Refused | undefined;
  return waitFor(
    `${alias} to be refused with PAIRING_REQUIRED (with a pending device request) or to pause without one`,
    async () => {
      const frames = await labStep("read the tap's frames", () => lab.tap(alias).frames({ since }));
      const refusedFrames = frames.filter((f) => isConnectReply(f) && f.ok === false);
      const paused = await pausedLines(lab, alias, sinceMs);
      const pending = (await op.listDevicePairing(lab.operator.client)).pending.find((p) => p.deviceId === nodeId || p.displayName === alias);
      last = {
        since,
        sinceMs,
        refusals: refusedFrames.map((f) => f.errorDetailsCode ?? f.errorCode ?? "?"),
        refusedAt: Math.round(refusedFrames.find((f) => f.errorDetailsCode === "PAIRING_REQUIRED")?.t ?? refusedFrames.at(-1)?.t ?? Date.now()),
        paused,
        ...(pending ? { request: { requestId: pending.requestId, deviceId: pending.deviceId } } : {}),
      };
      if (last.request && last.refusals.includes("PAIRING_REQUIRED")) return last;
      if (!last.request && paused.some((p) => p.detail !== "PAIRING_REQUIRED")) return { ...last, request: undefined };
      return undefined;
    },
    { timeoutMs: REFUSED_S * 1000, intervalMs: 300, signal, lastState: () => `last seen: ${JSON.stringify(last)}` },
  ).catch((err: unknown) => {
    if (signal.aborted) throw err;
    throw new LabInfraError(`could not bring ${alias} to the reported state (refused with PAIRING_REQUIRED, a pending device request) within ${REFUSED_S} s of removing its pairing: ${(err as Error).message}`, { cause: err });
  });
}

const isConnectReply = (f: Frame): boolean => f.path === "/" && f.dir === "gw->node" && f.type === "res" && f.replyTo === "connect";

interface PausedLine {
  at: number;
  line: string;
  code: number;
  detail: string | null;
  action: string;
}

/** The node host's "reconnect paused" log lines since `sinceMs`, parsed. */
async function pausedLines(lab: Lab, alias: string, sinceMs: number): Promise<PausedLine[]> {
  const re = /reconnect paused after close \((\d+)\):.*?(?: detail=([A-Z_]+))?; (waiting for operator action|exiting for supervisor restart)/;
  return (await memberLog(lab, alias, sinceMs)).flatMap(({ at, line }) => {
    const m = re.exec(line);
    return m ? [{ at, line: line.slice(0, 400), code: Number(m[1]), detail: m[2] ?? null, action: m[3]! }] : [];
  });
}


