import { faults } from "../lab/faults/index.ts";
import { tapAlias } from "../lab/definitions/spec.ts";
import { defineScenario } from "../lab/scenario.ts";
import { injectBeforeKeepalive } from "../lab/kits/keepalive.ts";
import { controlConn, controlEvents, waitReconnect } from "../lab/kits/node-wire.ts";
import { bundleSeen, keptBundle, nodeView, sameNode, waitBundleInstalled, waitConnected, waitForWorkerHost, type BundleSeen, type NodeView } from "../lab/kits/nodes.ts";
import { nodeScene } from "../lab/kits/scene.ts";
import { provenWorkerTurn, turnOnNode, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";

// A network partition (iptables DROP both ways) between a node's wire tap and the gateway:
// every packet of the node's connection is lost on the way, but the sockets stay open, so
// nobody is told. The partition starts just before the gateway's keepalive ping to that
// node and lasts exactly until the gateway marks the node disconnected (it needs one
// unanswered ping: 25-50 s then); then it is healed. The node must reconnect by itself, as
// the same approved node, and a worker turn on it must complete.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): the wait for the
// gateway to notice (NOTICE_WITHIN_MS plus 20 s; it also bounds how long the partition holds) and
// the 120 s for the node to reconnect after the heal.
const NOTICE_WITHIN_MS = 80_000;

// The body drives and observes (ctx.observe); the checks below judge what it observed.
export type Observed = {
  /** The dispatch of the session to the node (the rest needs an active placement: the body stops there otherwise). */
  dispatch?: DispatchSeen;
  /** The wait for node.list to show the node disconnected (how long, or why it ended), and the time from the partition to the end of that wait. */
  noticed?: { down: { ms: number } | { error: string }; noticedMs: number };
  /** The node's control connection before the partition, its next connect after the heal (or why none came), and its view before and after. */
  reconnect?: { conn: string; back: { conn: string } | { error: string }; before: NodeView; after: NodeView };
  /** The worker turn after the heal: what the proof that it ran on the node read. */
  turn?: TurnSeen;
  /** The node's bundle directories before the partition and its bundle after the turn. */
  bundle?: { before: NodeView["bundles"]; now: BundleSeen };
};

export default defineScenario<Observed>({
  name: "partition-heal",
  proves: "a node partitioned from the gateway is marked disconnected once the keepalive fails, reconnects on its own after the partition heals as the same approved node, and its next worker turn completes on it",
  topology: "shared",
  timeoutMs: 300_000,
  checks: [
    dispatchedCheck<Observed>("R-partition-dispatch", (h) => h.dispatch),
    {
      id: "R-partition-noticed",
      expectation: `the gateway marks a partitioned node disconnected within ${NOTICE_WITHIN_MS / 1000} s (one failed keepalive)`,
      judge: (h) =>
        h.noticed && {
          holds: !("error" in h.noticed.down) && h.noticed.noticedMs <= NOTICE_WITHIN_MS,
          observed: "error" in h.noticed.down ? { noticed: false } : { noticed: true, withinBound: h.noticed.noticedMs <= NOTICE_WITHIN_MS },
        },
    },
    {
      id: "R-partition-reconnect",
      expectation: "after the partition heals the node reconnects by itself with the same nodeId, stays approved, raises no pairing request and keeps its bundle directory",
      judge: (h) => {
        if (!h.reconnect) return undefined;
        const { conn, back, before, after } = h.reconnect;
        const same = sameNode(before, after);
        return { holds: !("error" in back) && back.conn !== conn && same.holds, observed: { reconnected: !("error" in back), ...same.observed } };
      },
    },
    { id: "R-partition-turn", expectation: "a worker turn on the node after the partition heals completes, on the node (it reads a node-only file; worker.launch.v1 on the node's tap)", judge: (h) => h.turn && turnOnNode(h.turn) },
    {
      id: "R-partition-bundle",
      expectation: "after the partition and the next turn, node.list says the worker bundle is installed and it is the same bundle directory (not reinstalled)",
      judge: (h) => h.bundle && keptBundle({ bundles: h.bundle.before }, h.bundle.now),
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    await nodeScene(ctx, { node: 1 }, async ({ alias, tap, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("partition") });
      const session = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, session.key, alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-partition-dispatch")) return;
      await waitBundleInstalled(lab, alias, { signal });
      const before = await nodeView(lab, alias);
      log(`${alias} before: ${JSON.stringify(before)}`);
      evidence.before = before;

      const since = await tap.seq();
      const conn = await controlConn(tap);
      const partition = faults.partition(lab, tapAlias(alias), lab.spec.gateway.alias, { timeline: tl });
      const phase = await injectBeforeKeepalive(partition, tap, { signal });
      const inEffectAt = Date.now();
      log(`partition ${tapAlias(alias)} <-> ${lab.spec.gateway.alias} in effect ${Math.round(phase.pingAt - phase.injectedAt)} ms before the keepalive ping (waited ${Math.round(phase.waitedMs)} ms for it)`);
      // expectation: a time-out is "not noticed" against NOTICE_WITHIN_MS (R-partition-noticed); it also bounds how long the partition holds
      const down = await waitConnected(lab, alias, false, { timeoutMs: NOTICE_WITHIN_MS + 20_000, signal, expectation: true }).then(
        (x) => ({ ms: x.ms }),
        (err: Error) => ({ error: err.message }),
      );
      const noticedMs = Date.now() - phase.injectedAt;
      const healed = await partition.heal();
      const healedAt = Date.now();
      const heldMs = healedAt - Math.round(healed.totalMs) - inEffectAt;
      log(`gateway marked ${alias} disconnected ${noticedMs} ms after the partition (${JSON.stringify(down)}); partition held ${heldMs} ms; healed in ${Math.round(healed.totalMs)} ms`);
      observe("noticed", { down, noticedMs });

      // expectation: a time-out is "not reconnected" in R-partition-reconnect: the 120 s window is fixed, not paced
      const back = await waitReconnect(tap, since, 120_000, { expectation: true }).catch((err: Error) => ({ error: err.message }));
      const reconnectMs = "error" in back ? null : Math.round(back.t - healedAt);
      log(`after the heal: ${"error" in back ? back.error : `the node connected again on ${back.conn} ${reconnectMs} ms later`}`);
      await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      const after = await nodeView(lab, alias);
      observe("reconnect", { conn, back: "error" in back ? { error: back.error } : { conn: back.conn }, before, after });
      const turn = await provenWorkerTurn(lab, session.key, alias, { note: "after the partition healed" });
      log(`turn after the heal: ${JSON.stringify({ text: turn.text, error: turn.error, ms: turn.ms, proof: turn.observed })}`);
      observe("turn", turn.seen);
      const bundle = await bundleSeen(lab, alias);
      observe("bundle", { before: before.bundles, now: bundle });
      Object.assign(evidence, {
        conn,
        keepalive: phase,
        gatewayNoticedMs: noticedMs,
        down,
        partitionHeldMs: heldMs,
        heal: healed,
        reconnect: back,
        reconnectAfterHealMs: reconnectMs,
        after,
        turn,
        bundleAfterTurn: bundle,
        tap: await controlEvents(tap, since),
      });
    });
  },
});
