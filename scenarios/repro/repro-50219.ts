// Upstream: openclaw/openclaw#50219 "Node host WebSocket retry gets stuck after Cloudflare 502
// errors" (open; opened 2026-03-19 by pmgreenjr; no fix PR found).
// Reported on: OpenClaw 2026.3.13; node host on macOS (launchd KeepAlive), gateway on a Linux
// VPS behind a Cloudflare tunnel (WSS).
// Reporter's steps: the tunnel in front of the gateway answers the node host's WebSocket
// upgrades with HTTP 502 for a while, then recovers. Symptom: hundreds of consecutive
// "node host gateway connect failed: Unexpected server response: 502" / "node host gateway
// closed (1006):" lines; the node process stays alive and keeps retrying, but it never
// connects again until `openclaw node restart`.
// What the user should see (what this scenario asserts): once the proxy stops answering 502,
// the node host reconnects on its own, as the same node (same nodeId, approved, no pairing
// request), within RECONNECT_BOUND_S of the heal (R-50219-reconnects). 2026.9.6's client backs
// off 1 s -> 30 s (x2, no jitter), so one full back-off step plus slack is the bound.
// Fix: none known (the issue is open). 2026.9.6 reads the refused upgrade's status and body
// (client-*.mjs, "gateway rejected websocket upgrade (HTTP 502)", retryable UNAVAILABLE) and
// retries with back-off; it exits only after three 403 proxy_attribution_required refusals.
// Outcome: not reproduced on 2026.9.6 (runs 20261130-123136-6ea8, 20261130-124318-d3c0, pass):
// five upgrades refused 502 ("gateway rejected websocket upgrade (HTTP 502)" in the node's
// log), attempts spaced 1, 2, 4, 8, 16 s; after the heal the node's next attempt, 30 s later
// (the cap), connected, same nodeId, no pairing request.
// Premise (proven, else the verdict is unknown): P-50219-upgrades-refused: the node's own
// upgrades were answered 502 by the tap (its HTTP exchanges, at least REFUSALS of them) before the
// heal; without that a reconnect proves nothing about #50219. Self-test (make repro
// NAME=repro-50219 N=1 AIM_OFF=1): the 502 rule on AIM_OFF_PATH instead of "/", so no upgrade is
// refused and the verdict must be unknown.
// How this lab reproduces it (own lab: gateway, one node host, its tap; no MCP, no git):
//   - fault 1: faults.wire.respond 502 on tap-node-1 for HTTP requests on "/" (the node's
//     control WebSocket upgrade): the tap answers each upgrade itself with "502 Bad Gateway",
//     as a tunnel whose origin is down would, and the gateway never sees it;
//   - fault 2, the trigger: faults.wire.close 1006 on the node's open control connection at the
//     next node.invoke the gateway sends it (the operator's system.which), so the node has to
//     reconnect into the 502s;
//   - the 502s go on until the node has been refused REFUSALS times (the tap counts the rule's
//     hits; with the back-off that is ~31 s and the next delay is the 30 s cap), then the rule is
//     removed (heal) and node.list is polled for the node connected again.
//   Recorded: how many upgrades were refused, the spacing of the node's attempts (tap HTTP
//   exchanges), the node's own log lines, and when it connected after the heal.
import { memberLogLines } from "../../lab/kits/logs.ts";
import crypto from "node:crypto";
import { faults } from "../../lab/faults/index.ts";
import { defineScenario, LabInfraError, type FindingRecord, labStep } from "../../lab/scenario.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { docker } from "../../lab/engine/docker.ts";
import { controlConn, controlEvents, waitReconnect } from "../../lab/kits/node-wire.ts";
import { nodeByAlias, nodeView, sameNode, waitConnected, type NodeView } from "../../lab/kits/nodes.ts";
import { refusal } from "../../lab/kits/session.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import type { Lab } from "../../lab/topology/lab.ts";
import type { HttpExchange } from "../../lab/clients/tap.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** Refused upgrades before the proxy recovers: back-off 1+2+4+8+16 s, the next delay is the 30 s cap. */
const REFUSALS = 5;
/** How long the node may take to be refused REFUSALS times (its back-off says ~31 s). */
const REFUSALS_BOUND_S = 75;
/** After the heal: one capped back-off step (30 s) plus slack. */
const RECONNECT_BOUND_S = 45;
/** Under --aim-off the 502 rule waits on a path no member asks for. */
const AIM_OFF_PATH = "/fleetlab-aimed-off";

// Not reproduced on 2026.9.6 so far: no finding registered.
const findings: FindingRecord[] = [];

/** What the body observed (JSON, for the history); the premise and the check below judge it. */
export interface Observed {
  /**
   * The 502s: whether the rule was hit REFUSALS times within REFUSALS_BOUND_S of the close and its
   * hit count then, the rule's id, when the close rule fired (the trigger, epoch ms), and the
   * tap's HTTP exchanges on the node's side since before the cut.
   */
  refusals?: { held: boolean; ruleHits: number; ruleId: string; firedAt: number; http: Pick<HttpExchange, "t" | "path" | "status" | "rule">[] };
  /** After the heal: whether node.list showed the node connected within RECONNECT_BOUND_S, and the node before the cut and after. */
  reconnect?: { held: boolean; connected: boolean; before: NodeView; after: NodeView };
}

/** The node's upgrades the 502 rule answered, in time order. */
const rejectedIn = <X extends Pick<HttpExchange, "t" | "path" | "rule">>(http: X[], ruleId: string): X[] => http.filter((h) => h.path === "/" && h.rule === ruleId).sort((a, b) => a.t - b.t);

/** The spacing of the node's attempts (s): from the close to the first refused upgrade, then between refused upgrades. */
const spacingOf = (r: NonNullable<Observed["refusals"]>): number[] => {
  const times = [r.firedAt, ...rejectedIn(r.http, r.ruleId).map((h) => h.t)];
  return times.slice(1).map((t, i) => Math.round((t - times[i]!) / 1000));
};

export default defineScenario<Observed>({
  name: "repro-50219",
  upstream: {
    issue: 50219,
    title: "Node host WebSocket retry gets stuck after Cloudflare 502 errors",
    status: "open",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/50219",
  },
  proves: "openclaw#50219: a node host whose reconnects are answered HTTP 502 by the proxy in front of the gateway connects again on its own, as the same node, once the proxy recovers",
  topology: "own",
  spec: { nodes: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  needs: [{ method: "node.invoke", why: "the connection is cut at a node.invoke the operator sends" }],
  findings,
  premises: [
    {
      id: "P-50219-upgrades-refused",
      what: `the node's reconnects reached the tap and ${REFUSALS} of its upgrades were answered 502 by the tap's rule before the heal`,
      aimOff: `the 502 rule on ${AIM_OFF_PATH} instead of /`,
      // The fault acted where it matters: the node's own upgrades were answered 502 (the tap's
      // exchanges, not the rule's counter alone), as many times as the back-off needs.
      judge: (h) => {
        if (!h.refusals) return undefined;
        const rejected = rejectedIn(h.refusals.http, h.refusals.ruleId);
        return {
          met: h.refusals.held && rejected.length >= REFUSALS && rejected.every((x) => x.status === 502),
          observed: { refusedUpgrades: rejected.length, statuses: [...new Set(rejected.map((x) => x.status))], ruleHits: h.refusals.ruleHits, within_s: REFUSALS_BOUND_S },
        };
      },
    },
  ],
  checks: [
    {
      id: "R-50219-reconnects",
      expectation: `after its reconnects were answered HTTP 502 by the proxy, the node connects again on its own within ${RECONNECT_BOUND_S} s of the proxy recovering, as the same node (same nodeId, approved, no pairing request)`,
      judge: (h) => {
        if (!h.refusals || !h.reconnect) return undefined;
        const same = sameNode(h.reconnect.before, h.reconnect.after);
        return {
          holds: h.reconnect.held && same.holds,
          observed: normalise({
            within_s: RECONNECT_BOUND_S,
            refusedUpgrades: h.refusals.ruleHits,
            attemptSpacing_s: spacingOf(h.refusals),
            connected: h.reconnect.connected,
            ...same.observed,
          }),
        };
      },
    },
  ],
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    await nodeScene(ctx, {}, async ({ alias, tap, evidence, tl }) => {
      await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const before = await nodeView(lab, alias);
      evidence.before = before;
      const since = await tap.seq();
      const conn = await controlConn(tap);

      const aimed = aimOff ? AIM_OFF_PATH : "/";
      const bad = faults.wire.respond({ lab, node: alias }, 502, { path: aimed }, { timeline: tl, label: `${alias}: upgrades on ${aimed} answered 502 by the tap` });
      await labStep("adding the 502 rule", () => bad.inject());
      const cut = faults.wire.close({ lab, node: alias }, 1006, {
        match: { path: "/", dir: "gw->node", command: "system.which" },
        once: true,
        timeline: tl,
        label: `${alias} control connection at node.invoke system.which`,
      });
      await labStep("adding the close rule", () => cut.inject());
      const invoke = lab.operator.client
        .request("node.invoke", { nodeId: before.nodeId, command: "system.which", params: { bins: ["git"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 20_000 })
        .then(
          () => ({ ok: true }),
          (err: unknown) => refusal(err),
        );
      const fired = await cut.fired(15_000).catch((err: Error) => {
        throw new LabInfraError(`the close rule never fired at the node.invoke: ${err.message}`);
      });
      const closedAt = Date.now();
      log(`${alias}: control connection ${conn} aborted (1006) at frame #${fired.seq}; its upgrades on / now get 502`);

      // The node's reconnects run into the 502s: count the tap's refusals.
      const refused = await pollUntil(
        `${REFUSALS} upgrades of ${alias} refused 502`,
        async () => (await tap.rule(bad.ruleId))?.hits ?? 0,
        (hits) => hits >= REFUSALS,
        { deadlineMs: REFUSALS_BOUND_S * 1000, from: closedAt, intervalMs: 100, signal },
      );
      const healStart = Date.now();
      const sinceHeal = await tap.seq();
      await labStep("removing the 502 rule", () => bad.heal());
      const healedAt = Date.now();
      await cut.heal();
      log(`${refused.last} upgrade(s) refused 502 in ${refused.ms} ms after the close; rule removed (${healedAt - healStart} ms)`);

      // The node must come back on its own.
      const back = await pollUntil(
        `${alias} connected again after the 502s stop`,
        async () => (await nodeByAlias(lab, alias)).connected,
        (connected) => connected,
        { deadlineMs: RECONNECT_BOUND_S * 1000, from: healedAt, intervalMs: 200, signal },
      );
      const upgraded = back.held ? await waitReconnect(tap, sinceHeal, 10_000).catch(() => undefined) : undefined;
      const after = await nodeView(lab, alias);

      // What the node was told and how it spaced its attempts (the tap's HTTP exchanges).
      const http = await tap.http({ since });
      // P-50219-upgrades-refused reads them.
      const refusals = { held: refused.held, ruleHits: refused.last, ruleId: bad.ruleId, firedAt: fired.t, http: http.map(({ t, path, status, rule }) => ({ t, path, status, rule })) };
      observe("refusals", refusals);
      const rejected = rejectedIn(http, bad.ruleId);
      const spacing_s = spacingOf(refusals);
      const afterHeal = http.filter((h) => h.path === "/" && h.t >= healedAt).map((h) => ({ status: h.status, s: Math.round((h.t - healedAt) / 100) / 10 }));
      const nodeLog = await memberLogLines(lab, alias, closedAt - 1_000).catch((e: Error) => [`(node log unreadable: ${e.message})`]);
      const gatewayLines = nodeLog.filter((l) => /node host gateway (connect failed|closed|connected|reconnect paused|permanently)/.test(l));
      log(`refusals ${rejected.length} (statuses ${JSON.stringify(rejected.map((h) => h.status))}), attempt spacing ${JSON.stringify(spacing_s)} s; after the heal: ${JSON.stringify(afterHeal)}; node.list connected ${back.held ? `${back.ms} ms after the heal` : `false at the ${RECONNECT_BOUND_S} s bound`}`);
      log(`node log:\n  ${gatewayLines.join("\n  ")}`);

      // R-50219-reconnects reads it.
      observe("reconnect", { held: back.held, connected: back.last, before, after });

      Object.assign(evidence, {
        conn,
        fired,
        invoke: await invoke,
        refusals: { hits: refused.last, msAfterClose: refused.ms, exchanges: rejected, spacing_s },
        heal: { at: healedAt, exchangesAfter: afterHeal, connectedMsAfterHeal: back.held ? back.ms : null, upgrade: upgraded ?? null },
        after,
        nodeLog: gatewayLines,
        tap: await controlEvents(tap, since),
      });
    });
  },
});


