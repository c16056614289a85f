// Upstream: openclaw/openclaw#144922 "Agent sessions aborted at ~82 s by internal watchdog when a
// model call is in flight, then silently re-dispatched — duplicate side effects (duplicate message
// delivery)" (opened 2026-09-11 by rogerallen1, open; labels needs-info, no-new-fix-pr; reported
// on 2026.9.4, a Pi 5 gateway with a llama.cpp host on the LAN).
//
// Reporter's steps and symptom: a cron "run once" trigger runs a Lobster pipeline whose step calls
// `openclaw agent --agent ai-news --session-key ... --thinking off --timeout 3600 --message-file ...`
// once. Four agent sessions appeared; two were aborted after almost exactly 82 s with "This
// operation was aborted" (despite --timeout 3600) while a model call was in flight, beside
// gateway-side MCP cancellation entries, and new sessions materialised in their place; two
// completed, so the user got the same Telegram report twice. Slow local model: first token after
// more than ~60 s.
//
// What the thread says since (as far as the stored copy reads): a follow-up on 2026-09-15 (a
// second pipeline, 2026.9.4, a duplicate render session); then on 2026-09-17 the reporter's
// "corrected root cause": for the 15 Sep run "no watchdog abort, no silent re-dispatch": the
// Lobster tool returned only its last step's output, and the agent re-ran the delivery steps
// itself. The thread names no timer behind the 82 s and links no fix.
//
// The watchdog on the path this lab reaches (read in the 2026.9.4 and 2026.9.6 packages, the same
// code in both): the gateway's embedded agent run wraps each model request in the LLM idle /
// first-event watchdog (streamWithIdleTimeout, src/agents/embedded-agent-runner/run/
// llm-idle-timeout.ts; docs/concepts/agent-loop.md "Model idle timeout": cloud 120 s, self-hosted
// 300 s). A run timeout (the agent method's `timeout`, as --timeout 3600) only caps it:
// min(3600 s, 120 s). Cron-triggered runs with a run timeout cap it at 60 s; loopback/private
// base URLs turn it off. The lab's provider ("lab" at http://model:8080/v1: a bare host name, not a
// self-hosted provider id) is in the cloud class: BOUND_S = 120 s, and its timer aborts the request
// with "LLM idle timeout (120s): no response from model". After such a timeout following a tool
// whose result is recorded, the run may continue with a text-only pass (docs/concepts/retry.md of
// 2026.9.5 and 2026.9.6: "Completed actions are not resubmitted"; the code, in 2026.9.4 too, gates
// it on the provider and model); a replay of the prompt is refused after a side-effecting tool
// (isCurrentAttemptReplaySafe: an MCP tool is never replay-safe). Not pinned: where 82 s
// comes from. One candidate in that code: the first arm of the watchdog after a tool is shortened
// by the time since the run's last tool activity, so a model call started late after a tool gets
// less than 120 s; the lab's follow-up request starts right after the tool, so it gets ~120 s.
// Out of reach: the Lobster plugin and cron (the lab drives the gateway's `agent` method, the
// path `openclaw agent` takes, on the gateway), the CLI-side re-run (the CLI's embedded fallback
// was removed in openclaw#112074, July 2026, before 2026.9.4), and concurrent sessions (the
// watchdog is per run).
//
// What the user should have seen (asserted here): one message whose turn calls a side-effecting
// tool once gets no second dispatch when the model's next first token comes after the watchdog's
// bound: north's own request log shows the write at most once (R-144922-effect-once, the bug),
// and the turn ends within END_GRACE_S of the hold, either completed with a reply or with a
// visible error, in one run, not re-run silently (R-144922-turn-ends-visibly).
// The lab-wide at-most-once check cannot see this bug by itself: it allows one effect per
// function_call the model emitted, and a turn re-run from its prompt makes the scripted model
// emit the call again (a new call id, a new intent). The count here is per user message.
//
// How this lab reproduces it: an own lab with one gateway-side MCP server (north, catalog
// north-write: write_file {path, content} writes into the server's temp dir and says it writes;
// no approval gate), no node host, no git. One `agent` request (timeout 3600) carries a token;
// the scripted model answers its first request with one north__write_file call and delays the
// first byte of the follow-up request (the one carrying the tool's result) by HOLD_S = 130 s, once;
// a later request for the same message (a continuation or a replay) is answered at once.
//
// Premises (proven, else the verdict is unknown):
//  - P-144922-effect-before-hold: the request the hold acted on (the model server's record names
//    the hold's rule) is the follow-up, and the write reached north (its request log) before it
//    arrived at the model, so there is a side effect a re-dispatch could repeat. Self-test (make
//    repro NAME=repro-144922 N=1 AIM_OFF=1, this premise aimed off): the hold moves to the turn's
//    first model request (round 0), before the write: the held request is not the follow-up and
//    no write precedes it (the follow-up, after the watchdog and a retry, comes past REACH_S).
//  - P-144922-held-past-bound: the watchdog fired, as the gateway and the wire show it, not as
//    elapsed time suggests: the gateway logged its model idle timeout ("LLM idle timeout" / "no
//    response from model") while the follow-up was held, and the model server's own record of the
//    follow-up says the gateway gave up on it (aborted) while it had sent nothing. Silence alone (a
//    gateway that waited out the 130 s, or an abort for another reason, such as the lab's own
//    sessions.abort at the deadline, which comes after the hold ended) does not meet it.
//    Self-test (this premise aimed off): the follow-up is delayed AIM_OFF_HOLD_S = 3 s, answered
//    long before the bound: the premise must read unmet.
//
// Outcome (matrix-20261202-034151-fe4c): not reproduced on 2026.9.4, 2026.9.5 and 2026.9.6. The
// held follow-up is cut by "LLM idle timeout (120s)", retried once as a text-only continuation
// ("transient same-model retry 1/8"), and the run ends ok after 161 s: one write at north, one
// run. A run takes about 3 min (170-256 s measured). AIM_OFF=1: caught 1/1. With the watchdog
// proven from the gateway's log (run 20261204-031824-65f9ddc78791c549, PASS): "LLM idle timeout (120s): no
// response from model" logged at elapsedMs=120008, the follow-up aborted unanswered after 120 s.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): REACH_S (no
// follow-up within it reads the premise unmet) and END_GRACE_S after the hold.
// The body drives and observes (ctx.observe); the premises and the checks below judge what it observed.
import crypto from "node:crypto";
import { EventLog } from "../../lab/kits/events.ts";
import { gatewayLog } from "../../lab/kits/gateway-config.ts";
import { mcpEvidence, modelEvidence, toolCallsIn } from "../../lab/kits/mcp.ts";
import { scene } from "../../lab/kits/scene.ts";
import { openSession, refusal, z, type Refused, type RunEnd } from "../../lab/kits/session.ts";
import { isResponsesCall, ModelControlError, type ModelRequest, type RequestStatus } from "../../lab/clients/model.ts";
import type { GatewayClient } from "../../lab/clients/gateway.ts";
import type { McpRecord } from "../../lab/clients/mcp.ts";
import { writeJson } from "../../lab/evidence/write.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { LabInfraError, defineScenario, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { waitFor } from "../../lab/core/wait.ts";

/** OpenClaw's model idle watchdog for a cloud-class provider (DEFAULT_LLM_IDLE_TIMEOUT_MS), as the lab's provider is classed. */
const BOUND_S = 120;
/** The follow-up request's first byte comes this long after it arrived: past the bound. */
const HOLD_S = 130;
/** Under AIM_OFF=1: long before the bound. */
const AIM_OFF_HOLD_S = 3;
/** From the send to the follow-up request at the model (the first turn of a fresh gateway connects its MCP servers first: 24 s seen on a loaded machine). */
const REACH_S = 90;
/** After the hold, the run has ended. */
const END_GRACE_S = 30;
/** The agent request's run timeout, as the reporter's --timeout 3600. */
const RUN_TIMEOUT_S = 3600;

/** The model script's rule that holds the first byte: the model server's records name it on the request it answered. */
const HOLD_RULE = "r144922-late-first-token";
/** The watchdog's own words in the gateway's log when it cuts a model request. */
const WATCHDOG_LINE = /LLM idle timeout|no response from model/i;

const EFFECT_ONCE = "R-144922-effect-once";
const TURN_ENDS = "R-144922-turn-ends-visibly";
const EXPECTATION_EFFECT_ONCE = `one message whose turn calls a side-effecting MCP tool once, with the model's next first token ${HOLD_S} s late (past the ${BOUND_S} s model watchdog): the tool call reaches its server at most once (no second dispatch of the turn)`;
const EXPECTATION_TURN_ENDS = `that turn ends within ${END_GRACE_S} s after the held first token, in one run: completed with a reply, or with an error the user sees (not re-run silently, not left hanging)`;

const findings: FindingRecord[] = [];

/** A write at north for this message's token (its request log): its position and time. */
type Write = { seq: number; time: string };
/** A model request as the checks read it. */
type RequestSeen = { id: string; round?: number; status: RequestStatus; rule: string | null };

/** Up to the follow-up's arrival at the model: the hold as set, the follow-up (null: none within REACH_S), the writes north had seen by then. */
interface Reached {
  holdS: number;
  followUp: { id: string; rule: string | null; time: string } | null;
  writesBefore: Write[];
}

/** After the run's end: what the model server, north, the gateway and the operator's events recorded. */
interface Ended {
  token: string;
  /** The model server's record of the held follow-up (null: none), and when it was read (its silence runs to then if it has not ended). */
  held: { status: RequestStatus; events: number; time: string; endedAt: string | null } | null;
  readAt: number;
  /** The gateway's log lines since the send in the watchdog's own words (WATCHDOG_LINE), with their times. */
  watchdogLines: { t: number; line: string }[];
  writes: Write[];
  /** The model requests for this message, and the requests after the follow-up (a continuation or a replay). */
  requests: RequestSeen[];
  later: RequestSeen[];
  end: { status: string; text?: string; error?: unknown };
  final: FinalAnswer;
  /** The errorMessage of every chat error event of the run. */
  chatErrors: unknown[];
  /** The runs the operator saw start in the session (agent lifecycle events). */
  runs: string[];
}

export interface Observed {
  reached?: Reached;
  ended?: Ended;
}

const seenOf = (r: ModelRequest): RequestSeen => ({ id: r.id, round: r.round, status: r.status, rule: r.rule });

/** How long after the model server saw the gateway drop the follow-up the gateway's line saying why may come (it logs the abort it made; 0.2 s measured). */
const ABORT_LOGGED_MS = 5_000;

/**
 * The watchdog's lines logged while the follow-up was held: after it arrived, and until the model
 * server saw it end (the gateway dropping it: its line follows the abort) or, if it was still open,
 * until the hold would have ended. The model server's record, not the hold as planned: on a
 * starved machine both timers run late (the first-time make lab with 4 busy loops on 2 cores,
 * 20261204-222753: the gateway's 120 s watchdog fired at 142.7 s, when the model server had not
 * yet sent its reply due at 130 s, and logged it 0.2 s after the abort; the planned window had
 * closed at 130 s, so the premise read unmet and the repro unknown).
 */
function watchdogWhileHeld(e: Ended, holdS: number): { t: number; line: string }[] {
  if (!e.held) return [];
  const arrived = Date.parse(e.held.time);
  const until = e.held.endedAt ? Date.parse(e.held.endedAt) + ABORT_LOGGED_MS : arrived + holdS * 1000;
  return e.watchdogLines.filter((l) => l.t >= arrived && l.t <= until);
}

/** The watchdog fired, observed where it acts: its line while the follow-up was held, and the model server saw the gateway give up on that request. */
const watchdogOf = (e: Ended, holdS: number): "fired" | "not fired" => (watchdogWhileHeld(e, holdS).length > 0 && e.held?.status === "aborted" ? "fired" : "not fired");

export default defineScenario<Observed>({
  name: "repro-144922",
  upstream: {
    issue: 144922,
    title: "[Bug]: Agent sessions aborted at ~82 s by internal watchdog when a model call is in flight, then silently re-dispatched — duplicate side effects (duplicate message delivery)",
    status: "open",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/144922",
  },
  proves: "a turn whose side-effecting tool ran once, and whose next model first token comes after the model watchdog's bound, is not dispatched again (the effect at most once) and ends completed or with a visible error (openclaw/openclaw#144922)",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [{ name: "north", catalog: "north-write", port: 8080 }], approvalTools: [] } },
  findings,
  bug: [EFFECT_ONCE],
  premises: [
    {
      id: "P-144922-effect-before-hold",
      what: "the held model request is the follow-up (the model server names the hold's rule on it), and the write reached north (its request log) before it arrived",
      aimOff: "the hold acts on the turn's first model request (round 0), before the write, instead of the follow-up",
      judge: (h) => {
        if (!h.reached) return undefined;
        const { followUp, writesBefore } = h.reached;
        return {
          met: !!followUp && followUp.rule === HOLD_RULE && writesBefore.length > 0 && Date.parse(writesBefore[0]!.time) <= Date.parse(followUp.time),
          observed: { followUpArrived: !!followUp, followUpHeld: followUp ? followUp.rule === HOLD_RULE : null, writesBeforeFollowUp: writesBefore.length },
        };
      },
    },
    {
      id: "P-144922-held-past-bound",
      what: "the watchdog fired: the gateway logged its model idle timeout while the follow-up was held, and gave up on the follow-up (the model server's record: aborted) while the model had sent nothing of it",
      aimOff: `the follow-up is delayed ${AIM_OFF_HOLD_S} s instead of ${HOLD_S} s`,
      judge: (h) => {
        if (!h.reached || !h.ended) return undefined;
        const e = h.ended;
        const silence = e.held ? silenceOf(e.held, e.readAt) : undefined;
        const watchdogLines = watchdogWhileHeld(e, h.reached.holdS);
        return {
          // The watchdog fired, observed where it acts: the gateway logged its idle timeout while the
          // follow-up was held, and the model server saw the gateway give up on that request before
          // any byte (aborted, unanswered). 130 s of silence alone is not it: a gateway that waited
          // them out, or aborted for another reason, never reached the path the report is about.
          met: !!silence && watchdogLines.length > 0 && e.held!.status === "aborted" && !silence.answered,
          observed: silence
            ? { status: e.held!.status, answered: silence.answered, silentFor_s: Math.round(silence.ms / 1000), bound_s: BOUND_S, watchdogLogged: watchdogLines.map((l) => l.line.slice(0, 200)).slice(0, 2) }
            : { followUp: "none" },
        };
      },
    },
  ],
  checks: [
    {
      id: EFFECT_ONCE,
      expectation: EXPECTATION_EFFECT_ONCE,
      judge: (h) =>
        h.reached &&
        h.ended && {
          holds: h.ended.writes.length <= 1,
          observed: normalise({ bound_s: BOUND_S, hold_s: h.reached.holdS, writes: h.ended.writes.length, firstRequests: h.ended.requests.filter((r) => r.round === 0).length }),
        },
    },
    {
      id: TURN_ENDS,
      expectation: EXPECTATION_TURN_ENDS,
      judge: (h) => {
        if (!h.reached || !h.ended) return undefined;
        const e = h.ended;
        const ended = e.end.status === "ok" || e.end.status === "error";
        const visible = visibleEnd(e.end, e.final, e.chatErrors);
        return {
          holds: ended && visible.kind !== "silent" && e.runs.length <= 1,
          observed: normalise({
            within_s: END_GRACE_S,
            watchdog: watchdogOf(e, h.reached.holdS),
            status: e.end.status,
            end: ended ? visible.kind : "not ended",
            error: visible.error?.split(e.token).join("<token>") ?? null,
            runs: e.runs.length,
            continued: e.later.length > 0,
          }),
        };
      },
    },
  ],
  timeoutMs: 330_000,
  async run(ctx) {
    const { lab, log, file, observe, signal, aimOff } = ctx;
    const client = lab.operator.client;
    const north = lab.mcp("north");
    const holdS = aimOff === "P-144922-held-past-bound" ? AIM_OFF_HOLD_S : HOLD_S;
    // Aimed off P-144922-effect-before-hold: the hold lands on the request before the write.
    const holdRound = aimOff === "P-144922-effect-before-hold" ? 0 : 1;
    const token = `tok-${crypto.randomBytes(4).toString("hex")}`;
    const path = `r144922/${token}.txt`;
    const events = new EventLog(client);
    const atEnd = async () => {
      events.stop();
      writeJson(file("events.json"), events.events);
      writeJson(file("mcp-servers.json"), await mcpEvidence(lab, ["north"]));
      writeJson(file("model-requests.json"), await modelEvidence(lab).catch((e: Error) => ({ unreachable: e.message })));
    };
    await scene(ctx, { faults: false, atEnd, evidence: { token, bounds: { BOUND_S, HOLD_S: holdS, REACH_S, END_GRACE_S, RUN_TIMEOUT_S } } }, async ({ evidence }) => {
      // The write once; the follow-up's first byte late, once; anything later for this message at once.
      await labStep("scripting the model", () =>
        lab.model.setScript([
          { id: HOLD_RULE, match: { contains: token, round: holdRound }, times: 1, reply: [{ delayMs: holdS * 1000 }, { text: holdRound === 1 ? "fleetlab-ok: report written: {{toolOutput}}" : "fleetlab-ok: held before any write" }] },
          { id: "r144922-write", match: { contains: token }, rounds: [[{ toolCall: { name: "north__write_file", arguments: { path, content: token } } }], [{ text: "fleetlab-ok: report written: {{toolOutput}}" }]] },
        ]),
      );
      const s = await openSession(lab);
      const northSince = await labStep("reading north's records", () => north.lastSeq());

      // ---- the turn, as `openclaw agent --session-key ... --timeout 3600` sends it
      const sentAt = Date.now();
      const agent = startAgent(client, { message: `Write today's report once with north__write_file (fleetlab ${token}).`, sessionKey: s.key, idempotencyKey: crypto.randomUUID(), timeout: RUN_TIMEOUT_S }, (REACH_S + holdS + END_GRACE_S + 15) * 1000);
      const runId = await waitFor("the agent request accepted (its run id) or answered", () => agent.runId ?? (agent.settled ? "none" : undefined), { timeoutMs: 30_000, intervalMs: 50, signal });
      if (runId === "none") throw new Error(`the gateway did not accept the agent request: ${JSON.stringify(await agent.final)}`);
      log(`agent run ${runId} in ${s.key} (token ${token}, follow-up delayed ${holdS} s)`);

      // ---- the follow-up request (carrying the write's result) reaches the model and is held
      const followUp = await lab.model
        // expectation: a time-out is "no follow-up" in P-144922-effect-before-hold: the REACH_S window is fixed, not paced
        .waitForRequest((r) => isResponsesCall(r) && (r.userText ?? "").includes(token) && r.round === 1, REACH_S * 1000, { signal, expectation: true })
        .catch((err: unknown) => {
          if (err instanceof ModelControlError) return undefined;
          throw err;
        });
      const writesBefore = writesOf(await labStep("reading north's records", () => north.requests({ since: northSince })), token);
      // What P-144922-effect-before-hold reads.
      observe("reached", { holdS, followUp: followUp ? { id: followUp.id, rule: followUp.rule, time: followUp.time } : null, writesBefore: writesBefore.map((w) => ({ seq: w.seq, time: w.time })) });
      if (followUp) log(`follow-up ${followUp.id} arrived ${Math.round((Date.parse(followUp.time) - sentAt) / 100) / 10} s after the send; north saw ${writesBefore.length} write(s)`);

      // ---- the run's end, to a deadline past the hold
      // expectation: "ends within END_GRACE_S after the held first token" (R-144922-turn-ends-visibly): fixed, not paced
      const end: RunEnd & { waits?: number } = await s.waitEnd(runId, followUp ? (holdS + END_GRACE_S) * 1000 : 1_000, { signal, expectation: true });
      const ended = end.status === "ok" || end.status === "error";
      if (!ended) log(`run ${runId} had not ended at the deadline (${end.status}): aborting it so its final answer comes: ${JSON.stringify(await s.abortSession({ runId }))}`);
      const final = await agent.final;
      log(`run ${runId} ended ${end.status} after ${Math.round((Date.now() - sentAt) / 1000)} s; agent final: ${JSON.stringify(final).slice(0, 300)}`);

      // ---- what the model server, north and the gateway recorded
      const requests = await labStep("reading the model's requests", () => lab.model.requests());
      const mine = requests.filter((r) => isResponsesCall(r) && (r.userText ?? "").includes(token));
      const held = followUp ? requests.find((r) => r.id === followUp.id) : undefined;
      const later = followUp ? requests.filter((r) => isResponsesCall(r) && r.seq > followUp.seq) : [];
      const writes = writesOf(await labStep("reading north's records", () => north.requests({ since: northSince })), token);
      const readAt = Date.now();
      const silence = held ? silenceOf(held, readAt) : undefined;
      const gatewayLines = await gatewayLog(lab, sentAt).catch(() => undefined);
      const gatewaySaid = (gatewayLines ?? [])
        .map((l) => l.line)
        .filter((l) => /idle timeout|no response from model|first.event|operation was aborted|continu|retry|failover|timed out/i.test(l));
      for (const l of gatewaySaid.slice(0, 15)) log(`gateway: ${l}`);
      // Runs the operator saw start for this session: a re-run as a new run shows here (a re-run
      // inside the run shows as a second write); none seen (events without sessionKey) is not a second run.
      const runs = runsOf(events, s.key);
      Object.assign(evidence, {
        runId,
        sessionKey: s.key,
        end: { status: end.status, text: end.text, error: end.error, stopReason: end.stopReason, waits: end.waits },
        final,
        chat: events.chatOutcome(runId) ?? null,
        runs,
        followUp: held ? { id: held.id, status: held.status, time: held.time, endedAt: held.endedAt, events: held.events, silence } : null,
        later: later.map((r) => ({ id: r.id, status: r.status, round: r.round, rule: r.rule, userText: r.userText?.slice(0, 200), output: r.output })),
        modelRequestsForMessage: mine.map((r) => ({ id: r.id, round: r.round, status: r.status, rule: r.rule })),
        writes: writes.map((w) => ({ seq: w.seq, time: w.time, rpcId: w.rpcId, sessionId: w.sessionId })),
        cancels: (await north.requests({ since: northSince }).catch(() => [])).filter((r) => r.rpcMethod === "notifications/cancelled").length,
        gatewaySaid,
      });
      log(`follow-up record: ${JSON.stringify(evidence.followUp)}; requests after it: ${later.length}; writes at north: ${writes.length}; runs: ${runs.length}`);

      // The gateway's log unread: whether the watchdog fired cannot be told.
      if (held && !gatewayLines) throw new LabInfraError("the gateway's log could not be read: whether its model watchdog fired cannot be told");
      // What P-144922-held-past-bound and the checks read.
      observe("ended", {
        token,
        held: held ? { status: held.status, events: held.events, time: held.time, endedAt: held.endedAt } : null,
        readAt,
        watchdogLines: (gatewayLines ?? []).filter((l) => WATCHDOG_LINE.test(l.line)).map((l) => ({ t: l.t, line: l.line })),
        writes: writes.map((w) => ({ seq: w.seq, time: w.time })),
        requests: mine.map(seenOf),
        later: later.map(seenOf),
        end: { status: end.status, text: end.text, error: end.error },
        final: final.kind === "answer" ? { kind: "answer", status: final.status, summary: final.summary, texts: final.texts } : final,
        chatErrors: chatErrorsOf(events, runId),
        runs,
      });
    });
  },
});

/** The `agent` request (expectFinal): its run id once accepted, and its final answer or refusal as data. */
function startAgent(client: GatewayClient, params: Record<string, unknown>, timeoutMs: number) {
  const state: { runId?: string; settled: boolean; final: Promise<FinalAnswer> } = { settled: false, final: Promise.resolve({ kind: "none" }) };
  state.final = client
    .request("agent", params, {
      expectFinal: true,
      timeoutMs,
      onAccepted: (p) => {
        state.runId = z.looseObject({ runId: z.string().min(1) }).safeParse(p).data?.runId;
      },
    })
    .then(
      (payload): FinalAnswer => {
        const f = AgentFinalSchema.safeParse(payload);
        if (!f.success) return { kind: "answer", status: "unreadable", raw: payload };
        const texts = (f.data.result?.payloads ?? []).map((x) => x.text ?? "").filter((t) => t.length > 0);
        return { kind: "answer", status: f.data.status, summary: f.data.summary, texts };
      },
      (err: unknown): FinalAnswer => ({ kind: "refused", ...refusal(err) }),
    )
    .finally(() => {
      state.settled = true;
    });
  return state;
}

const AgentFinalSchema = z.looseObject({
  runId: z.string().optional(),
  status: z.string(),
  summary: z.string().optional(),
  result: z.looseObject({ payloads: z.array(z.looseObject({ text: z.string().optional() })).optional() }).optional(),
});

/** What the `agent` request finally answered: the run's final payload, a refusal, or nothing (still open). */
type FinalAnswer = { kind: "answer"; status: string; summary?: string; texts?: string[]; raw?: unknown } | ({ kind: "refused" } & Refused) | { kind: "none" };

/** north's tools/call of write_file for this message's token, oldest first. */
function writesOf(records: McpRecord[], token: string): McpRecord[] {
  return toolCallsIn(records, "write_file")
    .filter((r) => (r.args as { content?: unknown } | undefined)?.content === token)
    .sort((a, b) => a.seq - b.seq);
}

/** How long the model server kept the request silent: until its first byte (it answered) or until the client left or `now` (when it was read). */
function silenceOf(r: Pick<ModelRequest, "status" | "events" | "endedAt" | "time">, now: number): { answered: boolean; ms: number } {
  // The follow-up's steps are a delay, then one short text: its first byte and its end are the same moment.
  const answered = r.status === "completed" || r.events > 0;
  return { answered, ms: (r.endedAt ? Date.parse(r.endedAt) : now) - Date.parse(r.time) };
}

/** The distinct runs the operator saw start in this session (agent lifecycle events). */
function runsOf(events: EventLog, sessionKey: string): string[] {
  const ids = events.events
    .filter((e) => e.event === "agent")
    .map((e) => e.payload as { runId?: string; stream?: string; sessionKey?: string })
    .filter((p) => p.stream === "lifecycle" && p.sessionKey === sessionKey && typeof p.runId === "string")
    .map((p) => p.runId!);
  return [...new Set(ids)];
}

/** The errorMessage of every chat error event of the run, as the events carried it. */
function chatErrorsOf(events: EventLog, runId: string): unknown[] {
  return events.events
    .filter((e) => e.event === "chat" && (e.payload as { runId?: string; state?: string }).runId === runId && (e.payload as { state?: string }).state === "error")
    .map((e) => (e.payload as { errorMessage?: unknown }).errorMessage);
}

/**
 * What the user was shown at the end: "completed" (ok with a reply), "error" (ended with an error
 * message: agent.wait's, the agent request's final answer or refusal, or the chat error event's),
 * or "silent" (ended without either, or not ended).
 */
function visibleEnd(end: Pick<RunEnd, "status" | "text" | "error">, final: FinalAnswer, chatErrors: unknown[]): { kind: "completed" | "error" | "silent"; error?: string } {
  const finalTexts = final.kind === "answer" ? (final.texts ?? []) : [];
  if (end.status === "ok" && ((end.text ?? "").trim() || finalTexts.length)) return { kind: "completed" };
  if (end.status !== "error") return { kind: "silent" };
  const chatError = chatErrors.find((m): m is string => typeof m === "string" && m.length > 0);
  const waitError = typeof end.error === "string" ? end.error : end.error ? JSON.stringify(end.error) : undefined;
  const finalError = final.kind === "refused" ? final.message : final.kind === "answer" ? final.summary : undefined;
  const error = [waitError, finalError, chatError].find((m) => m && m.trim());
  return error ? { kind: "error", error: error.slice(0, 200) } : { kind: "silent" };
}
