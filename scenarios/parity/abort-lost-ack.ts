// Parity with OpenClaw's qa-lab: runtime/paired-node-worker-lifecycle-wire.e2e.test.ts, "fences
// revoked and unconfirmed turns before real node successor I/O", its unconfirmed-cancel half.
// There a worker turn runs on a paired node (held at the model), the node supervisor's cancel
// for that launch is made to throw ("synthetic node cancellation acknowledgement loss"), and
// chat.abort is sent. qa-lab expects: chat.abort answers {aborted: true}; agent.wait of the run
// is not "timeout"; the node is told to stop the worker environment (worker.environment.stop.v1)
// and the old worker process is gone; the placement turns "failed" (with a generation);
// sessions.reclaim {recoverToGateway: {expectedGeneration}} brings it back "local"; a new
// dispatch to the same node is "active" on a NEW environment; the successor turn completes with
// exactly one more worker.launch.v1; on the node's wire: cancel < environment stop < successor
// launch.
// Here (own lab, one node host behind its wire tap) the cancel acknowledgement is lost on the
// wire instead: every node.invoke.result answering a worker.cancel.v1 is dropped at the tap
// (lab/kits/node-wire.ts loseCancelAcks: the node gets the cancel and acts on it, the gateway
// never hears back). This scenario checks the same steps, each where it happens: the abort's
// answer and agent.wait (operator), worker.environment.stop.v1 and launches (the node's tap,
// in order), the worker process on the node (pgrep inside it), the placement (sessions.describe),
// reclaim and re-dispatch (their answers), the successor turn (node-only marker + one launch).
// The reclaim is qa-lab's recoverToGateway when the placement failed; otherwise the plain
// sessions.reclaim a user would send (and the check says what it answered).
// Premise (else unknown): P-abort-lost-ack-acks-lost: no answer of the node to a worker.cancel.v1
// passed its tap, from the abort through the reclaim (the acknowledgement was really lost; read
// after agent.wait and again after the reclaim).
// Bounds: everything the gateway does after the abort within BOUND_S (its cancel is confirmed
// or given up after ~30 s on 2026.9.6).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): BOUND_S, for
// agent.wait after the abort as for the polls.
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { defineScenario, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { EventLog } from "../../lab/kits/events.ts";
import { workerProcesses } from "../../lab/kits/inside-node.ts";
import { launchesForRun, loseCancelAcks, workerCommands, type LostCancelAcks, type WorkerCommand } from "../../lab/kits/node-wire.ts";
import { waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { provenWorkerTurn, turnOnNode, type TurnSeen } from "../../lab/kits/proof.ts";
import { armHold, isRefused, openSession, refusal, type Refused } from "../../lab/kits/session.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { dispatchedCheck, dispatchSeen, uniqueName, type DispatchSeen } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";
import { pollUntil } from "../../lab/core/wait.ts";
import type { Placement } from "../../lab/clients/sessions.ts";

/**
 * How long after chat.abort the gateway has for each step (run end, environment stop, worker
 * gone, placement failed): 2026.9.6 gives up on an unconfirmed cancel after its 30 s abort grace.
 */
const BOUND_S = 45;

// Registered findings: what openclaw@2026.9.6 was seen to do (run 20261130-143452-95cb, bound
// then 60 s): chat.abort ends the run at once (agent.wait "error", stopReason "rpc", chat
// "aborted") and the node does stop the worker; the gateway sends worker.cancel.v1 once, and
// when its answer never comes it logs "abort grace 30000ms elapsed" 30 s later and goes no
// further: no worker.environment.stop.v1, the placement stays "active" (runner available), so
// a plain sessions.reclaim answers "reclaimed" (not "local") and only then is the environment
// stopped (worker.environment.stop.v1 for the old environment, seen in run
// 20261130-144742-b623), so the fence order holds once the user reclaims; the new dispatch
// gets a new environment and the successor turn completes with one launch.
const findings: FindingRecord[] = [
  {
    id: "R-abort-lost-ack-environment-stop",
    expectation: `after the unconfirmed cancel the gateway tells the node to stop the worker environment (worker.environment.stop.v1 for the placement's environment, after worker.cancel.v1) within ${BOUND_S} s`,
    signature: { within_s: 45, cancel: true, environmentStop: null },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-abort-lost-ack-environment-stop.json",
  },
  {
    id: "R-abort-lost-ack-placement-failed",
    expectation: `the placement turns "failed" within ${BOUND_S} s of the abort`,
    signature: { within_s: 45, state: "active", runner: "available", recoveryError: null },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-abort-lost-ack-placement-failed.json",
  },
  {
    id: "R-abort-lost-ack-reclaim",
    expectation: 'sessions.reclaim (recoverToGateway with the failed generation) brings the session back to the gateway ("local")',
    signature: { placement: "active", state: "reclaimed" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-abort-lost-ack-reclaim.json",
  },
];

// The body drives and observes (ctx.observe); the checks and the premise below judge what it observed.

/** A worker.* command the gateway sent the node, as the checks read it (tap seq, command, the environment its params name). */
interface CommandSeen {
  seq: number;
  command: string;
  environmentId?: unknown;
}
export interface Observed {
  /** The first dispatch of the session to the node (the rest needs it active there: the body stops otherwise). */
  dispatch?: DispatchSeen;
  /** The worker processes on the node while the turn is held at its model request (pids): the ones that must be gone after the abort. */
  heldWorkers?: { pids: number[] };
  /** The tap seqs of the node's answers to worker.cancel.v1 that passed its tap (not dropped), read after agent.wait and again after the reclaim (P-abort-lost-ack-acks-lost). */
  acksLost?: { leaked: number[] };
  /** The placement of the first dispatch: its worker environment is the one to stop. */
  original?: { environmentId?: string };
  /** chat.abort's answer (or refusal), how agent.wait ended the run within BOUND_S, the run's last chat state. */
  abort?: { answer: Record<string, unknown> | Refused; status: string; chat: string | null };
  /** The worker.* commands on the node's tap since the abort, as last polled for worker.environment.stop.v1 (up to BOUND_S). */
  wire?: { commands: CommandSeen[] };
  /** The old worker processes still on the node when the poll for their end stopped (pids). */
  workerGone?: { left: number[] };
  /** The placement when the poll for "failed" stopped (null: none). */
  placement?: Placement | null;
  /** sessions.reclaim's answer: the placement state it gave, or its refusal. */
  reclaim?: { state: string | null } | Refused;
  /** The new dispatch to the same node: its placement's state and environment, or its refusal. */
  again?: { state: string; environmentId?: string } | Refused;
  /** The successor turn (only when the new dispatch was active): its proof, and the worker.launch.v1 frames since it began. */
  successor?: { turn: TurnSeen; launches: CommandSeen[] };
  /** The worker.* commands on the node's tap since the abort, read at the end (for the fence order). */
  fence?: { commands: CommandSeen[] };
}

const seenCommand = (c: WorkerCommand): CommandSeen => ({ seq: c.seq, command: c.command, ...(c.params?.environmentId !== undefined ? { environmentId: c.params.environmentId } : {}) });
const firstCancelOf = (commands: CommandSeen[]) => commands.find((c) => c.command === "worker.cancel.v1");

export default defineScenario<Observed>({
  name: "abort-lost-ack",
  proves: "qa-lab parity: chat.abort of a node worker turn whose cancel acknowledgement is lost on the wire ends the run, stops the worker environment on the node, fails the placement; reclaim, re-dispatch on a new environment and exactly one successor launch follow",
  topology: "own",
  spec: { nodes: { count: 1, devicePairing: "subnet" }, mcp: { servers: [] } },
  needs: [{ method: "sessions.dispatch", why: "the turn runs on a paired node" }],
  findings,
  timeoutMs: 360_000,
  premises: [
    {
      id: "P-abort-lost-ack-acks-lost",
      what: "every answer of the node to worker.cancel.v1 was dropped at its wire tap from the abort through the reclaim: the gateway never heard the cancel acknowledged",
      judge: (h) => h.acksLost && { met: h.acksLost.leaked.length === 0, observed: { leaked: h.acksLost.leaked.length } },
    },
  ],
  checks: [
    dispatchedCheck<Observed>("R-abort-lost-ack-dispatch", (h) => h.dispatch),
    {
      id: "R-abort-lost-ack-worker-running",
      expectation: "a worker turn held at its model request runs in a worker process on the node",
      judge: (h) => h.heldWorkers && { holds: h.heldWorkers.pids.length > 0, observed: { workers: h.heldWorkers.pids.length } },
    },
    {
      id: "R-abort-lost-ack-run-ends",
      expectation: `chat.abort answers aborted: true and the run ends (agent.wait not "timeout") within ${BOUND_S} s although the node's cancel acknowledgement is lost`,
      judge: (h) => {
        if (!h.abort) return undefined;
        const { answer, status, chat } = h.abort;
        return {
          holds: !isRefused(answer) && answer.aborted === true && status !== "timeout" && status !== "pending",
          observed: normalise({ within_s: BOUND_S, aborted: isRefused(answer) ? answer : (answer.aborted ?? null), status, chat }),
        };
      },
    },
    {
      id: "R-abort-lost-ack-environment-stop",
      expectation: `after the unconfirmed cancel the gateway tells the node to stop the worker environment (worker.environment.stop.v1 for the placement's environment, after worker.cancel.v1) within ${BOUND_S} s`,
      judge: (h) => {
        const firstCancel = h.wire && firstCancelOf(h.wire.commands);
        if (!h.original || !h.wire || !firstCancel) return undefined;
        const stop = h.wire.commands.find((c) => c.command === "worker.environment.stop.v1");
        const sameEnvironment = stop?.environmentId === h.original.environmentId;
        return {
          holds: !!stop && stop.seq > firstCancel.seq && sameEnvironment,
          observed: { within_s: BOUND_S, cancel: true, environmentStop: stop ? { afterCancel: stop.seq > firstCancel.seq, sameEnvironment } : null },
        };
      },
    },
    {
      id: "R-abort-lost-ack-worker-gone",
      expectation: `the aborted turn's worker process is gone from the node within ${BOUND_S} s`,
      judge: (h) => h.workerGone && { holds: h.workerGone.left.length === 0, observed: { within_s: BOUND_S, left: h.workerGone.left.length } },
    },
    {
      id: "R-abort-lost-ack-placement-failed",
      expectation: `the placement turns "failed" within ${BOUND_S} s of the abort`,
      judge: (h) => {
        if (h.placement === undefined) return undefined;
        const p = h.placement;
        return { holds: p?.state === "failed", observed: normalise({ within_s: BOUND_S, state: p?.state ?? null, runner: p?.runner?.status ?? null, recoveryError: p?.recoveryError ?? null }) };
      },
    },
    {
      id: "R-abort-lost-ack-reclaim",
      expectation: 'sessions.reclaim (recoverToGateway with the failed generation) brings the session back to the gateway ("local")',
      judge: (h) => {
        if (!h.reclaim || h.placement === undefined) return undefined;
        const r = h.reclaim;
        const placement = h.placement?.state ?? null;
        return {
          holds: !isRefused(r) && r.state === "local",
          observed: isRefused(r) ? { placement, code: r.code, message: normaliseText(r.message) } : { placement, state: r.state },
        };
      },
    },
    {
      id: "R-abort-lost-ack-new-environment",
      expectation: "the session can be dispatched to the same node again, active on a new worker environment",
      judge: (h) => {
        if (!h.again || !h.original) return undefined;
        const a = h.again;
        if (isRefused(a)) return { holds: false, observed: { code: a.code, message: normaliseText(a.message) } };
        const newEnvironment = !!a.environmentId && a.environmentId !== h.original.environmentId;
        return { holds: a.state === "active" && newEnvironment, observed: { state: a.state, newEnvironment } };
      },
    },
    {
      id: "R-abort-lost-ack-successor",
      expectation: "the successor turn completes on the node (node-only marker) with exactly one new worker.launch.v1",
      // Judged only when the new dispatch was active (the successor turn ran).
      optional: true,
      judge: (h) => {
        if (!h.successor) return undefined;
        const t = turnOnNode(h.successor.turn);
        const all = h.successor.launches.length;
        return { holds: t.holds && t.observed.launches === 1 && all === 1, observed: { ...t.observed, allLaunches: all } };
      },
    },
    {
      id: "R-abort-lost-ack-fence-order",
      expectation: "on the node's wire the old launch's worker.cancel.v1 comes before worker.environment.stop.v1 of its environment (at the latest by the reclaim), which comes before the successor's worker.launch.v1",
      judge: (h) => {
        const firstCancel = h.wire && firstCancelOf(h.wire.commands);
        if (!h.fence || !h.original || !firstCancel) return undefined;
        const successorLaunchSeq = h.successor?.launches[0]?.seq;
        const stopAny = h.fence.commands.find((c) => c.command === "worker.environment.stop.v1" && (successorLaunchSeq === undefined || c.seq < successorLaunchSeq));
        const order = { cancel: true, environmentStop: !!stopAny, sameEnvironment: stopAny?.environmentId === h.original.environmentId, successorLaunch: successorLaunchSeq !== undefined };
        return {
          holds: !!stopAny && order.sameEnvironment && successorLaunchSeq !== undefined && firstCancel.seq < stopAny.seq && stopAny.seq < successorLaunchSeq,
          observed: order,
        };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const client = lab.operator.client;
    const events = new EventLog(client);
    let lost: LostCancelAcks | undefined;
    const atEnd = async () => {
      events.stop();
      await lost?.stop().catch(() => {}); // the watcher ends with the scenario, however it ends
      await lab.model.release().catch(() => {});
    };
    await nodeScene(ctx, { evidence: { boundS: BOUND_S }, atEnd }, async ({ alias, tap, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("abort-ack") });
      const s = await openSession(lab, { workspace: ws });
      const d = await s.dispatch(alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-abort-lost-ack-dispatch")) return;
      const original = d.placement;
      observe("original", { environmentId: original.environmentId });

      // ---- a worker turn on the node, held at its model request
      const token = uniqueName("tok");
      await armHold(lab, token);
      const sent = await s.send(`${token} a long task on the node`);
      const held = await s.hold(token, 90_000);
      const workers = await labStep(`listing worker processes on ${alias}`, () => workerProcesses(lab, alias));
      observe("heldWorkers", { pids: workers.map((w) => w.pid) });
      if (!proceed("R-abort-lost-ack-worker-running")) return;
      log(`turn ${sent.runId} held at model request ${held.id}; worker pids on ${alias}: ${workers.map((w) => w.pid).join(", ")}`);

      // ---- lose the node's answers to worker.cancel.v1, then abort
      const since = await tap.seq();
      const acks = await labStep(`arming the lost cancel acknowledgement at ${alias}'s tap`, () => loseCancelAcks(lab, alias, { timeline: tl, signal }));
      lost = acks;
      const abortAt = Date.now();
      const aborted = await s.abort(sent.runId);
      // expectation: "the run ends within BOUND_S" (R-abort-lost-ack-run-ends judges "timeout"): fixed, not paced
      const end = await s.wait(sent.runId, BOUND_S * 1000, { expectation: true });
      // The premise, before anything is judged: no answer to a cancel passed the tap since the
      // abort (P-abort-lost-ack-acks-lost; each read covers the earlier one). false: stop there.
      const acksStillLost = async (): Promise<boolean> => {
        const upTo = await tap.seq();
        const ids = new Set(acks.cancels().map((c) => c.invokeId));
        const leaked = (await tap.frames({ since })).filter((f) => f.seq <= upTo && f.dir === "node->gw" && f.method === "node.invoke.result" && ids.has(f.invokeId) && f.action !== "drop");
        if (leaked.length) log(`${leaked.length} answer(s) of ${alias} to worker.cancel.v1 passed its tap (seq ${leaked.map((f) => f.seq).join(", ")}): the acknowledgement was not lost`);
        observe("acksLost", { leaked: leaked.map((f) => f.seq) });
        return proceed("P-abort-lost-ack-acks-lost");
      };
      if (!(await acksStillLost())) return;
      log(`chat.abort: ${JSON.stringify(aborted)}; agent.wait ${end.status} after ${end.ms} ms (${JSON.stringify(end.error ?? null)}, stopReason ${end.stopReason ?? "-"})`);
      observe("abort", { answer: aborted, status: end.status, chat: events.chatOutcome(sent.runId) ?? null });

      // ---- on the node's wire: the cancel, then the environment stop
      const stopPoll = await pollUntil(
        "worker.environment.stop.v1 on the node's tap",
        () => workerCommands(lab, alias, since),
        (cmds) => cmds.some((c) => c.command === "worker.environment.stop.v1"),
        { deadlineMs: BOUND_S * 1000, from: abortAt, intervalMs: 500, signal },
      );
      const cmds = stopPoll.last;
      const firstCancel = cmds.find((c) => c.command === "worker.cancel.v1");
      const stop = cmds.find((c) => c.command === "worker.environment.stop.v1");
      log(`after the abort: ${acks.cancels().length} worker.cancel.v1 (each answer to be dropped); environment stop ${stop ? `${Math.round(stop.t - abortAt)} ms after the abort, ${JSON.stringify(stop.params)}` : `not within ${BOUND_S} s`}`);
      if (!firstCancel) throw new Error(`the gateway sent ${alias} no worker.cancel.v1 after chat.abort: the lost acknowledgement was never exercised`);
      observe("wire", { commands: cmds.map(seenCommand) });

      // ---- the old worker process on the node
      const pids = new Set(workers.map((w) => w.pid));
      const gone = await pollUntil(`the old worker process gone from ${alias}`, async () => (await workerProcesses(lab, alias)).filter((w) => pids.has(w.pid)), (left) => left.length === 0, {
        deadlineMs: BOUND_S * 1000,
        from: abortAt,
        intervalMs: 1000,
        signal,
      });
      observe("workerGone", { left: gone.last.map((w) => w.pid) });

      // ---- the placement fails, then reclaim to the gateway and dispatch again
      const failed = await pollUntil("the placement failed", () => s.placement(), (p) => p?.state === "failed", { deadlineMs: BOUND_S * 1000, from: abortAt, intervalMs: 500, signal });
      const placement = failed.last;
      log(`placement ${placement?.state} (${failed.ms} ms after the abort): ${JSON.stringify(placement && { generation: placement.generation, recoveryError: placement.recoveryError, terminalReason: placement.terminalReason, runner: placement.runner })}`);
      observe("placement", placement ?? null);
      const reclaimParams = placement?.state === "failed" ? { key: s.key, recoverToGateway: { expectedGeneration: placement.generation } } : { key: s.key };
      const reclaimed = await client.request("sessions.reclaim", reclaimParams, { timeoutMs: 120_000 }).then(
        (r) => ({ state: (r as { placement?: { state?: string } }).placement?.state ?? null }),
        (err: unknown) => refusal(err),
      );
      log(`sessions.reclaim ${JSON.stringify(reclaimParams)}: ${JSON.stringify(reclaimed)}`);
      observe("reclaim", reclaimed);
      // The node's answers to the old launch's cancels stay lost through the reclaim (qa-lab's
      // stub throws for that launch throughout); the rules go before the new dispatch.
      if (!(await acksStillLost())) return;
      await acks.stop();
      const droppedAcks = acks.drops().filter((f) => (f.rule?.hits ?? 0) > 0).length;
      log(`answers to worker.cancel.v1 dropped at the tap: ${droppedAcks} of ${acks.cancels().length}`);
      const again = await s.dispatch(alias).then(
        (r) => ({ state: r.placement.state, environmentId: r.placement.environmentId }),
        (err: unknown) => refusal(err),
      );
      log(`dispatch again: ${JSON.stringify(again)}`);
      observe("again", again);

      // ---- the successor turn: one launch
      let successor: Awaited<ReturnType<typeof provenWorkerTurn>> | undefined;
      if (!isRefused(again) && again.state === "active") {
        const beforeSuccessor = await tap.seq();
        successor = await provenWorkerTurn(lab, s.key, alias, { note: "successor after the lost cancel ack", timeoutMs: 120_000 });
        const launches = (await workerCommands(lab, alias, beforeSuccessor)).filter((c) => c.command === "worker.launch.v1");
        log(`successor turn: ${JSON.stringify(successor.observed)}; launches since it began: ${launches.length}`);
        observe("successor", { turn: successor.seen, launches: launches.map(seenCommand) });
      }
      // qa-lab's fence, on the node's wire: the cancel, then the environment stop, then the successor's launch.
      observe("fence", { commands: (await workerCommands(lab, alias, since)).map(seenCommand) });
      Object.assign(evidence, {
        session: s.key,
        runId: sent.runId,
        original,
        held,
        workers,
        abort: { at: abortAt, result: aborted, end },
        wire: { commands: cmds.map(({ seq, t, command, invokeId, action, params }) => ({ seq, t, command, invokeId, action, environmentId: params?.environmentId })), cancels: acks.cancels().length, droppedAcks },
        oldRunLaunches: (await launchesForRun(lab, alias, sent.runId)).map((f) => ({ seq: f.seq, t: f.t })),
        workerGone: { held: gone.held, ms: gone.ms, left: gone.last },
        placement: { held: failed.held, ms: failed.ms, last: placement ?? null },
        reclaim: { params: reclaimParams, result: reclaimed },
        dispatchAgain: again,
        successor: successor ?? null,
        events: events.events,
      });
    });
  },
});
