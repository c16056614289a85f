import crypto from "node:crypto";
import { faults } from "../lab/faults/index.ts";
import { defineScenario } from "../lab/scenario.ts";
import { injectBeforeKeepalive } from "../lab/kits/keepalive.ts";
import { controlConn, controlEvents, waitReconnect } from "../lab/kits/node-wire.ts";
import { bundleSeen, keptBundle, nodeView, sameNode, waitBundleInstalled, waitConnected, waitForWorkerHost, type BundleSeen, type NodeView } from "../lab/kits/nodes.ts";
import { provenWorkerTurn, turnOnNode, type TurnSeen } from "../lab/kits/proof.ts";
import { nodeScene } from "../lab/kits/scene.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";

// A node host's control connection is cut twice and restored:
//   1. wire: the tap aborts the connection (1006, no close frame) at the moment the gateway
//      sends the node a node.invoke (system.which) — an exact protocol point;
//   2. network: the node container is disconnected from the lab network just before the
//      gateway's keepalive ping, kept off until the gateway drops the node, then reconnected.
// Each time the node must come back as the same node (same nodeId, still approved, no new
// pairing request, same installed bundle directory) and the next worker turn on it completes.
// (A network blip shorter than the gateway's keepalive cuts nothing: the TCP connection
// survives it and neither side notices; measured, see the notes in lab/kits/keepalive.ts.)
// Premise P-reconnect-one-bundle: before the cuts the node has exactly one installed bundle
// directory on its disk (what "the same bundle directory" after each cut is compared against;
// none, or several left by earlier work on the shared lab, and the lab cannot tell).
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** One cut as observed: the node before and after it, the connections, the next turn, the bundle after that turn. */
interface Cut {
  before: NodeView;
  after: NodeView;
  /** The node's control connection before the cut and the one it came back on (tap connection ids). */
  conn: string;
  reconnectedOn: string;
  turn?: TurnSeen;
  bundle?: BundleSeen;
}
export interface Observed {
  /** The dispatch of the session the turns run in (the rest needs an active placement: the body stops there otherwise). */
  dispatch?: DispatchSeen;
  /** How many installed bundle directories the node had before the cuts (P-reconnect-one-bundle). */
  bundlesBefore?: number;
  wire?: Cut;
  network?: Cut;
}

const sameNodeAfter = (c: Cut) => {
  const n = sameNode(c.before, c.after);
  return { holds: n.holds && c.reconnectedOn !== c.conn, observed: { ...n.observed, newConnection: c.reconnectedOn !== c.conn } };
};

export default defineScenario<Observed>({
  name: "reconnect",
  proves: "a node whose connection is cut (wire close 1006; network disconnect until the gateway drops it) comes back as the same approved node without re-pairing, keeps its installed bundle, and its next worker turn completes on it",
  topology: "shared",
  timeoutMs: 300_000,
  premises: [
    {
      id: "P-reconnect-one-bundle",
      what: "before the cuts the node has exactly one installed bundle directory, the one each cut's same-bundle check compares against",
      judge: (h) => (h.bundlesBefore === undefined ? undefined : { met: h.bundlesBefore === 1, observed: { bundles: h.bundlesBefore } }),
    },
  ],
  checks: [
    dispatchedCheck<Observed>("R-reconnect-dispatch", (h) => h.dispatch),
    {
      id: "R-reconnect-wire-same-node",
      expectation: "after its connection is aborted at the tap (1006), the node reconnects with the same nodeId, stays approved, raises no pairing request and keeps its installed bundle directory",
      judge: (h) => h.wire && sameNodeAfter(h.wire),
    },
    { id: "R-reconnect-wire-turn", expectation: "the next worker turn on the node after the wire close completes, on the node (it reads a node-only file; worker.launch.v1 on the node's tap)", judge: (h) => h.wire?.turn && turnOnNode(h.wire.turn) },
    {
      id: "R-reconnect-wire-bundle",
      expectation: "after the wire close and the next turn, node.list says the worker bundle is installed and it is the same bundle directory (not reinstalled)",
      judge: (h) => h.wire?.bundle && keptBundle(h.wire.before, h.wire.bundle),
    },
    {
      id: "R-reconnect-network-same-node",
      expectation: "after a network disconnect long enough for the gateway to drop it, the node reconnects with the same nodeId, stays approved, raises no pairing request and keeps its installed bundle directory",
      judge: (h) => h.network && sameNodeAfter(h.network),
    },
    {
      id: "R-reconnect-network-turn",
      expectation: "the next worker turn on the node after the network disconnect completes, on the node (it reads a node-only file; worker.launch.v1 on the node's tap)",
      judge: (h) => h.network?.turn && turnOnNode(h.network.turn),
    },
    {
      id: "R-reconnect-network-bundle",
      expectation: "after the network disconnect and the next turn, node.list says the worker bundle is installed and it is the same bundle directory (not reinstalled)",
      judge: (h) => h.network?.bundle && keptBundle(h.network.before, h.network.bundle),
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    await nodeScene(ctx, {}, async ({ alias, tap, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("reconnect") });
      const session = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, session.key, alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-reconnect-dispatch")) return;
      await waitBundleInstalled(lab, alias, { signal });
      const before = await nodeView(lab, alias);
      observe("bundlesBefore", before.bundles.length);
      if (!proceed("P-reconnect-one-bundle")) return;
      log(`${alias} before: ${JSON.stringify(before)}; session ${session.key} placed in ${d.ms} ms`);
      evidence.before = before;
      evidence.session = { key: session.key, placement: d.placement };

      // ---- 1. wire close at a node.invoke to the node
      const since1 = await tap.seq();
      const conn1 = await controlConn(tap);
      const cut = faults.wire.close({ lab, node: alias }, 1006, {
        match: { path: "/", dir: "gw->node", command: "system.which" },
        once: true,
        timeline: tl,
        label: `${alias} control connection at node.invoke system.which`,
      });
      await cut.inject();
      const invoke = lab.operator.client
        .request("node.invoke", { nodeId: before.nodeId, command: "system.which", params: { bins: ["git"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 20_000 })
        .then(
          (payload) => ({ ok: true, payload }),
          (err: Error) => ({ ok: false, error: err.message }),
        );
      const fired = await cut.fired(15_000);
      const back1 = await waitReconnect(tap, since1, 60_000);
      await cut.heal();
      const invokeResult = await invoke;
      await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      const afterWire = await nodeView(lab, alias);
      const wireReconnectMs = Math.round(back1.t - fired.t);
      log(`wire close 1006 on ${conn1} at frame #${fired.seq}; node connected again on ${back1.conn} ${wireReconnectMs} ms later; the invoke: ${JSON.stringify(invokeResult)}`);
      const wire: Cut = { before, after: afterWire, conn: conn1, reconnectedOn: back1.conn };
      observe("wire", wire);
      const t1 = await provenWorkerTurn(lab, session.key, alias, { note: "after the wire close" });
      log(`turn after the wire close: ${JSON.stringify({ text: t1.text, error: t1.error, ms: t1.ms, proof: t1.observed })}`);
      wire.turn = t1.seen;
      observe("wire", wire);
      wire.bundle = await bundleSeen(lab, alias);
      observe("wire", wire);
      evidence.wire = { conn: conn1, fired, reconnectedOn: back1.conn, reconnectMs: wireReconnectMs, invoke: invokeResult, after: afterWire, turn: t1, bundleAfterTurn: wire.bundle, tap: await controlEvents(tap, since1) };

      // ---- 2. network disconnect until the gateway drops the node, then reconnect
      const since2 = await tap.seq();
      const conn2 = await controlConn(tap);
      const disc = faults.disconnect(lab, alias, { timeline: tl });
      const phase = await injectBeforeKeepalive(disc, tap, { signal });
      log(`${alias} disconnected from the lab network ${Math.round(phase.pingAt - phase.injectedAt)} ms before the gateway's keepalive ping (waited ${Math.round(phase.waitedMs)} ms for it)`);
      const down = await waitConnected(lab, alias, false, { timeoutMs: 100_000, signal });
      const noticedMs = Date.now() - phase.injectedAt;
      const healed = await disc.heal();
      const healedAt = Date.now();
      const back2 = await waitReconnect(tap, since2, 90_000);
      await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      const afterNet = await nodeView(lab, alias);
      const netReconnectMs = Math.round(back2.t - healedAt);
      log(`gateway dropped ${alias} ${noticedMs} ms after the disconnect; network reconnected (${Math.round(healed.totalMs)} ms); the node connected again on ${back2.conn} ${netReconnectMs} ms later`);
      const network: Cut = { before, after: afterNet, conn: conn2, reconnectedOn: back2.conn };
      observe("network", network);
      const t2 = await provenWorkerTurn(lab, session.key, alias, { note: "after the network disconnect" });
      log(`turn after the network disconnect: ${JSON.stringify({ text: t2.text, error: t2.error, ms: t2.ms, proof: t2.observed })}`);
      network.turn = t2.seen;
      observe("network", network);
      network.bundle = await bundleSeen(lab, alias);
      observe("network", network);
      evidence.network = {
        conn: conn2,
        keepalive: phase,
        gatewayNoticedMs: noticedMs,
        nodeListDisconnectedAfterMs: down.ms,
        heal: healed,
        reconnectedOn: back2.conn,
        reconnectAfterHealMs: netReconnectMs,
        after: afterNet,
        turn: t2,
        bundleAfterTurn: network.bundle,
        tap: await controlEvents(tap, since2),
      };
    });
  },
});
