import { GatewayError } from "../lab/clients/gateway.ts";
import { sendChat, waitRun } from "../lab/clients/sessions.ts";
import { replyOf } from "../lab/kits/session.ts";
import { faults } from "../lab/faults/index.ts";
import { defineScenario } from "../lab/scenario.ts";
import { nodeByAlias, nodeView, waitConnected, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { nodeScene } from "../lab/kits/scene.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, type NodeMarker, type TurnProof, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, placementOf, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";

// Work for a node host that is down (SIGKILLed; its container and state volume kept):
//   - a new sessions.dispatch to it fails at once with a clear error (nothing is placed);
//   - a turn sent to a session already placed there is accepted, waits while the node is
//     down, and completes by itself once the node is started again on its state volume;
//   - the node, started again, comes back as the same node (same nodeId, no pairing request);
//   - the refused session can be dispatched to the node once it is back.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): WHILE_DOWN_MS, the
// window the queued run is read over while the node is down.
/** How long agent.wait reads the queued turn while the node is down (in the observed). */
const WHILE_DOWN_MS = 3_000;
const refusal = (nodeId: string) => ({ code: "INVALID_REQUEST", message: `device worker node is not connected: ${nodeId}; reconnect it before retrying` });

// The body drives and observes (ctx.observe); the checks below judge what it observed.
export type Observed = {
  /** The dispatch of the session the queued turn goes to, to the node while it is up (the rest needs an active placement: the body stops there otherwise). */
  dispatch?: DispatchSeen;
  /** The new dispatch to the down node: its answer or refusal, how long it took, the session's placement state afterwards (null: none), and the node's id. */
  refused?: { nodeId: string; result: { accepted: string } | { code: string; message: string }; ms: number; placement: string | null };
  /** The turn sent while the node was down: chat.send's status, agent.wait's over the window while down (and the window), its end after the node returned, what the proof that it ran on the node read. */
  queued?: { chatSend: string; whileDown: string; whileDown_ms: number; afterReturn: string; turn: TurnSeen };
  /** The node as node.list and the pairing lists showed it once it was a worker host again: whether it has the nodeId it had before the kill, and the pairing requests waiting for it. */
  back?: { sameNodeId: boolean; pendingDevice: number; pendingNode: number };
  /** The refused session dispatched again once the node was back: its state and time, or the error. */
  again?: { state: string; ms: number } | { error: string };
};

/** What proveTurnOnNode read, as a history keeps it: turnOnNode judges it again. */
function turnSeen(alias: string, marker: NodeMarker, reply: string | undefined, proof: TurnProof): TurnSeen {
  return { alias, marker: { nonce: marker.nonce, reply: marker.reply, ...(marker.environmentId ? { environmentId: marker.environmentId } : {}) }, reply: reply ?? null, launches: [...proof.evidence.launches] };
}

export default defineScenario<Observed>({
  name: "offline-dispatch",
  proves: "with a node down, a new dispatch to it is refused at once (INVALID_REQUEST 'device worker node is not connected') and a turn to a session already placed there waits and completes on the node after it returns",
  topology: "shared",
  timeoutMs: 240_000,
  checks: [
    dispatchedCheck<Observed>("R-offline-dispatch-placed", (h) => h.dispatch),
    {
      id: "R-offline-dispatch-refused",
      expectation: "a new dispatch to a node that is down fails at once (< 5 s) with a clear error and places nothing",
      judge: (h) => {
        if (!h.refused) return undefined;
        const { nodeId, result: r, ms, placement } = h.refused;
        return {
          holds: "code" in r && r.code === refusal(nodeId).code && r.message === refusal(nodeId).message && ms < 5_000 && placement !== "active",
          observed: { ...("code" in r ? { code: r.code, message: r.message.replace(nodeId, "<nodeId>") } : r), within5s: ms < 5_000, placement },
        };
      },
    },
    {
      id: "R-offline-dispatch-queued-turn",
      expectation: "a turn sent to a session placed on a down node is accepted, waits, and completes by itself after the node returns, on the node (it reads a node-only file; worker.launch.v1 on the node's tap)",
      judge: (h) => {
        if (!h.queued) return undefined;
        const q = h.queued;
        const proof = turnOnNode(q.turn);
        return {
          holds: q.chatSend === "started" && q.whileDown === "timeout" && q.afterReturn === "ok" && proof.holds,
          observed: { chatSend: q.chatSend, whileDown: q.whileDown, whileDown_ms: q.whileDown_ms, afterReturn: q.afterReturn, ...proof.observed },
        };
      },
    },
    {
      id: "R-offline-dispatch-same-node",
      expectation: "the node, started again on its state volume, comes back with the same nodeId and raises no pairing request",
      judge: (h) => h.back && { holds: h.back.sameNodeId && h.back.pendingDevice + h.back.pendingNode === 0, observed: { sameNodeId: h.back.sameNodeId, pendingDevicePairing: h.back.pendingDevice, pendingNodePairing: h.back.pendingNode } },
    },
    { id: "R-offline-dispatch-after-return", expectation: "the refused session can be dispatched to the node once it is back", judge: (h) => h.again && { holds: "state" in h.again && h.again.state === "active", observed: h.again } },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    await nodeScene(ctx, {}, async ({ alias, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("offline") });
      const placed = await createWorkerSession(lab, ws);
      const fresh = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, placed.key, alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-offline-dispatch-placed")) return;
      const nodeId = (await nodeByAlias(lab, alias)).nodeId;
      // The queued turn's proof: a file only the node's checkout has, planted while the node is
      // up (the checkout is on its state volume, which the kill keeps).
      const marker = await plantNodeMarker(lab, alias, d.placement, { note: "queued while the node is down" });

      const kill = faults.kill(lab, alias, { timeline: tl, inEffectWhen: async () => !(await nodeByAlias(lab, alias)).connected });
      const k = await kill.inject();
      log(`${alias} SIGKILLed; node.list disconnected ${Math.round(k.totalMs)} ms after the kill call`);

      // A new dispatch to the down node.
      const t1 = performance.now();
      const refused = await dispatchTo(lab, fresh.key, alias).then(
        (r) => ({ accepted: r.placement.state }),
        (err: unknown) => (err instanceof GatewayError ? { code: err.code, message: err.gatewayMessage } : Promise.reject(err)),
      );
      const refusedMs = Math.round(performance.now() - t1);
      const freshPlacement = await placementOf(lab, fresh.key);
      log(`dispatch to the down node: ${JSON.stringify(refused)} in ${refusedMs} ms; placement afterwards: ${JSON.stringify(freshPlacement?.state ?? null)}`);
      observe("refused", { nodeId, result: refused, ms: refusedMs, placement: freshPlacement?.state ?? null });

      // A turn to the session already placed there.
      const message = marker.message;
      const tapSince = await lab.tap(alias).seq();
      const sent = await sendChat(lab.operator.client, placed.key, message);
      // The run's state while the node is down, read over WHILE_DOWN_MS (a run that ended in
      // that time is seen at once). It does not decide alone that the turn waited: a run ends
      // once, so its one end, "ok" and on the node after the node returned (the launch on the
      // node's tap, which carries nothing while the node is down), closes the window.
      // expectation: the WHILE_DOWN_MS window ("timeout": still waiting) is judged and in the observed: fixed, not paced
      const early = await waitRun(lab.operator.client, sent.runId, WHILE_DOWN_MS, { expectation: true });
      log(`chat.send while down: ${sent.status}; agent.wait over ${WHILE_DOWN_MS} ms: ${early.status}`);

      const tStart = Date.now();
      const start = await kill.heal();
      const up = await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const backMs = Date.now() - tStart;
      log(`${alias} started again (${Math.round(start.totalMs)} ms); connected ${backMs} ms after the start call`);
      const done = await waitRun(lab.operator.client, sent.runId, 120_000);
      const doneMs = Date.now() - tStart;
      const reply = await replyOf(lab.operator.client, placed.key, done, sent.runId);
      const proof = await proveTurnOnNode(lab, { alias, marker, reply, tapSince });
      log(`queued turn: ${done.status} ${JSON.stringify(reply ?? done.error ?? null)} ${doneMs} ms after the start call; on the node: ${JSON.stringify(proof.observed)}`);
      observe("queued", { chatSend: sent.status, whileDown: early.status, whileDown_ms: WHILE_DOWN_MS, afterReturn: done.status, turn: turnSeen(alias, marker, reply, proof) });

      const host = await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      const view = await nodeView(lab, alias);
      observe("back", { sameNodeId: view.nodeId === nodeId, pendingDevice: view.pendingDevice, pendingNode: view.pendingNode });
      if (!proceed("R-offline-dispatch-same-node")) return;
      const again = await dispatchTo(lab, fresh.key, alias).then(
        (r) => ({ state: r.placement.state, ms: r.ms }),
        (err: Error) => ({ error: err.message }),
      );
      log(`the refused session dispatched again after the node returned: ${JSON.stringify(again)}`);
      observe("again", again);
      Object.assign(evidence, {
        kill: k,
        refused: { ...refused, ms: refusedMs, placementAfter: freshPlacement ?? null },
        queued: { message, chatSend: sent, whileDown: early, start, connectedAfterStartMs: backMs, connected: up.node, result: done, completedAfterStartMs: doneMs, proof: proof.evidence },
        after: { host, view },
        dispatchAfterReturn: again,
      });
    });
  },
});
