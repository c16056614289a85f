// Upstream: openclaw/openclaw PR #115539 "fix(gateway): reconnect nodes after transient socket
// failures" (merged; described 2026-07-29 by steipete; no linked issue), as a regression target.
// Reported on: no release named (source tree of late July 2026; first release carrying the fix
// inferred 2026.8.1, not pinned).
// The PR's case: "a Gateway node that encounters a transient failure while creating its
// WebSocket can remain alive but disconnected forever because the foreground node starts its
// client only once." Symptom: the node host process runs, but never connects (node.list shows
// it disconnected until someone restarts it). Fix: retryable socket-construction failures go
// through the existing reconnect supervisor (client-*.mjs in 2026.9.6: connect() catches a
// createSocket throw and, when shouldRetrySocketFactoryError says so, schedules a reconnect).
// What the user should see (what this scenario asserts): a node host whose first connect after
// its process starts fails connects on its own once the gateway address answers again, within
// RECONNECT_BOUND_S, as the same node (same nodeId, approved, no new pairing request)
// (R-115539-reconnects).
// How this differs from the PR's case: the PR fixes a *synchronous* throw from the socket
// constructor (createSocket / new WebSocket: transport set-up, proxy policy), which before the
// fix bypassed the reconnect path entirely. The lab cannot make the pinned node's constructor
// throw from outside. What it can do is make the node's first connect after process start
// fail *asynchronously*: its gateway address (tap-node-1) is a stopped container, so the
// name does not resolve (getaddrinfo fails inside ws, after the constructor returned) and the
// failure arrives as a socket error/close, which takes the ordinary close -> back-off path.
// So this guards "the node starts its client only once" for a failed first connect, not the
// constructor-throw branch itself.
// Outcome: not reproduced on 2026.9.6 (runs 20261130-123449-a8e0, 20261130-123758-f206, pass):
// the restarted node's first connect failed (getaddrinfo EAI_AGAIN tap-node-1), it retried
// (1 s, 2 s back-off; three failures before the heal in the second run) and connected within
// ~4 s of the tap running again, same nodeId, no new pairing request.
// How this lab reproduces it (own lab: gateway, one node host, its tap; no MCP, no git):
//   - fault 1: faults.stop on tap-node-1 (the node's gateway address) while node-1 is connected;
//   - fault 2: faults.restart on node-1 while its tap is down, so the new node process's first
//     connect fails (proved from the node's own log since its start: a "node host gateway
//     connect failed" line and no "connected" line before it), and the tap stays down until
//     the node has failed FAILS_BEFORE_HEAL times (it keeps retrying, not once);
//   - heal: the tap is started again (same container); node.list is polled for node-1
//     connected, and the pairing lists for a new request.
// The body drives and observes (ctx.observe); the check below judges what it observed.
import { memberLogLines } from "../../lab/kits/logs.ts";
import { faults } from "../../lab/faults/index.ts";
import { defineScenario, LabInfraError, type CheckDef, type FindingRecord, labStep } from "../../lab/scenario.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { containerState } from "../../lab/kits/container.ts";
import { nodeByAlias, nodeView, sameNode, waitConnected, type NodeView } from "../../lab/kits/nodes.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import type { Lab } from "../../lab/topology/lab.ts";
import { tapAlias } from "../../lab/definitions/spec.ts";
import { pollUntil, waitFor } from "../../lab/core/wait.ts";

/** After the tap is back: the node's back-off is at most 30 s, so 60 s is generous. */
const RECONNECT_BOUND_S = 60;
/** Failed connects since the node's start before its address comes back (first try + two retries). */
const FAILS_BEFORE_HEAL = 3;
/** Its back-off (1 s, 2 s) plus a 1 s DNS time-out each says ~6 s; a node that stops trying shows fewer. */
const FAILS_BOUND_S = 30;
const CONNECT_FAILED = "node host gateway connect failed";
const CONNECTED = "node host gateway connected";

// Not reproduced on 2026.9.6 so far: no finding registered.
const findings: FindingRecord[] = [];

export interface Observed {
  /**
   * The node's first connect after its start (its log line; failed, or the container exited), its
   * failed connects before the heal, node.list's connected at the bound (or when it showed the
   * node connected), and the node before the faults and after.
   */
  reconnect?: { first: { line: string; failed: boolean; exited?: boolean }; failedBeforeHeal: number; connected: boolean; before: NodeView; after: NodeView };
}

const checks: CheckDef<Observed>[] = [
  {
    id: "R-115539-reconnects",
    expectation: `a node host whose first connect after its start failed (gateway address down) connects within ${RECONNECT_BOUND_S} s of the address answering again, as the same node (same nodeId, approved, no new pairing request)`,
    judge: (h) => {
      if (!h.reconnect) return undefined;
      const { first, failedBeforeHeal, connected, before, after } = h.reconnect;
      const same = sameNode(before, after);
      return {
        holds: connected && same.holds,
        observed: normalise({ within_s: RECONNECT_BOUND_S, firstConnectFailed: first.failed, nodeExited: first.exited === true, failedConnectsBeforeHeal: failedBeforeHeal, connected, ...same.observed }),
      };
    },
  },
];

export default defineScenario<Observed>({
  name: "repro-115539",
  upstream: {
    issue: 115539,
    kind: "pr",
    title: "fix(gateway): reconnect nodes after transient socket failures",
    status: "fixed",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/115539",
  },
  proves: "openclaw PR #115539 (regression): a node host whose first connect after process start fails (its gateway address is down) connects on its own once the address answers again, as the same node, without a new pairing request",
  topology: "own",
  spec: { nodes: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  checks,
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    await nodeScene(ctx, {}, async ({ alias, evidence, tl }) => {
      const tapName = tapAlias(alias);
      evidence.tap = tapName;
      await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const before = await nodeView(lab, alias);
      evidence.before = before;

      // 1. The node's gateway address goes away.
      const tapDown = faults.stop(lab, tapName, { timeoutSeconds: 5, timeline: tl });
      evidence.tapStopped = await labStep(`stopping ${tapName}`, () => tapDown.inject());
      const gone = await pollUntil("node.list shows the node disconnected", async () => (await nodeByAlias(lab, alias)).connected, (c) => !c, { deadlineMs: 90_000, intervalMs: 250, signal });
      log(`${tapName} stopped; node.list ${gone.held ? `disconnected ${gone.ms} ms later` : "still connected after 90 s"}`);

      // 2. The node host process starts again while its gateway address is down.
      const restart = faults.restart(lab, alias, { timeoutSeconds: 10, timeline: tl });
      evidence.nodeRestarted = await labStep(`restarting ${alias}`, () => restart.inject());
      const startedAt = await labStep(`reading ${alias}'s start time`, async () => {
        const t = (await containerState(lab, alias)).startedAt;
        if (t === undefined) throw new Error(`${alias}'s container has no start time`);
        return t;
      });
      // Its first connect must fail (the lab's precondition): seen in its own log since it started.
      const first = await waitFor(
        `${alias}'s first connect after its start to fail (its log)`,
        async () => {
          const lines = await memberLogLines(lab, alias, startedAt);
          const i = lines.findIndex((l) => l.includes(CONNECT_FAILED) || l.includes(CONNECTED));
          if (i >= 0) return { line: lines[i]!, failed: lines[i]!.includes(CONNECT_FAILED) };
          const st = await containerState(lab, alias);
          return st.running ? undefined : { line: `(container exited ${st.exitCode}) ${lines.slice(-5).join(" | ")}`, failed: false, exited: true };
        },
        { timeoutMs: 30_000, intervalMs: 250, signal },
      ).catch(async (err: Error) => {
        const tail = (await memberLogLines(lab, alias, startedAt).catch(() => [])).slice(-15).join("\n  ");
        throw new LabInfraError(`${alias}'s first connect after its start was not seen in its log: ${err.message}; log since start:\n  ${tail}`);
      });
      if (!first.failed && !("exited" in first)) throw new LabInfraError(`${alias} connected after its start although ${tapName} was stopped: ${first.line}`);
      // It must keep trying while the address is down, not try once: hold the tap down until
      // FAILS_BEFORE_HEAL failed connects since the start (back-off 1 s, 2 s), or the bound.
      const failing = await pollUntil(
        `${FAILS_BEFORE_HEAL} failed connects of ${alias} since its start`,
        async () => (await memberLogLines(lab, alias, startedAt)).filter((l) => l.includes(CONNECT_FAILED)).length,
        (n) => n >= FAILS_BEFORE_HEAL,
        { deadlineMs: FAILS_BOUND_S * 1000, intervalMs: 250, signal },
      );
      const whileDown = await nodeByAlias(lab, alias);
      log(`${alias} started again at ${new Date(startedAt).toISOString()}; first connect: ${first.line}; ${failing.last} failed connect(s) ${failing.ms} ms later; node.list connected=${whileDown.connected}`);

      // 3. The address answers again.
      const healStart = Date.now();
      evidence.tapStarted = await labStep(`starting ${tapName} again`, () => tapDown.heal());
      const healedAt = Date.now();
      const back = await pollUntil(
        `${alias} connected again`,
        async () => (await nodeByAlias(lab, alias)).connected,
        (c) => c,
        { deadlineMs: RECONNECT_BOUND_S * 1000, from: healedAt, intervalMs: 250, signal },
      );
      const after = await nodeView(lab, alias);
      const lines = await memberLogLines(lab, alias, startedAt).catch((e: Error) => [`(node log unreadable: ${e.message})`]);
      const connLines = lines.filter((l) => /node host gateway (connect failed|closed|connected|reconnect paused|permanently)/.test(l));
      const failures = connLines.filter((l) => l.includes(CONNECT_FAILED));
      log(`${tapName} running again (${healedAt - healStart} ms); node.list connected ${back.held ? `${back.ms} ms after that` : `false at the ${RECONNECT_BOUND_S} s bound`}; ${failures.length} failed connect(s) since the node's start`);
      log(`node log since its start:\n  ${connLines.join("\n  ")}`);

      observe("reconnect", { first, failedBeforeHeal: failing.last, connected: back.last, before, after });

      Object.assign(evidence, {
        gatewaySawDisconnect: { held: gone.held, ms: gone.ms },
        nodeStartedAt: new Date(startedAt).toISOString(),
        firstConnect: first,
        failedBeforeHeal: { count: failing.last, msAfterStart: failing.ms },
        nodeListWhileDown: whileDown,
        healedAt: new Date(healedAt).toISOString(),
        connectedMsAfterHeal: back.held ? back.ms : null,
        after,
        nodeLog: connLines,
      });
    });
  },
});


