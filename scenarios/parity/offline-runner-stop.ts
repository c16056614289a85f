// Parity with OpenClaw's qa-lab: runtime/paired-node-worker-lifecycle-wire.e2e.test.ts, "keeps
// local control usable across bundle loss, disconnect, capacity, and role removal", its offline
// runner step. There the in-process node host disconnects (a clean close, no crash) and qa-lab
// expects: a turn to a session placed on it ends with status "error" and the error
// "⚠️ The device runner is offline. Reconnect it, retry later, or bring the session back to this
// gateway." (in the 2026.9.6 dist: WorkerRunnerUnavailableError, code "runner-offline", the same
// text without the emoji); no worker.launch.v1 for that run; the placement stays "active"
// (retryable); a gateway-local session keeps working; after the node reconnects, a retry completes.
// offline-dispatch covers a node KILLED (SIGKILL: the turn waits and completes when it is back);
// this is the clean case: the node host container is stopped (SIGTERM, graceful shutdown).
// What this scenario checks, across containers (shared lab, node-1, started again at the end):
//   - the offline turn ends with an error naming the offline runner within OFFLINE_BOUND_S
//     (agent.wait; the chat events of the run are kept as evidence);
//   - the placement is still "active" afterwards;
//   - a gateway-local turn answers while the node is down;
//   - after the node is started again (same state volume), no worker.launch.v1 ever carries the
//     offline run (tap), and a retry turn completes on the node (node-only marker + launch).
//
// Premise (else unknown): P-offline-runner-stop-clean-stop: the node host shut down on its own
// within 20 s of SIGTERM (the clean stop this scenario is about), not killed by the engine when
// the grace ran out.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): OFFLINE_BOUND_S.
import { faults } from "../../lab/faults/index.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { defineScenario, type FindingRecord } from "../../lab/scenario.ts";
import { EventLog } from "../../lab/kits/events.ts";
import { launchesForRun } from "../../lab/kits/node-wire.ts";
import { nodeByAlias, waitConnected, waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { provenWorkerTurn, turnOnNode, type TurnSeen } from "../../lab/kits/proof.ts";
import type { Placement } from "../../lab/clients/sessions.ts";
import { openSession } from "../../lab/kits/session.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { dispatchedCheck, dispatchSeen, expectedReply, uniqueName, type DispatchSeen } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";

/** "At once": the offline turn must have ended within this many seconds of chat.send. */
const OFFLINE_BOUND_S = 10;
/** The text of WorkerRunnerUnavailableError (2026.9.6 dist tunnel-contract-*.mjs; qa-lab prefixes "⚠️ "). */
export const RUNNER_OFFLINE = "The device runner is offline. Reconnect it, retry later, or bring the session back to this gateway.";

// Registered findings: what openclaw@2026.9.6 was seen to do (run 20261130-141727-8d01): a clean
// stop (SIGTERM, exit 143 within 0.5 s) is treated like a kill: the turn is accepted and waits
// (agent.wait "timeout", no chat terminal event), the placement stays active with its runner
// offline, and the waiting turn is launched on the node and completes once the node is back.
// What offline-dispatch expects of a killed node is here the opposite of what qa-lab expects.
const findings: FindingRecord[] = [
  {
    id: "R-offline-runner-stop-turn-error",
    expectation: `a turn to a session placed on a cleanly stopped node ends within ${OFFLINE_BOUND_S} s with status error and "${RUNNER_OFFLINE}"`,
    signature: { within_s: 10, status: "timeout", error: null, chat: null },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-offline-runner-stop-turn-error.json",
  },
  {
    id: "R-offline-runner-stop-no-launch",
    expectation: "the offline turn is never launched on the node, also not after it returns",
    signature: { launches: 1, offlineRunAfterReturn: "ok" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-offline-runner-stop-no-launch.json",
  },
];

// The body drives and observes (ctx.observe); the checks and the premise below judge what it observed.
export interface Observed {
  /** The dispatch of the session to the node (the rest needs it active there: the body stops otherwise). */
  dispatch?: DispatchSeen;
  /** The node host's stop: whether it exited on its own within the grace (false: the engine killed it; null: not said) (P-offline-runner-stop-clean-stop). */
  shutdown?: { graceful: boolean | null };
  /** The offline turn as agent.wait ended it within OFFLINE_BOUND_S: its status, its error as text, the run's last chat state. */
  offlineTurn?: { status: string; error: string | null; chat: string | null };
  /** sessions.describe's placement after the offline turn (null: none). */
  placementAfter?: Placement | null;
  /** The gateway-local turn: the message sent, how it ended, its reply. */
  localTurn?: { message: string; status: string; text: string | null };
  /** After the node returned: the offline run's worker.launch.v1 frames on the tap, and how the run ended by then. */
  afterReturn?: { launches: { seq: number; t: number }[]; status: string };
  /** The retry turn after the node returned, as its proof read it. */
  retry?: TurnSeen;
}

export default defineScenario<Observed>({
  name: "offline-runner-stop",
  proves: "qa-lab parity: a turn to a session placed on a node host stopped cleanly (SIGTERM) ends at once with 'The device runner is offline...', the placement stays active, local turns work, and a retry after the node returns completes on it",
  topology: "shared",
  needs: [{ method: "sessions.dispatch", why: "the session is placed on a node" }],
  findings,
  timeoutMs: 240_000,
  premises: [
    {
      id: "P-offline-runner-stop-clean-stop",
      what: "the node host shut down on its own within 20 s of SIGTERM (a clean stop), not killed by the engine when the grace ran out",
      judge: (h) => h.shutdown && { met: h.shutdown.graceful !== false, observed: h.shutdown },
    },
  ],
  checks: [
    dispatchedCheck<Observed>("R-offline-runner-stop-dispatch", (h) => h.dispatch),
    {
      id: "R-offline-runner-stop-turn-error",
      expectation: `a turn to a session placed on a cleanly stopped node ends within ${OFFLINE_BOUND_S} s with status error and "${RUNNER_OFFLINE}"`,
      judge: (h) =>
        h.offlineTurn && {
          holds: h.offlineTurn.status === "error" && !!h.offlineTurn.error?.includes(RUNNER_OFFLINE),
          observed: normalise({ within_s: OFFLINE_BOUND_S, status: h.offlineTurn.status, error: h.offlineTurn.error, chat: h.offlineTurn.chat }),
        },
    },
    {
      id: "R-offline-runner-stop-placement-kept",
      expectation: "the placement stays active (retryable) after the offline turn",
      judge: (h) => {
        if (h.placementAfter === undefined) return undefined;
        const p = h.placementAfter;
        return { holds: p?.state === "active", observed: { state: p?.state ?? null, runner: p?.runner ? { kind: p.runner.kind, status: p.runner.status } : null } };
      },
    },
    {
      id: "R-offline-runner-stop-local-turn",
      expectation: "a gateway-local turn answers while the node is stopped",
      judge: (h) => {
        if (!h.localTurn) return undefined;
        const { message, status, text } = h.localTurn;
        const expected = text === expectedReply(message);
        return { holds: status === "ok" && expected, observed: { status, reply: expected ? "expected" : text } };
      },
    },
    {
      id: "R-offline-runner-stop-no-launch",
      expectation: "the offline turn is never launched on the node, also not after it returns",
      judge: (h) => h.afterReturn && { holds: h.afterReturn.launches.length === 0, observed: { launches: h.afterReturn.launches.length, offlineRunAfterReturn: h.afterReturn.status } },
    },
    { id: "R-offline-runner-stop-retry", expectation: "after the node is started again, a retry turn in the session completes on the node", judge: (h) => h.retry && turnOnNode(h.retry) },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const events = new EventLog(lab.operator.client);
    await nodeScene(ctx, { evidence: { boundS: OFFLINE_BOUND_S }, atEnd: () => events.stop() }, async ({ alias, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("offline-stop") });
      const s = await openSession(lab, { workspace: ws });
      const d = await s.dispatch(alias);
      observe("dispatch", dispatchSeen(alias, d));
      if (!proceed("R-offline-runner-stop-dispatch")) return;

      // ---- stop the node host cleanly (SIGTERM; the engine waits up to 20 s before SIGKILL)
      const stop = faults.stop(lab, alias, { timeoutSeconds: 20, timeline: tl, inEffectWhen: async () => !(await nodeByAlias(lab, alias)).connected });
      const stopped = await stop.inject();
      const graceful = (stopped.detail as { graceful?: boolean } | undefined)?.graceful;
      log(`${alias} stopped (${Math.round(stopped.totalMs)} ms, ${JSON.stringify(stopped.detail)}); node.list disconnected`);
      observe("shutdown", { graceful: graceful ?? null });
      if (!proceed("P-offline-runner-stop-clean-stop")) return;

      // ---- a turn to the session placed on the stopped node
      const message = `${uniqueName("offline")} attempt while the runner is stopped`;
      const sent = await s.send(message);
      // expectation: "ends within OFFLINE_BOUND_S" (R-offline-runner-stop-turn-error): fixed, not paced
      const end = await s.wait(sent.runId, OFFLINE_BOUND_S * 1000, { expectation: true });
      const placementAfter = await s.placement();
      log(`offline turn ${sent.runId}: chat.send ${sent.status}; agent.wait within ${OFFLINE_BOUND_S} s: ${end.status} ${JSON.stringify(end.error ?? end.text ?? null)}; placement ${placementAfter?.state}`);
      const errorText = typeof end.error === "string" ? end.error : end.error === undefined ? null : JSON.stringify(end.error);
      observe("offlineTurn", { status: end.status, error: errorText, chat: events.chatOutcome(sent.runId) ?? null });
      observe("placementAfter", placementAfter ?? null);

      // ---- a gateway-local session is not affected
      const local = await openSession(lab);
      const localMessage = `${uniqueName("local")} while the runner is stopped`;
      const localEnd = await local.turn(localMessage, 60_000);
      observe("localTurn", { message: localMessage, status: localEnd.status, text: localEnd.text ?? null });

      // ---- heal: start the node again on its state volume
      const tapSince = await lab.tap(alias).seq();
      const start = await stop.heal();
      const back = await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      log(`${alias} started again (${Math.round(start.totalMs)} ms); connected after ${back.ms} ms`);
      // A turn the gateway kept waiting (not ended above) runs now: let it end before the retry.
      const offlineLater = end.status === "ok" || end.status === "error" ? end : await s.wait(sent.runId, 120_000);
      const retry = await provenWorkerTurn(lab, s.key, alias, { note: "retry after the runner is back", timeoutMs: 120_000 });
      const offlineLaunches = await launchesForRun(lab, alias, sent.runId, tapSince);
      log(`offline run after the node returned: ${offlineLater.status}; its launches on the tap: ${offlineLaunches.length}; retry: ${JSON.stringify(retry.observed)}`);
      observe("afterReturn", { launches: offlineLaunches.map((f) => ({ seq: f.seq, t: f.t })), status: offlineLater.status });
      observe("retry", retry.seen);
      Object.assign(evidence, {
        session: s.key,
        dispatch: d,
        stop: stopped,
        offline: { message, sent, end, placementAfter: placementAfter ?? null, later: offlineLater, launches: offlineLaunches },
        local: { message: localMessage, end: localEnd },
        start,
        connectedMs: back.ms,
        retry,
        events: events.events,
      });
    });
  },
});
