// Upstream: openclaw/openclaw#155333 "Cloud-worker dispatch aborts an active session before the
// replacement worker is ready" (open; labels needs-product-decision, no-new-fix-pr).
// Reported on: OpenClaw v2026.9.4 ("and still on main"), for every cloud-worker provider.
// Reporter's steps: create a repository-backed session whose first turn begins on the Gateway;
// while that turn is still running, call sessions.dispatch to a worker; the local turn is
// aborted before the target worker is ready ("The active task is aborted"; in 9.4 labelled
// OPENCLAW_RESTART_ABORT "agent run aborted for restart" though nothing restarted). If
// provisioning then fails or stalls, no worker receives the task: the original run is lost.
// What the user should have seen (asserted here): an active turn is not aborted before the
// replacement worker is ready, or the dispatch is refused and the turn completes
// (R-155333-abort-before-ready); and the task is not lost: its answer is in the session
// within ANSWER_S of the dispatch settling (R-155333-task-kept).
// Outcome: REPRODUCED on 2026.9.6 (both checks; registered findings below; run
// 20261130-122841-8059 first, confirmed KNOWN-FINDING with the same signatures in 20261130-123606-f608).
// Fix: none (no fix PR, product decision pending). In 2026.9.6 dist the local -> worker barrier
// (server-worker-placement-startup-*.mjs runLocalBarrier) still does startDispatch,
// clearSessionQueues, revokeSessionAuthority and interruptSessionWorkAdmissions before any
// provisioning, and a paired device (sessions.dispatch {deviceId}) takes the same path.
// How this lab reproduces it: own lab, one node host (device pairing by subnet), no MCP. A
// worker session on a published workspace (placement local); a turn's model request is held at
// the scripted model (one delta streamed: provably in flight on the gateway). The node's bundle
// install is stalled STALL_S at its wire tap (wire.delay on gw->node worker.bundle.install.v1),
// so "the worker is ready" is far from the dispatch call; then sessions.dispatch to node-1.
// Observed where it happens: the held model request's status and end time (lab.model), the
// first worker.bundle.install.v1 / worker.launch.v1 on tap-node-1, the dispatch's answer and
// when it came (it answers once the placement is active), agent.wait of the run, chat.history.
// The hold is released once the dispatch settled (or after DISPATCH_S), so a gateway that waits
// for the turn, or refuses the dispatch, lets the turn complete.
// Premise P-155333-turn-on-gateway: the held turn runs on the gateway (the session has no
// placement, or a local one, while its model request is held), as the reporter's first turn did;
// otherwise the dispatch does not move a running gateway turn and the lab cannot tell (unknown).
// It has no aim-off (not self-tested).
import { isResponsesCall, type ModelRequest } from "../../lab/clients/model.ts";
import { messageText } from "../../lab/clients/sessions.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { defineScenario, LabInfraError, type FindingRecord } from "../../lab/scenario.ts";
import { EventLog } from "../../lab/kits/events.ts";
import { wireSummary } from "../../lab/kits/node-wire.ts";
import { waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { armHold, isRefused, openSession, refusal, type Refused, type RunEnd } from "../../lab/kits/session.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { expectedReply, uniqueName, type Dispatched } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** How long the node's bundle install is held at its tap (the worker cannot be ready before). */
const STALL_S = 15;
/** How long the dispatch is given to settle while the turn is held. */
const DISPATCH_S = 90;
/** How long the run is given to end once the model request is released. */
const RUN_S = 60;
/** How long after the dispatch settled (and the hold was released) the task's answer may take. */
const ANSWER_S = 60;

// Registered findings: what openclaw@2026.9.6 was seen to do (run 20261130-122841-8059): the held
// gateway turn was aborted 1.2 s after the dispatch call, before the gateway had even sent the
// node its bundle install (1.4 s) and 19.8 s before the placement was active; agent.wait says
// "error" with stopReason "restart" (the mislabel the reporter saw in 9.4: no restart happened),
// the chat event "aborted". The placement then went active, no worker was launched and the
// task was never answered: it is lost.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): RUN_S, the turn's
// agent.wait, and ANSWER_S.
const findings: FindingRecord[] = [
  {
    id: "R-155333-abort-before-ready",
    expectation: "a turn running on the gateway is not aborted by sessions.dispatch before the replacement worker is ready (placement active), or the dispatch is refused and the turn completes",
    signature: { stall_s: 15, within_s: 90, dispatch: "active", modelRequest: "aborted", abortedBefore: "bundle-install", run: { status: "error", stopReason: "restart", error: null, chat: "aborted" } },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-155333-abort-before-ready.json",
  },
  {
    id: "R-155333-task-kept",
    expectation: `the task of the turn running when the session was dispatched is not lost: its answer is in the session's history within ${ANSWER_S} s of the dispatch settling`,
    signature: { within_s: 60, dispatch: "active", run: "error", answered: false, modelRequestsWithTask: ["aborted"], launches: 0 },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-155333-task-kept.json",
  },
];

/**
 * What the body saw once the turn ended and the task's answer was waited for (JSON, for the
 * history); the checks below judge it. Clock values are epoch ms.
 */
interface Outcome {
  /** sessions.dispatch's answer (it answers once the placement is active) or its refusal; when it was called and settled. */
  dispatch: Dispatched | Refused;
  dispatchAt: number;
  settledAt: number | null;
  /** The held model request at the end: its status and end time, and when the poll first saw it aborted. */
  model: { status: string | null; endedAt: string | null; abortedSeenAt: number | null };
  /** When tap-node-1 saw each worker.bundle.install.v1 and each worker.launch.v1 the gateway sent the node. */
  bundleInstallsAt: number[];
  launchesAt: number[];
  /** agent.wait of the turn (error absent when it said none) and the chat event's last state for the run. */
  run: { status: string; stopReason: string | null; error?: unknown; text: string | null; chat: string | null };
  /** The task's answer as the scripted model gives it, and whether it was in the session's history within ANSWER_S of the dispatch settling. */
  expected: string;
  answered: boolean;
  /** The statuses of the model requests that carried the task. */
  modelRequestsWithTask: string[];
}
export interface Observed {
  /** The session's placement while its first turn was held: on the gateway (no placement, or a local one), else that placement's state. */
  firstTurn?: { onGateway: boolean; placement?: string };
  outcome?: Outcome;
}

/** What the outcome says, as the checks, the log and the evidence read it. */
function read(o: Outcome) {
  const d = o.dispatch;
  const abortedAt = o.model.status === "aborted" ? (o.model.endedAt ? Date.parse(o.model.endedAt) : (o.model.abortedSeenAt ?? undefined)) : undefined;
  const installAt = o.bundleInstallsAt[0];
  const launchAt = o.launchesAt[0];
  const active = !isRefused(d) && d.placement.state === "active";
  const readyAt = active ? (o.settledAt ?? undefined) : undefined;
  const abortedBefore = abortedAt === undefined ? null : installAt === undefined || abortedAt < installAt ? "bundle-install" : readyAt === undefined || abortedAt < readyAt ? "placement-active" : null;
  const dispatchSeen = isRefused(d) ? `${d.code}: ${normaliseText(d.message)}` : d.placement.state;
  const e = o.run.error;
  const runEnd = {
    status: o.run.status,
    stopReason: o.run.stopReason,
    error: e === undefined ? null : normaliseText(typeof e === "string" ? e : JSON.stringify(e)).slice(0, 300),
    chat: o.run.chat,
  };
  const turnCompleted = o.run.status === "ok" && o.run.text === o.expected;
  return { abortedAt, installAt, launchAt, readyAt, abortedBefore, dispatchSeen, runEnd, turnCompleted };
}

export default defineScenario<Observed>({
  name: "repro-155333",
  upstream: {
    issue: 155333,
    title: "Cloud-worker dispatch aborts an active session before the replacement worker is ready",
    status: "open",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/155333",
  },
  protocolSteps: [
    "Create a worker session on a published workspace (placement local) and pair a node that can host workers.",
    "As an operator, `chat.send` a message to it and hold the model request (one streamed delta, then nothing): the turn runs on the gateway.",
    "Delay the node's `worker.bundle.install.v1` (15 s), then send `{\"type\":\"req\",\"method\":\"sessions.dispatch\",\"params\":{\"key\":\"<session>\",\"deviceId\":\"<node>\"}}`.",
    "Watch the held model request, the node's socket and `agent.wait`: the request is aborted about 1 s after the dispatch, before `worker.bundle.install.v1` reaches the node; `agent.wait` answers `error` with `stopReason: \"restart\"` though nothing restarted; the task is never answered in `chat.history` (expected: the turn is not aborted before the worker is ready, or the dispatch is refused and the turn completes).",
  ],
  proves: "openclaw#155333: sessions.dispatch of a session with a running gateway turn does not abort that turn before the worker is ready (or is refused, and the turn completes), and the task is not lost",
  topology: "own",
  spec: { nodes: { count: 1, devicePairing: "subnet" }, mcp: { servers: [] } },
  needs: [{ method: "sessions.dispatch", why: "the bug is in dispatching a session to a worker" }],
  findings,
  premises: [
    {
      id: "P-155333-turn-on-gateway",
      what: "the held turn runs on the gateway: while its model request is held the session has no placement, or a local one",
      judge: (h) => h.firstTurn && { met: h.firstTurn.onGateway, observed: h.firstTurn },
    },
  ],
  checks: [
    {
      id: "R-155333-abort-before-ready",
      expectation: "a turn running on the gateway is not aborted by sessions.dispatch before the replacement worker is ready (placement active), or the dispatch is refused and the turn completes",
      judge: (h) => {
        const o = h.outcome;
        if (!o) return undefined;
        const r = read(o);
        return {
          holds: isRefused(o.dispatch) ? o.model.status !== "aborted" && r.turnCompleted : r.abortedBefore === null && (o.model.status !== "aborted" || r.turnCompleted || o.answered),
          observed: normalise({ stall_s: STALL_S, within_s: DISPATCH_S, dispatch: r.dispatchSeen, modelRequest: o.model.status ?? null, abortedBefore: r.abortedBefore, run: r.runEnd }),
        };
      },
    },
    {
      id: "R-155333-task-kept",
      expectation: `the task of the turn running when the session was dispatched is not lost: its answer is in the session's history within ${ANSWER_S} s of the dispatch settling`,
      judge: (h) => {
        const o = h.outcome;
        if (!o) return undefined;
        return {
          holds: o.answered,
          observed: normalise({ within_s: ANSWER_S, dispatch: read(o).dispatchSeen, run: o.run.status, answered: o.answered, modelRequestsWithTask: o.modelRequestsWithTask, launches: o.launchesAt.length }),
        };
      },
    },
  ],
  timeoutMs: 420_000,
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const events = new EventLog(lab.operator.client);
    const atEnd = async () => {
      events.stop();
      await lab.model.release().catch(() => {});
    };
    await nodeScene(ctx, { evidence: { bounds: { STALL_S, DISPATCH_S, RUN_S, ANSWER_S } }, atEnd }, async ({ alias, evidence, tl }) => {
      await waitForWorkerHost(lab, alias, { signal });
      const ws = await publishWorkspace(lab, { repo: uniqueName("repro-155333") });
      const s = await openSession(lab, { workspace: ws });
      const token = uniqueName("tok");
      const message = `${token} long task started on the gateway`;

      // ---- a turn running on the gateway, held at its model request
      await armHold(lab, token);
      const sent = await s.send(message);
      const held = await s.hold(token, 60_000);
      const before = await s.placement();
      observe("firstTurn", !before || before.state === "local" ? { onGateway: true } : { onGateway: false, placement: before.state });
      if (!proceed("P-155333-turn-on-gateway")) return;
      log(`turn ${sent.runId} held at model request ${held.id} (streamed ${JSON.stringify(held.streamedText)}); placement ${before?.state ?? "none"}`);

      // ---- stall provisioning at the node's tap, then dispatch
      const tapSince = await lab.tap(alias).seq();
      const stall = faults.wire.delay({ lab, node: alias }, STALL_S * 1000, { dir: "gw->node", command: "worker.bundle.install.v1" }, { once: true, timeline: tl, label: `${alias} worker.bundle.install.v1 +${STALL_S} s` });
      await stall.inject();
      const dispatchAt = Date.now();
      let settledAt: number | undefined;
      const dispatching: Promise<Dispatched | Refused> = s.dispatch(alias).then(
        (d) => ((settledAt = Date.now()), d),
        (err: unknown) => ((settledAt = Date.now()), refusal(err)),
      );

      // Watch the held model request while the dispatch goes on, until the dispatch settles.
      let abortedSeenAt: number | undefined;
      const modelReq = async (): Promise<ModelRequest | undefined> => (await lab.model.requests()).find((r) => r.id === held.id);
      const phase1 = await pollUntil(
        "the dispatch to settle",
        async () => {
          const r = await modelReq();
          if (r?.status === "aborted" && abortedSeenAt === undefined) abortedSeenAt = Date.now();
          return { settled: settledAt !== undefined, model: r?.status ?? null };
        },
        (v) => v.settled,
        { deadlineMs: DISPATCH_S * 1000, from: dispatchAt, intervalMs: 200, signal },
      );
      const modelAtSettle = await modelReq();
      log(`dispatch ${phase1.held ? `settled after ${(settledAt ?? 0) - dispatchAt} ms` : `not settled within ${DISPATCH_S} s`}; model request ${modelAtSettle?.status}`);

      // ---- let the turn finish wherever it is, then see how it ended
      const released = modelAtSettle?.status === "held" ? await lab.model.release(held.id) : [];
      const releasedAt = Date.now();
      const dispatched = await dispatching;
      // expectation: RUN_S bounds whether the turn completed (R-155333-abort-before-ready): fixed, not paced
      const end: RunEnd = await s.wait(sent.runId, RUN_S * 1000, { expectation: true });
      const fired = stall.rule?.firstFired ?? (await lab.tap(alias).rule(stall.ruleId))?.firstFired;
      await stall.heal();
      if (!isRefused(dispatched) && !fired) throw new LabInfraError(`the dispatch was accepted (${dispatched.placement.state}) but the bundle-install stall rule on ${alias}'s tap never fired: the worker's readiness was not delayed`);

      // Is the task answered anywhere (on the gateway or handed to the worker)?
      const want = expectedReply(message);
      const answeredFrom = Math.max(settledAt ?? releasedAt, releasedAt);
      const answer = await pollUntil(
        "the task's answer in the session's history",
        async () => (await s.history(100)).filter((m) => m.role === "assistant" && messageText(m.content) === want).length,
        (n) => n > 0,
        { deadlineMs: ANSWER_S * 1000, from: answeredFrom, intervalMs: 500, signal },
      );

      const wire = await wireSummary(lab, alias, tapSince);
      const modelFinal = await modelReq();
      const tokenRequests = (await lab.model.requests()).filter((r) => isResponsesCall(r) && (r.userText ?? "").includes(token));
      const outcome: Outcome = {
        dispatch: dispatched,
        dispatchAt,
        settledAt: settledAt ?? null,
        model: { status: modelFinal?.status ?? null, endedAt: modelFinal?.endedAt ?? null, abortedSeenAt: abortedSeenAt ?? null },
        bundleInstallsAt: wire.bundleInstalls.map((f) => f.t),
        launchesAt: wire.launches.map((f) => f.t),
        run: { status: end.status, stopReason: end.stopReason ?? null, ...(end.error !== undefined ? { error: end.error } : {}), text: end.text ?? null, chat: events.chatOutcome(sent.runId) ?? null },
        expected: want,
        answered: answer.held,
        modelRequestsWithTask: tokenRequests.map((r) => r.status),
      };
      const { abortedAt, installAt, launchAt, readyAt, dispatchSeen, runEnd } = read(outcome);
      log(
        `dispatch: ${dispatchSeen} (${(settledAt ?? NaN) - dispatchAt} ms); model request ${modelFinal?.status}, ended ${abortedAt === undefined ? "-" : `${abortedAt - dispatchAt} ms`} after the dispatch call; ` +
          `first bundle install at the tap ${installAt === undefined ? "never" : `${Math.round(installAt - dispatchAt)} ms`}, first launch ${launchAt === undefined ? "never" : `${Math.round(launchAt - dispatchAt)} ms`}; run ${JSON.stringify(runEnd)}; answered ${answer.held} (${answer.ms} ms); model requests with the token: ${tokenRequests.map((r) => r.status).join(", ")}`,
      );
      // R-155333-abort-before-ready and R-155333-task-kept judge it (checks above).
      observe("outcome", outcome);

      Object.assign(evidence, {
        session: s.key,
        message,
        runId: sent.runId,
        held,
        placementBefore: before ?? null,
        dispatch: { at: dispatchAt, settledAt: settledAt ?? null, result: dispatched, phase1: { held: phase1.held, ms: phase1.ms, polls: phase1.polls } },
        model: { atSettle: modelAtSettle ?? null, final: modelFinal ?? null, abortedSeenAt: abortedSeenAt ?? null, released, releasedAt, requestsWithToken: tokenRequests.map((r) => ({ id: r.id, status: r.status, heldAt: r.heldAt, endedAt: r.endedAt, output: r.output })) },
        msAfterDispatchCall: {
          modelAborted: abortedAt === undefined ? null : abortedAt - dispatchAt,
          stallFired: fired ? Math.round(fired.t - dispatchAt) : null,
          firstBundleInstall: installAt === undefined ? null : Math.round(installAt - dispatchAt),
          firstLaunch: launchAt === undefined ? null : Math.round(launchAt - dispatchAt),
          placementActive: readyAt === undefined ? null : readyAt - dispatchAt,
        },
        run: end,
        answer,
        placementAfter: (await s.placement()) ?? null,
        wire: { bundleInstalls: wire.bundleInstalls.map((f) => ({ seq: f.seq, t: f.t, action: f.action })), launches: wire.launches.map((f) => ({ seq: f.seq, t: f.t })), bundleDownloads: wire.bundleDownloads },
        history: await s.history(100),
        events: events.events,
      });
    });
  },
});
