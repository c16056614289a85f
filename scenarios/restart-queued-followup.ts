// What OpenClaw does with a followup queued behind a running turn when the gateway restarts,
// judged against what OpenClaw documents and against the reference harness.
// OpenClaw documents it (docs/concepts/queue.md "Input durability", docs/gateway/restart-recovery.md,
// the same on 2026.9.4 to 2026.9.6): the interrupted turn is resumed a few seconds after start;
// input accepted but not yet in the transcript "appears as interrupted input after restart and
// requires an explicit resend"; the in-memory queue is not replayed. The reference harness
// (seeds/000) expects the queued followup answered after the restart.
// Not a reproduction of openclaw/openclaw#138564 ("Queued RPC replies lose restart recovery
// before final delivery", fixed by PR #138565 before every version here): that report's state,
// both turns complete and the queued reply held at its final-delivery boundary, is inside the
// gateway (the report holds it with a hook of the gateway's own test harness) and this lab cannot
// reach it from outside. This scenario was repro-138564 until the lab read it again against the
// thread (fleetlab #37): the state it reaches (a followup queued and not yet seen by the model)
// is another one, and what OpenClaw does there is its documented contract. findings.md's
// field-bug table says "not reached" in #138564's row.
// What it asserts, per restart kind (stop: SIGTERM, SIGKILL after GRACE_S; kill: SIGKILL):
// - E-restart-followup-<kind>-kept (OpenClaw's documented contract; a fail when short): after the
//   restart the followup is not lost silently: it is answered, or chat.history's pendingInputs
//   lists it as "interrupted" for the client to resend. Judged where the version keeps this
//   client's input durably: the followup listed in pendingInputs before the restart (2026.9.5 and
//   2026.9.6 document durability for every chat.send). 2026.9.4 documents it for Control UI input
//   only and never lists an RPC client's followup: not judged there, and the log says so (a
//   chat.history with no pendingInputs field at all is not read as an empty list either).
// - R-restart-followup-<kind>-answered (the reference harness's expectation, registered as
//   differs-from-reference): the queued followup is answered within ANSWER_S of the restarted
//   gateway being ready (its own reply in chat.history). Seen beside it, for the signature:
//   whether the model was asked it as its own prompt after the restart, or only as context of the
//   recovery turn ("[Queued user message ...; preserved as context only ...]"), and its state in
//   pendingInputs (null when not listed; "no pendingInputs field" when chat.history has none).
// Premise P-restart-followup-queued (both kinds): the followup's chat.send was accepted, and when
// the gateway went down the first turn was still held at its model request and no model request
// had carried the followup (the model server's request log). `make repro
// NAME=restart-queued-followup N=1 AIM_OFF=1` restarts only after the followup was answered: the
// premise is unmet and the verdict must be unknown.
// How: own lab with no node hosts, no git and no MCP servers (gateway sessions only). Per kind, a
// fresh session: a first message held at the scripted model (one delta streamed), then a second
// message with queueMode "followup"; once it shows in pendingInputs as queued (or after
// QUEUED_S), the gateway is stopped or killed and started again on its state
// (stopStartGateway/killGateway, lab/kits/session.ts); then the operator reconnects and the
// session's history, pendingInputs and the model's request log are read until ANSWER_S after
// /readyz.
// Outcome on 2026.9.6 (runs 20261202-031246-0d1e and 20261203-235947-f153 as repro-138564): the
// premise held for both kinds. Restart recovery resumed the first turn ~10 s after /readyz and
// answered it. The queued followup was never run: not asked of the model as a prompt nor as
// context, no reply in 90 s, listed in pendingInputs as "interrupted", and agent.wait of its runId
// answers "timeout" (kept as evidence, not judged: it answers so for any run id from before the
// restart, the aim-off's answered followup too). On 2026.9.4 (matrix run 20261204-033256-0f58)
// the same, but pendingInputs (a field it has: it lists the restart recovery's own input) never
// lists the followup, before the restart or after. The stop kind's stop was not graceful (exit 137 after the
// 10 s grace: the drain waits on the held turn).
import { isResponsesCall, type ModelRequest } from "../lab/clients/model.ts";
import { messageText, type PendingInput } from "../lab/clients/sessions.ts";
import { normalise, normaliseText } from "../lab/findings/normalise.ts";
import { defineScenario, LabInfraError, labStep, type CheckDef, type FindingRecord, type ScenarioContext } from "../lab/scenario.ts";
import { armHold, isRefused, killGateway, openSession, refusal, stopStartGateway, type Session } from "../lab/kits/session.ts";
import { scene } from "../lab/kits/scene.ts";
import type { ScenarioTimeline } from "../lab/kits/timeline.ts";
import { expectedReply, uniqueName } from "../lab/kits/workers.ts";
import { pollUntil } from "../lab/core/wait.ts";

/** The queued followup must be answered within this long of the restarted gateway being ready. */
const ANSWER_S = 90;
/** SIGTERM to SIGKILL for the "stop" kind (docker stop's grace). */
const GRACE_S = 10;
/** How long the followup is given to show as queued in pendingInputs before the restart (the queue debounces 500 ms). */
const QUEUED_S = 5;
/** OpenClaw's restart-recovery prompt to the model (the latest user message of a recovery turn). */
const RECOVERY_TEXT = "interrupted by a gateway restart";
/** The followup's pending state on a version whose chat.history carries no pendingInputs field. */
const NO_FIELD = "no pendingInputs field";

type Kind = "stop" | "kill";

// Seen on 2026.9.4 to 2026.9.6, both kinds: the queued followup is never answered; 2026.9.5 and
// 2026.9.6 list it as "interrupted", as OpenClaw documents ("If the Gateway stops before a queued
// input reaches the transcript, it appears as interrupted input after restart and requires an
// explicit resend. The in-memory queue is not replayed."). Differs from the reference, not a bug.
const notAnswered = (kind: Kind): FindingRecord => ({
  id: `R-restart-followup-${kind}-answered`,
  expectation: expectation(kind),
  signature: { within_s: ANSWER_S, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: "interrupted" },
  versions: ["2026.9.6", "2026.9.5", "2026.9.4"],
  variants: [
    {
      // 2026.9.4's chat.history lists pending inputs (the restart recovery's own, for one) but
      // never this RPC client's followup, before the restart or after: its docs promise input
      // durability for Control UI input only (run 20261204-033256-0f58).
      versions: "2026.9.4",
      signature: { within_s: ANSWER_S, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: null },
      note: "2026.9.4 never lists an RPC client's queued followup in pendingInputs (its docs promise input durability for Control UI input only): neither answered nor listed",
    },
  ],
  kind: "differs-from-reference",
  evidence: `fixtures/findings/R-restart-followup-${kind}-answered.json`,
});

function expectation(kind: Kind): string {
  const how = kind === "stop" ? `stopped (SIGTERM, SIGKILL after ${GRACE_S} s)` : "SIGKILLed";
  return `a followup queued (queueMode followup) behind a running turn when the gateway is ${how} and started again is answered within ${ANSWER_S} s of the gateway being ready`;
}

/** The followup's pending input as chat.history listed it (by its run id, else by its text); NO_FIELD: chat.history had no pendingInputs field; absent: not listed. */
type Pending = PendingInput | typeof NO_FIELD;

// The body drives and observes (ctx.observe); the checks and the premise below judge what it observed.
/** One restart kind as observed up to the restart: what P-restart-followup-queued reads. */
export interface QueuedSeen {
  /** chat.send's status for the followup. */
  accepted: string;
  /** The first turn was still held at its model request when the gateway went down. */
  firstHeldAtRestart: boolean;
  /** The model requests before the restart that carried the followup's token (ids). */
  carriedBefore: string[];
  /** The followup in pendingInputs before the restart. */
  pendingBefore?: Pending;
}
/** One restart kind as observed after the restart: what its checks read. */
export interface AfterRestart {
  /** How long after the gateway was ready the followup's answer was waited for. */
  within_s: number;
  /** The followup's answer showed in the session's history within that time. */
  answered: boolean;
  /** Model requests after the restart that carried the followup's token: as their own prompt, and only as context (ids). */
  asPrompt: string[];
  asContext: string[];
  /** The followup in pendingInputs before and after the restart. */
  pendingBefore?: Pending;
  pendingAfter?: Pending;
}
export type Observed = {
  /** The kinds run so far (in order), once each returned: the premise's proof. */
  queued?: Partial<Record<Kind, QueuedSeen>>;
  stop?: AfterRestart;
  kill?: AfterRestart;
};

/** OpenClaw's contract, judged where the version keeps this client's input durably: the followup listed in pendingInputs before the restart (or answered). */
const keptCheck = (kind: Kind): CheckDef<Observed> => ({
  id: `E-restart-followup-${kind}-kept`,
  expectation: `a followup queued behind a running turn when the gateway is ${kind === "stop" ? "stopped" : "SIGKILLed"} and started again is not lost silently: it is answered, or chat.history lists it in pendingInputs as interrupted for the client to resend (docs/concepts/queue.md "Input durability")`,
  optional: true,
  judge: (h) => {
    const a = h[kind];
    if (!a) return undefined;
    const listedBefore = a.pendingBefore !== undefined && a.pendingBefore !== NO_FIELD;
    if (!a.answered && !listedBefore) return undefined;
    return { holds: a.answered || stateOf(a.pendingAfter) === "interrupted", observed: normalise({ within_s: a.within_s, answered: a.answered, pendingInput: stateOf(a.pendingAfter) }) };
  },
});
/** The reference harness's expectation: answered. */
const answeredCheck = (kind: Kind): CheckDef<Observed> => ({
  id: `R-restart-followup-${kind}-answered`,
  expectation: expectation(kind),
  judge: (h) => {
    const a = h[kind];
    if (!a) return undefined;
    return {
      holds: a.answered,
      observed: normalise({
        within_s: a.within_s,
        answered: a.answered,
        askedAsPrompt: a.asPrompt.length > 0,
        onlyAsContext: a.asPrompt.length === 0 && a.asContext.length > 0,
        pendingInput: stateOf(a.pendingAfter),
      }),
    };
  },
});
const KEPT = { stop: keptCheck("stop"), kill: keptCheck("kill") };
const ANSWERED = { stop: answeredCheck("stop"), kill: answeredCheck("kill") };

/** Per kind: the followup's chat.send accepted, the first turn still held at the restart, no model request had carried the followup. */
const queuedMet = (q: QueuedSeen) => ({ met: q.firstHeldAtRestart && q.carriedBefore.length === 0, observed: { accepted: q.accepted, firstHeldAtRestart: q.firstHeldAtRestart, followupModelRequestsBefore: q.carriedBefore.length, pendingBefore: stateOf(q.pendingBefore) } });

export default defineScenario<Observed>({
  name: "restart-queued-followup",
  protocolSteps: [
    "As an operator, `chat.send` message A to a session and hold its model request (one streamed delta, then nothing).",
    "`chat.send` message B to the same session with `queueMode: \"followup\"`; `chat.history` lists it in `pendingInputs` as queued (2026.9.5, 2026.9.6), and no model request has carried it.",
    "Stop the gateway (SIGTERM, SIGKILL after 10 s; or SIGKILL) and start it again on the same state directory.",
    "After `/readyz`, reconnect and read `chat.history` for 90 s: A is resumed and answered; B is never run. On 2026.9.5 and 2026.9.6 `pendingInputs` lists it as `interrupted` (OpenClaw documents that such input must be resent: docs/concepts/queue.md \"Input durability\"); 2026.9.4 never lists B in `pendingInputs` (its docs promise input durability for Control UI input only). The reference harness expects B answered.",
  ],
  proves: `a followup queued (queueMode followup) behind a running turn when the gateway restarts (SIGTERM, or SIGKILL) is not lost silently: answered, or listed as interrupted input to resend (OpenClaw's documented contract); the reference expects it answered within ${ANSWER_S} s of the gateway being ready`,
  topology: "own",
  spec: { nodes: { count: 0 }, mcp: { servers: [] }, git: { enabled: false } },
  findings: [notAnswered("stop"), notAnswered("kill")],
  premises: [
    {
      id: "P-restart-followup-queued",
      what: "for each restart kind, the followup's chat.send was accepted, and when the gateway went down the first turn was still held at its model request and no model request had carried the followup",
      aimOff: "the gateway is restarted only after the followup was answered",
      // Over the kinds run so far (it was proven after each kind, so a later kind that throws leaves the earlier ones' proof).
      judge: (h) => {
        if (!h.queued) return undefined;
        const kinds = Object.entries(h.queued).map(([kind, q]) => [kind, queuedMet(q)] as const);
        if (!kinds.length) return undefined;
        return { met: kinds.every(([, k]) => k.met), observed: Object.fromEntries(kinds.map(([kind, k]) => [kind, k.observed])) };
      },
    },
  ],
  checks: [KEPT.stop, ANSWERED.stop, KEPT.kill, ANSWERED.kill],
  timeoutMs: 900_000,
  async run(ctx) {
    const atEnd = () => ctx.lab.model.release().catch(() => {});
    await scene(ctx, { evidence: { bounds: { ANSWER_S, GRACE_S, QUEUED_S } }, atEnd }, async ({ evidence, tl }) => {
      const seen: Partial<Record<Kind, QueuedSeen>> = {};
      for (const kind of ["stop", "kill"] as const) {
        const r = await variant(ctx, tl, kind);
        evidence[kind] = r.evidence;
        seen[kind] = r.queued;
        // Observed after each kind, so a later kind that throws leaves the earlier ones' proof (P-restart-followup-queued).
        ctx.observe("queued", seen);
      }
    });
  },
});

/** The followup's pending input (by its run id, else by its text); NO_FIELD when chat.history lists no pending inputs at all. */
function pendingOf(items: PendingInput[] | undefined, runId: string, token: string): PendingInput | typeof NO_FIELD | undefined {
  if (items === undefined) return NO_FIELD;
  return items.find((p) => p.runId === runId) ?? items.find((p) => JSON.stringify(p.message ?? "").includes(token));
}
const stateOf = (p: PendingInput | typeof NO_FIELD | undefined): string | null => (p === NO_FIELD ? NO_FIELD : (p?.state ?? null));

/** Model requests that carried `token` anywhere in their body (as the prompt or as context). */
const carrying = (requests: ModelRequest[], token: string) => requests.filter((r) => isResponsesCall(r) && JSON.stringify(r.body ?? "").includes(token));

async function variant(ctx: ScenarioContext<Observed>, tl: ScenarioTimeline, kind: Kind): Promise<{ queued: QueuedSeen; evidence: Record<string, unknown> }> {
  const { lab, log, observe, signal, aimOff } = ctx;
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
    (p) => p === NO_FIELD || p?.state === "queued",
    { deadlineMs: QUEUED_S * 1000, intervalMs: 250, signal },
  );
  log(`[${kind}] followup ${accepted.runId} accepted (${accepted.status}); pendingInputs: ${queued.last ? `${stateOf(queued.last)} (${queued.ms} ms)` : "not listed"}`);

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
  const premise: QueuedSeen = { accepted: accepted.status, firstHeldAtRestart: heldStill, carriedBefore: seenBefore, pendingBefore: queued.last };

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
    `[${kind}] after the restart: followup answered ${answered.held} (${answered.ms} ms after ready); model asked it as its prompt ${asPrompt.length}x, as context only ${asContext.length}x; pendingInputs: ${stateOf(pendingAfter) ?? "not listed"}; agent.wait of its run: ${JSON.stringify(runAfter)}`,
  );

  // OpenClaw's own contract first: not lost silently (answered, or listed as interrupted to resend).
  // The contract covers input the version stores durably: 2026.9.5 and 2026.9.6 document it for
  // every chat.send (RPC clients included) and list the followup as queued before the restart;
  // 2026.9.4 documents it for Control UI input only and never lists an RPC client's followup
  // (not before the restart either: run 20261204-033256-0f58). Not listed before the restart: the
  // version does not keep this client's input durably, and the contract is not judged (KEPT's judge).
  // The reference harness's expectation: answered (ANSWERED).
  const afterRestart: AfterRestart = { within_s: ANSWER_S, answered: answered.held, asPrompt: asPrompt.map((r) => r.id), asContext: asContext.map((r) => r.id), pendingBefore: queued.last, pendingAfter };
  observe(kind, afterRestart);
  const seen: Observed = {};
  seen[kind] = afterRestart;
  if (KEPT[kind].judge(seen) === undefined)
    log(
      `[${kind}] E-restart-followup-${kind}-kept not judged: ${queued.last === NO_FIELD ? "this version's chat.history carries no pendingInputs field" : "this version never listed the queued followup in pendingInputs before the restart (2026.9.4 documents input durability for Control UI input only; the lab's operator is an RPC client)"}, so the documented contract does not cover it`,
    );

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
