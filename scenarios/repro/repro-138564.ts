// Upstream: openclaw/openclaw#138564 "Queued RPC replies lose restart recovery before final
// delivery" (closed by PR #138565 "fix(gateway): preserve queued replies during restart", merged
// 2026-09-04; related PR #138071 "recover in-flight replies across restart" and PR #136713
// "gateway restart hangs while followup drain retries a draining error").
// Reported on: main before 2026.9.4 (a maintainer's report, labelled impact:message-loss, a
// regression). Every version this lab has (2026.9.4, built 2026-09-10, to 2026.9.6) is newer.
// Reporter's steps: two authenticated chat.send requests to one session with
// queueMode "followup", the first held at the model until the second is queued; both model turns
// complete; the queued turn is held at the final-delivery boundary; the gateway is closed with a
// restart expected and drainTimeoutMs 0; the session's restart-recovery state then lacks the
// still-undelivered queued reply. Cause (PR #138565): shutdown finds work by its exact gateway
// host, and the RPC lifetime resolver recorded none, so once the first chat.send's run
// registration was gone, shutdown missed the queued reply's retained admission.
// What the user should have seen: the queued followup is not lost across the restart; it stays
// eligible for restart recovery and gets its answer.
// What this lab can and cannot reach: the final-delivery boundary is inside the gateway (the
// report holds it with a hook of the gateway's own test harness); no wire or model point holds it
// from outside. The lab takes the nearest boundary it can prove: the followup accepted and
// queued behind a turn held at its model request, not yet seen by the model, when the gateway
// goes down. What OpenClaw documents for that case (docs/concepts/queue.md "Input durability",
// docs/gateway/restart-recovery.md, the same on 2026.9.4 to 2026.9.6): the interrupted turn is
// resumed a few seconds after start; input accepted but not yet in the transcript "appears as
// interrupted input after restart and requires an explicit resend"; the in-memory queue is not
// replayed.
// What it asserts (one check per restart kind, R-138564-<kind>-queued-answered): within
// ANSWER_S of the restarted gateway being ready, the queued followup is answered: its own reply
// (the scripted model's answer to it) is in the session's chat.history. Seen beside it, for the
// signature: whether the model was asked it as its own prompt after the restart, whether it
// reached the model only as context of the recovery turn ("[Queued user message ...; preserved
// as context only ...]"), and its state in chat.history's pendingInputs (queued, interrupted, or
// gone from there: in the transcript).
// Premise P-138564-followup-queued (both kinds): the followup's chat.send was accepted, and when
// the gateway went down the first turn was still held at its model request and no model
// request had carried the followup (the model server's request log). `make repro
// NAME=repro-138564 N=1 AIM_OFF=1` restarts only after the followup was answered: the premise is
// unmet and the verdict must be unknown.
// How this lab reproduces it: own lab with no node hosts, no git and no MCP servers (gateway
// sessions only). Per kind, a fresh session: a first message held at the scripted model (one
// delta streamed), then a second message with queueMode "followup"; once it shows in
// pendingInputs as queued (or after QUEUED_S), the gateway is
//   - "stop": SIGTERM, SIGKILL after GRACE_S, started again (stopStartGateway, lab/kits/session.ts);
//   - "kill": SIGKILLed and started again on its state (killGateway);
// then the operator reconnects and the session's history, pendingInputs and the model's request
// log are read until ANSWER_S after /readyz.
// Outcome on 2026.9.6 (run 20261202-031246-0d1e, a loaded machine: /readyz 34-40 s after start):
// the premise held for both kinds (the followup listed in pendingInputs as queued, the first turn
// held, the model never asked for the followup). Restart recovery resumed the first turn ~10 s
// after /readyz (its model request carries the first message as "[Queued user message from a
// previous active turn; preserved as context only ...]") and answered it. The queued followup
// was never run: not asked of the model as a prompt nor as context, no reply in 90 s, listed in
// chat.history's pendingInputs as "interrupted", and agent.wait of its runId still answers
// "timeout" (never a terminal status). That is the contract OpenClaw documents for input that
// never reached the transcript (the Control UI re-submits it from its outbox; an RPC client must
// resend), so both checks are registered as differs-from-reference, not as #138564 itself, whose
// fix (PR #138565) is older than every version here. The stop kind's stop was not graceful
// (exit 137 after the 10 s grace: the drain waits on the held turn). agent.wait of a run id from
// before the restart answers "timeout" whatever became of the run (also for the answered followup
// of the aim-off), so it is kept as evidence, not judged. The self-test (run
// 20261202-032522-c99a): caught the miss 1/1 (the followup answered before each restart). Again
// on 2026.9.6 with the findings registered (run 20261202-033210-9687): known finding both ways, 372 s.
import { isResponsesCall, type ModelRequest } from "../../lab/clients/model.ts";
import { messageText, type PendingInput } from "../../lab/clients/sessions.ts";
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { defineScenario, LabInfraError, labStep, type FindingRecord, type ScenarioContext } from "../../lab/scenario.ts";
import { armHold, isRefused, killGateway, openSession, refusal, stopStartGateway, type Session } from "../../lab/kits/session.ts";
import { scene } from "../../lab/kits/scene.ts";
import type { ScenarioTimeline } from "../../lab/kits/timeline.ts";
import { expectedReply, uniqueName } from "../../lab/kits/workers.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** The queued followup must be answered within this long of the restarted gateway being ready. */
const ANSWER_S = 90;
/** SIGTERM to SIGKILL for the "stop" kind (docker stop's grace). */
const GRACE_S = 10;
/** How long the followup is given to show as queued in pendingInputs before the restart (the queue debounces 500 ms). */
const QUEUED_S = 5;
/** OpenClaw's restart-recovery prompt to the model (the latest user message of a recovery turn). */
const RECOVERY_TEXT = "interrupted by a gateway restart";

type Kind = "stop" | "kill";

// Seen on 2026.9.6 (run 20261202-031246-0d1e), both kinds: the queued followup is kept as an
// "interrupted" pending input and never answered; the interrupted first turn is resumed and
// answered. OpenClaw documents this (docs/concepts/queue.md "Input durability": "If the Gateway
// stops before a queued input reaches the transcript, it appears as interrupted input after
// restart and requires an explicit resend. The in-memory queue is not replayed.").
const interrupted = (kind: Kind): FindingRecord => ({
  id: `R-138564-${kind}-queued-answered`,
  expectation: expectation(kind),
  signature: { within_s: ANSWER_S, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: "interrupted" },
  versions: ["2026.9.6", "2026.9.5", "2026.9.4"],
  variants: [
    {
      // matrix of 2026-12-02 (run 20261202-034151-b458 on 2026.9.4): the same loss, but 2026.9.4's
      // chat.history lists no pending input at all (none before the restart either, where 2026.9.5
      // and 2026.9.6 list the followup as queued): nothing tells the user it was lost.
      versions: "2026.9.4",
      signature: { within_s: ANSWER_S, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: null },
      note: "chat.history lists no pending input on 2026.9.4 (not before the restart either): the followup is gone without a trace",
    },
  ],
  kind: "differs-from-reference",
  evidence: `fixtures/findings/R-138564-${kind}-queued-answered.json`,
});

function expectation(kind: Kind): string {
  const how = kind === "stop" ? `stopped (SIGTERM, SIGKILL after ${GRACE_S} s)` : "SIGKILLed";
  return `a followup queued (queueMode followup) behind a running turn when the gateway is ${how} and started again is answered within ${ANSWER_S} s of the gateway being ready`;
}

export default defineScenario({
  name: "repro-138564",
  upstream: {
    issue: 138564,
    title: "Queued RPC replies lose restart recovery before final delivery",
    status: "fixed",
    fixPr: 138565,
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/138564",
  },
  protocolSteps: [
    "As an operator, `chat.send` message A to a session and hold its model request (one streamed delta, then nothing).",
    "`chat.send` message B to the same session with `queueMode: \"followup\"`; `chat.history` lists it in `pendingInputs` as queued, and no model request has carried it.",
    "Stop the gateway (SIGTERM, SIGKILL after 10 s; or SIGKILL) and start it again on the same state directory.",
    "After `/readyz`, reconnect and read `chat.history` for 90 s: A is resumed and answered; B is never run and is listed in `pendingInputs` as `interrupted` on 2026.9.5 and 2026.9.6 (OpenClaw documents that such input must be resent), with no pending input at all on 2026.9.4.",
  ],
  proves: `openclaw#138564: a followup queued (queueMode followup) behind a running turn when the gateway restarts (SIGTERM, or SIGKILL) is not lost: it is answered within ${ANSWER_S} s of the gateway being ready`,
  topology: "own",
  spec: { nodes: { count: 0 }, mcp: { servers: [] }, git: { enabled: false } },
  bug: ["R-138564-stop-queued-answered", "R-138564-kill-queued-answered"],
  findings: [interrupted("stop"), interrupted("kill")],
  premises: [
    {
      id: "P-138564-followup-queued",
      what: "for each restart kind, the followup's chat.send was accepted, and when the gateway went down the first turn was still held at its model request and no model request had carried the followup",
      aimOff: "the gateway is restarted only after the followup was answered",
    },
  ],
  timeoutMs: 900_000,
  async run(ctx) {
    const atEnd = () => ctx.lab.model.release().catch(() => {});
    await scene(ctx, { evidence: { bounds: { ANSWER_S, GRACE_S, QUEUED_S } }, atEnd }, async ({ evidence, tl }) => {
      let queuedSoFar = true;
      const seen: Record<string, unknown> = {};
      for (const kind of ["stop", "kill"] as const) {
        const r = await variant(ctx, tl, kind);
        evidence[kind] = r.evidence;
        queuedSoFar &&= r.queued.met;
        seen[kind] = r.queued.observed;
        // Proven after each kind, so a later kind that throws leaves the earlier ones' proof.
        ctx.premise({ id: "P-138564-followup-queued", met: queuedSoFar, observed: seen });
      }
    });
  },
});

/** The followup's pending input (by its run id, else by its text). */
function pendingOf(items: PendingInput[], runId: string, token: string): PendingInput | undefined {
  return items.find((p) => p.runId === runId) ?? items.find((p) => JSON.stringify(p.message ?? "").includes(token));
}

/** Model requests that carried `token` anywhere in their body (as the prompt or as context). */
const carrying = (requests: ModelRequest[], token: string) => requests.filter((r) => isResponsesCall(r) && JSON.stringify(r.body ?? "").includes(token));

async function variant(ctx: ScenarioContext, tl: ScenarioTimeline, kind: Kind): Promise<{ queued: { met: boolean; observed: unknown }; evidence: Record<string, unknown> }> {
  const { lab, log, check, signal, aimOff } = ctx;
  const s = await openSession(lab);
  const firstToken = uniqueName("tok");
  const first = `${firstToken} first task in flight when the followup is queued`;
  const token = uniqueName("tok");
  const followup = `${token} queued followup behind the running turn`;
  const want = expectedReply(followup);

  // ---- a first turn, held at its model request (one delta streamed: in flight)
  await armHold(lab, firstToken);
  const sent = await s.send(first);
  const held = await labStep(`[${kind}] holding the first turn at its model request`, () => s.hold(firstToken, 90_000));
  log(`[${kind}] first turn ${sent.runId} in ${s.key} held at model request ${held.id}`);

  // ---- the followup, queued behind it
  const accepted = await s.send(followup, { queueMode: "followup" }).then((r) => r, (err: unknown) => refusal(err));
  if (isRefused(accepted)) throw new LabInfraError(`[${kind}] chat.send with queueMode "followup" was refused (${accepted.code}: ${accepted.message}): the state the report starts from was not reached`);
  const queued = await pollUntil(
    "the followup in pendingInputs as queued",
    async () => pendingOf(await s.pendingInputs(), accepted.runId, token),
    (p) => p?.state === "queued",
    { deadlineMs: QUEUED_S * 1000, intervalMs: 250, signal },
  );
  log(`[${kind}] followup ${accepted.runId} accepted (${accepted.status}); pendingInputs: ${queued.last ? `${queued.last.state} (${queued.ms} ms)` : "not listed"}`);

  // ---- the aim-off: let both turns finish before the restart
  let answeredBefore: boolean | null = null;
  if (aimOff) {
    await lab.model.release(held.id);
    const end = await s.waitEnd(accepted.runId, 60_000, { signal });
    answeredBefore = (await s.history(100)).some((m) => m.role === "assistant" && messageText(m.content) === want);
    log(`[${kind}] aim-off: the followup's run ended ${end.status} before the restart (answered ${answeredBefore})`);
  }

  // ---- the restart
  const beforeRestart = await lab.model.requests();
  const heldStill = (await lab.model.held()).some((h) => h.id === held.id);
  const restartAt = Date.now();
  const restart = kind === "stop" ? await stopStartGateway(lab, { graceSeconds: GRACE_S, timeline: tl, signal }) : await killGateway(lab, { timeline: tl, signal });
  if (!lab.operator.client.connected) throw new LabInfraError(`[${kind}] the lab's operator did not reconnect after the gateway restart`);
  const readyAt = Date.now() - restart.connectMs;
  log(`[${kind}] gateway back: ${JSON.stringify(restart)}`);

  const seenBefore = carrying(beforeRestart, token).map((r) => r.id);
  const premise = { met: heldStill && seenBefore.length === 0, observed: { accepted: accepted.status, firstHeldAtRestart: heldStill, followupModelRequestsBefore: seenBefore.length, pendingBefore: queued.last?.state ?? null } };

  // ---- after the restart: is the followup answered?
  const answered = await pollUntil(
    "the queued followup's answer in the session's history",
    async () => (await s.history(100)).some((m) => m.role === "assistant" && messageText(m.content) === want),
    (x) => x,
    { deadlineMs: ANSWER_S * 1000, from: readyAt, intervalMs: 1_000, signal },
  );
  const after = (await lab.model.requests({ since: beforeRestart.at(-1)?.seq ?? 0 })).filter(isResponsesCall);
  const asPrompt = after.filter((r) => (r.userText ?? "").includes(token));
  const asContext = carrying(after, token).filter((r) => !(r.userText ?? "").includes(token));
  const pendingAfter = pendingOf(await s.pendingInputs(), accepted.runId, token);
  const runAfter = await s.wait(accepted.runId, 2_000).then(
    (e) => ({ status: e.status, error: e.error ?? null }),
    (err: unknown) => refusal(err),
  );
  log(
    `[${kind}] after the restart: followup answered ${answered.held} (${answered.ms} ms after ready); model asked it as its prompt ${asPrompt.length}x, as context only ${asContext.length}x; pendingInputs: ${pendingAfter?.state ?? "not listed"}; agent.wait of its run: ${JSON.stringify(runAfter)}`,
  );

  check({
    id: `R-138564-${kind}-queued-answered`,
    expectation: expectation(kind),
    holds: answered.held,
    observed: normalise({
      within_s: ANSWER_S,
      answered: answered.held,
      askedAsPrompt: asPrompt.length > 0,
      onlyAsContext: asPrompt.length === 0 && asContext.length > 0,
      pendingInput: pendingAfter?.state ?? null,
    }),
  });

  return {
    queued: premise,
    evidence: {
      session: s.key,
      first: { message: first, runId: sent.runId, held },
      followup: { message: followup, accepted, pendingBefore: queued.last ?? null, pendingAfter: pendingAfter ?? null, answeredBefore, runAfter },
      restart: { ...restart, restartAt, readyAt },
      answered,
      recoveryTurns: after.filter((r) => (r.userText ?? "").includes(RECOVERY_TEXT)).length,
      modelRequestsAfter: after.map((r) => ({ id: r.id, seq: r.seq, status: r.status, rule: r.rule, userText: normaliseText(r.userText ?? "").slice(0, 200), carriesFollowup: JSON.stringify(r.body ?? "").includes(token), time: r.time })),
      history: await s.history(100),
    },
  };
}
