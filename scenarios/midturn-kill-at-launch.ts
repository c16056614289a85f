import { sendChat, waitRun } from "../lab/clients/sessions.ts";
import { isResponsesCall, type ModelRequest } from "../lab/clients/model.ts";
import type { NodeEntry } from "../lab/clients/operator.ts";
import { faults } from "../lab/faults/index.ts";
import { defineScenario } from "../lab/scenario.ts";
import { workerProcesses, type WorkerProcess } from "../lab/kits/inside-node.ts";
import { controlEvents, waitReconnect } from "../lab/kits/node-wire.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, type TurnSeen } from "../lab/kits/proof.ts";
import { slotsFree, waitConnected, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { nodeScene } from "../lab/kits/scene.ts";
import { replyOf } from "../lab/kits/session.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";

// The node host dies at the moment the gateway launches a worker turn on it: the tap holds
// the worker.launch.v1 invoke (the node never receives it) and the node container is
// SIGKILLed, so the cut is exact whatever the kill's latency. The node is started again on
// its state volume at once. Expected: the gateway relaunches and the turn completes, the
// model is asked once, and the node ends with every worker slot free and no worker left.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): the 60 s for every
// worker slot to be free after the turn (a time-out reads "not free").
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** One model request that carried the turn's message, as the scripted model listed it. */
export type RequestSeen = Pick<ModelRequest, "method" | "path" | "round" | "status">;
export interface Observed {
  /** The dispatch of the session to the node (the rest needs an active placement: the body stops there otherwise). */
  dispatch?: DispatchSeen;
  /** The relaunched turn: agent.wait's status, and what the proof that it ran on the node read (two launches, the last after the reconnect). */
  turn?: { status: string; seen: TurnSeen };
  /** Every model request that carried the turn's message (Responses calls or not). */
  requests?: RequestSeen[];
  /** After the turn: the node's worker slots once all free within 60 s, or the wait's error; the node's worker processes. */
  after?: { free: { slots: NodeEntry["workerSlots"] } | { error: string }; workers: WorkerProcess[] };
}

export default defineScenario<Observed>({
  name: "midturn-kill-at-launch",
  proves: "a node killed exactly at worker.launch.v1 and started again on its state volume: the gateway relaunches the turn on it (a second worker.launch.v1 after the reconnect), it completes once, reading a node-only file, and every worker slot is free afterwards",
  topology: "shared",
  timeoutMs: 240_000,
  checks: [
    dispatchedCheck<Observed>("R-kill-at-launch-dispatch", (h) => h.dispatch),
    {
      id: "R-kill-at-launch-completes",
      expectation: "after the node returns, the gateway relaunches the turn on it (a second worker.launch.v1 after the reconnect) and it completes with the model's answer from the node (a node-only file read)",
      judge: (h) => {
        if (!h.turn) return undefined;
        const proof = turnOnNode(h.turn.seen);
        return { holds: h.turn.status === "ok" && proof.holds, observed: { status: h.turn.status, ...proof.observed } };
      },
    },
    {
      id: "R-kill-at-launch-once",
      expectation: "the relaunched turn asks the model once (nothing ran before the kill): one first request (its read call), one after the read, both completed",
      judge: (h) => {
        if (!h.requests) return undefined;
        // isResponsesCall reads only the request's method and path.
        const requests = h.requests.filter((r) => isResponsesCall(r as ModelRequest));
        return { holds: requests.length === 2 && requests.map((r) => r.round).join() === "0,1" && requests.every((r) => r.status === "completed"), observed: requests.map((r) => ({ round: r.round, status: r.status })) };
      },
    },
    {
      id: "R-kill-at-launch-slots",
      expectation: "after the turn every worker slot of the node is free and no worker process is left",
      judge: (h) => h.after && { holds: "slots" in h.after.free && h.after.workers.length === 0, observed: { ...h.after.free, workers: h.after.workers.length } },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    await nodeScene(ctx, { node: 1 }, async ({ alias, tap, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("launch-kill") });
      const s = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, s.key, alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-kill-at-launch-dispatch")) return;
      // The proof of the relaunched turn: a file only the node's checkout has (on its state
      // volume, so it outlives the kill), read by the worker launched after the restart.
      const marker = await plantNodeMarker(lab, alias, d.placement, { note: "survives a kill at launch" });
      const since = await tap.seq();

      // Hold the launch at the tap, then kill the node once the hold has fired.
      const hold = faults.wire.halfOpen({ lab, node: alias }, { dir: "gw->node", command: "worker.launch.v1" }, { once: true, timeline: tl, label: `${alias} at worker.launch.v1` });
      await hold.inject();
      // In effect once the container is down: the gateway cannot see it while the tap holds
      // the connection half-open; it does once the hold is removed below.
      const kill = faults.kill(lab, alias, { timeline: tl });
      const armed = await faults.injectWhen(
        faults.when.poll("the tap held worker.launch.v1", async () => (await tap.rule(hold.ruleId))?.firstFired ?? undefined),
        kill,
        { timeoutMs: 60_000 },
      );
      const message = marker.message;
      const sent = await sendChat(lab.operator.client, s.key, message);
      const trig = await armed.injected;
      await hold.fired(5_000);
      log(`worker.launch.v1 held at frame #${trig.value.seq}; ${alias} killed ${Math.round(trig.reactionMs)} ms later`);
      await hold.heal();
      const gone = await waitConnected(lab, alias, false, { timeoutMs: 60_000, signal }).then(
        (x) => ({ ms: x.ms }),
        (err: Error) => ({ error: err.message }),
      );
      log(`hold removed; the gateway saw ${alias} disconnected: ${JSON.stringify(gone)}`);
      const tStart = Date.now();
      const start = await kill.heal();
      const up = await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const back = await waitReconnect(tap, since, 60_000);
      log(`${alias} started again; connected ${Date.now() - tStart} ms after the start call (tap #${back.seq})`);

      const done = await waitRun(lab.operator.client, sent.runId, 120_000);
      const doneMs = Date.now() - tStart;
      const turnRequests = (await lab.model.requests()).filter((r) => (r.userText ?? "").includes(message));
      const requests = turnRequests.filter((r) => isResponsesCall(r));
      log(`turn: ${done.status} ${JSON.stringify(done.terminalReply?.text ?? done.error ?? null)}${done.status === "ok" && !done.terminalReply ? " (no terminalReply in agent.wait: the reply is read from history)" : ""} ${doneMs} ms after the start call; model requests for it: ${requests.map((r) => r.status).join(",")}`);
      // Two launches on the tap: the one held at the kill and the relaunch after the node came back.
      const reply = await replyOf(lab.operator.client, s.key, done, sent.runId);
      const proof = await proveTurnOnNode(lab, { alias, marker, reply, tapSince: since, launches: 2, launchAfter: back.seq });
      log(`proof on ${alias}: ${JSON.stringify(proof.observed)}; launches ${JSON.stringify(proof.evidence.launches.map((l) => [l.seq, l.launchId]))}`);
      const seen: TurnSeen = {
        alias,
        marker: { nonce: marker.nonce, reply: marker.reply, ...(marker.environmentId ? { environmentId: marker.environmentId } : {}) },
        reply: reply ?? null,
        launches: proof.evidence.launches,
        launchCount: 2,
        launchAfter: back.seq,
      };
      observe("turn", { status: done.status, seen });
      observe("requests", turnRequests.map((r) => ({ method: r.method, path: r.path, round: r.round, status: r.status })));
      // expectation: a time-out is "slots not free" in R-kill-at-launch-slots: the 60 s window is fixed, not paced
      const free = await waitForNode(lab, alias, "every worker slot free", (n) => n.connected && slotsFree(n), { timeoutMs: 60_000, signal, expectation: true }).then(
        (n) => ({ slots: n.workerSlots }),
        (err: Error) => ({ error: err.message }),
      );
      const workers = await workerProcesses(lab, alias);
      observe("after", { free, workers });
      Object.assign(evidence, { session: s.key, trigger: trig, gatewaySawLoss: gone, start, connected: up.node, result: done, completedAfterStartMs: doneMs, proof: proof.evidence, modelRequests: requests.map((r) => ({ id: r.id, status: r.status, round: r.round })), free, workers, tap: await controlEvents(tap, since) });
    });
  },
});
