// Upstream: openclaw/openclaw#137355 "[Bug]: 2026.8.2 restart recovery skips drain-admitted
// session; subsequent dispatch fails with 'changed while starting work' and drops the message"
// (closed), and its sibling openclaw/openclaw#117096 "Restart-recovery leaves session
// permanently stuck ("changed while starting work. Retry.") when recovery doesn't reach
// terminal state" (closed).
// Reported on: #137355 OpenClaw 2026.8.2 (0965053), macOS, Feishu channel; #117096 earlier
// (version line not seen).
// Reporter's steps (#137355): a turn in flight; `openclaw gateway restart` (SIGTERM; the drain
// reports "1 admitted session turn(s); 1 active embedded run(s)"); after "gateway ready" the
// restart recovery marks and starts only another agent's session; the session's next message
// fails with `Session "<key>" changed while starting work. Retry.` and no reply is delivered
// (only a second restart recovered it). #117096: every message to the session fails that way
// for over an hour, across restarts.
// What the user should have seen (asserted here, one check per restart kind): after the
// gateway restarts under a turn in flight, a NEW message to the same session is accepted and
// answered (its reply in the session's history) within NEXT_S of the gateway being ready
// (/readyz), never refused with "changed while starting work".
// Fix: no PR names these issues; the closest is PR #130491 "recover admitted turns across
// restart" (merged; evidence from a 2026.9.1 beta, so probably first in 2026.9.1, not pinned),
// with #111869, #114071 and #125955 around it.
// Outcome: NOT REPRODUCED on 2026.9.6 (runs 20261130-123312-2cab and 20261130-123958-ab62: both
// checks pass in both; the runs' verdict is FAIL only from the lab-wide protocol check, an
// unregistered drift `controlUiLinkReaders` in the hello-ok of this node-less lab). Tried: a
// held gateway turn, then (a) docker restart (SIGTERM, shutdown drain waiting on the held
// turn, SIGKILL after 10 s) and (b) SIGKILL + start; a new message sent 0.3 s after /readyz, i.e. before restart
// recovery started the interrupted session (2-3 s after /readyz). Recovery resumed the session
// (gateway log: "started interrupted main session", then terminal status=ok) and the new message was answered ~6-7 s after /readyz. Seen on
// the way (not this bug): agent.wait of the new message's runId answers "pending" (timeoutPhase
// "queue") after ~2.5 s while it waits behind the recovery turn, then "ok"; the recovery turn's
// model request also carries the new message as "[Queued user message ...]" context.
// Not tried: the reporter's in-process restart (SIGUSR2 / config reload), a recovery turn that
// never reaches terminal (#117096) and the #140467/#146692 abort variants.
// How this lab reproduces it: own lab with no node hosts and no MCP servers (a gateway
// session only). Per variant, a fresh session's turn is held at the scripted model (one delta
// streamed: in flight), then the gateway is
//   - "restart": restarted the way `docker restart` does (SIGTERM, the gateway's shutdown
//     drain waiting on the held turn; SIGKILL after GRACE_S), restartGateway() from
//     lab/kits/session.ts;
//   - "sigkill": SIGKILLed and started again on its state volume (faults.kill inject/heal);
// the operator reconnects, and a new message goes to the same session at once (the window in
// which restart recovery, which starts the interrupted session a few seconds after /readyz, and
// the new turn meet). Proven by the operator's RPC results (chat.send, agent.wait) and the
// session's history; the model's requests show the recovery turn(s).
// Premise P-137355-in-flight: in each variant the held turn was still in flight when the gateway
// went down (its held model request is listed after the restart and did not complete before it);
// otherwise the restart did not meet a turn in flight and the lab cannot tell (unknown). It has no
// aim-off (not self-tested).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): NEXT_S, from the
// gateway being ready.
// The body drives and observes (ctx.observe); the checks below judge what it observed.
import { isResponsesCall } from "../../lab/clients/model.ts";
import { messageText } from "../../lab/clients/sessions.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { defineScenario, LabInfraError, type CheckDef, type FindingRecord, type ScenarioContext } from "../../lab/scenario.ts";
import { armHold, isRefused, openSession, refusal, restartGateway, type Refused, type RunEnd } from "../../lab/kits/session.ts";
import { scene } from "../../lab/kits/scene.ts";
import type { ScenarioTimeline } from "../../lab/kits/timeline.ts";
import { expectedReply, uniqueName } from "../../lab/kits/workers.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** The new message must be answered within this long of the gateway being ready. */
const NEXT_S = 60;
/** docker restart's grace between SIGTERM and SIGKILL. */
const GRACE_S = 10;
const REFUSAL = "changed while starting work";
/** OpenClaw's restart-recovery message to the model (the latest user message of a recovery turn). */
const RECOVERY_TEXT = "interrupted by a gateway restart";

// Seen on 2026.9.4 (make matrix, run 20261130-124642-d013), both variants: the new message
// after the restart is accepted and its run ends "ok", but nothing answers it (the message is
// dropped, the #137355 symptom without its "changed while starting work" text); a retry is
// answered. Not seen on 2026.9.5 or 2026.9.6, where the check holds ("fixed?" there).
const dropped = (v: Variant): FindingRecord => ({
  id: `R-137355-${v}-next-message`,
  expectation: `after a gateway restart under a turn in flight, a new message to that session is accepted and answered within ${NEXT_S} s of the gateway being ready`,
  signature: { within_s: NEXT_S, chatSend: "started", run: "ok", runError: null, answered: false, changedWhileStartingWork: false, retry: "answered" },
  versions: ["2026.9.4"],
  kind: "shortfall",
  evidence: `fixtures/findings/R-137355-${v}-next-message.json`,
});
const findings: FindingRecord[] = [dropped("restart"), dropped("sigkill")];

type Variant = "restart" | "sigkill";

/** A chat.send as it went: the run it started, or the refusal. */
type Sent = { runId: string; status: string } | Refused;
/** agent.wait's answer for a run, as the checks read it. */
type WaitSeen = { status: string; text?: string; error?: unknown };

/** One variant's new message after the restart. */
interface NextSeen {
  accepted: Sent;
  /** agent.wait's last answer for it within NEXT_S (null: none). */
  end: WaitSeen | null;
  /** The reply it wants, and the assistant texts of the session's history when that reply was there, or else at the bound. */
  want: string;
  assistantTexts: string[];
  /** When it was not answered: a retry's chat.send, its end and the reply it wants. */
  retry: { want: string; sent: Sent; end: WaitSeen | null } | null;
}

/** The held model request of a variant's first turn, read once the gateway was ready again: listed, and whether it had completed. */
interface HeldSeen {
  listed: boolean;
  completed: boolean;
}

export type Observed = Partial<Record<Variant, NextSeen>> & {
  /** Per variant, the first turn's held model request after the restart (P-137355-in-flight). */
  inFlight?: Partial<Record<Variant, HeldSeen>>;
};

const sentAs = (r: Sent) => (isRefused(r) ? `${r.code}: ${normaliseText(r.message)}` : r.status);
const runErrorOf = (end: WaitSeen | null) => (end?.error === undefined ? null : normaliseText(typeof end.error === "string" ? end.error : JSON.stringify(end.error)).slice(0, 300));
const retryAs = (r: NonNullable<NextSeen["retry"]>) =>
  isRefused(r.sent) ? sentAs(r.sent) : r.end?.status === "ok" && r.end.text === r.want ? "answered" : `${r.end?.status}: ${normaliseText(JSON.stringify(r.end?.error ?? null)).slice(0, 200)}`;

/** The new message after a restart of kind `v`: accepted and answered within NEXT_S, never "changed while starting work". */
const nextMessage = (v: Variant): CheckDef<Observed> => ({
  id: `R-137355-${v}-next-message`,
  expectation: `after a gateway ${v === "restart" ? "restart (SIGTERM, SIGKILL after " + GRACE_S + " s)" : "SIGKILL and start"} under a turn in flight, a new message to that session is accepted and answered within ${NEXT_S} s of the gateway being ready, never '${REFUSAL}'`,
  judge: (h) => {
    const n = h[v];
    if (!n) return undefined;
    const sendSeen = sentAs(n.accepted);
    const runError = runErrorOf(n.end);
    const changed = [sendSeen, runError ?? ""].some((t) => t.includes(REFUSAL));
    const answered = n.assistantTexts.includes(n.want);
    return {
      holds: !isRefused(n.accepted) && answered && !changed,
      observed: normalise({ within_s: NEXT_S, chatSend: sendSeen, run: n.end?.status ?? null, runError, answered, changedWhileStartingWork: changed, ...(n.retry !== null ? { retry: retryAs(n.retry) } : {}) }),
    };
  },
});

const waitSeen = (e: RunEnd | undefined): WaitSeen | null => (e ? { status: e.status, text: e.text, error: e.error } : null);
const assistantTexts = (history: { role: string; content?: unknown }[]) => history.filter((m) => m.role === "assistant").map((m) => messageText(m.content));

export default defineScenario<Observed>({
  name: "repro-137355",
  upstream: {
    issue: 137355,
    title: "[Bug]: 2026.8.2 restart recovery skips drain-admitted session; subsequent dispatch fails with 'changed while starting work' and drops the message",
    status: "closed",
    related: [117096],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/137355",
  },
  protocolSteps: [
    "As an operator, `chat.send` a message to a session and hold the model's response (one streamed delta, then nothing): a turn in flight.",
    "Restart the gateway: SIGTERM (SIGKILL after 10 s, the shutdown drain waits on the held turn), or SIGKILL and start it again on the same state directory.",
    "As soon as `/readyz` answers, reconnect and `chat.send` a new message to the same session.",
    "Read `agent.wait` of its runId and the session's `chat.history` for 60 s: on 2026.9.4 the run ends `ok` but no reply to the new message is ever in the history (expected: answered, or refused with \"changed while starting work\" and answered on retry).",
  ],
  proves: "openclaw#137355/#117096: after a gateway restart (graceful or SIGKILL) under a turn in flight, a new message to that session is accepted and answered within 60 s of the gateway being ready, never 'changed while starting work'",
  topology: "own",
  spec: { nodes: { count: 0 }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  premises: [
    {
      id: "P-137355-in-flight",
      what: "in each variant the first turn was in flight when the gateway went down: its held model request is listed after the restart and had not completed",
      judge: (h) => {
        const seen = Object.values(h.inFlight ?? {});
        if (!seen.length) return undefined;
        return { met: seen.every((x) => x.listed && !x.completed), observed: h.inFlight };
      },
    },
  ],
  checks: [nextMessage("restart"), nextMessage("sigkill")],
  timeoutMs: 480_000,
  async run(ctx) {
    const atEnd = () => ctx.lab.model.release().catch(() => {});
    const inFlight: NonNullable<Observed["inFlight"]> = {};
    await scene(ctx, { evidence: { bounds: { NEXT_S, GRACE_S } }, atEnd }, async ({ evidence, tl }) => {
      for (const v of ["restart", "sigkill"] as const) {
        const seen = await variant(ctx, tl, v, inFlight);
        // Stopped at its premise: the turn was not in flight, nothing after it is run.
        if (!seen) return;
        evidence[v] = seen;
      }
    });
  },
});

/** One variant; undefined when the body stops at P-137355-in-flight. `inFlight` gathers each variant's held request (observed as it grows). */
async function variant(ctx: ScenarioContext<Observed>, tl: ScenarioTimeline, v: Variant, inFlight: NonNullable<Observed["inFlight"]>): Promise<Record<string, unknown> | undefined> {
  const { lab, log, observe, proceed, signal } = ctx;
  const gw = lab.spec.gateway.alias;
  const s = await openSession(lab);
  const token = uniqueName("tok");
  const first = `${token} task in flight when the gateway goes down`;

  // ---- a turn in flight, held at its model request
  await armHold(lab, token);
  const sent = await s.send(first);
  const held = await s.hold(token, 90_000);
  const modelSince = held.seq;
  log(`[${v}] turn ${sent.runId} in ${s.key} held at model request ${held.id}`);

  // ---- the restart
  let readyAt: number;
  let restart: Record<string, unknown>;
  if (v === "restart") {
    const r = await restartGateway(lab, { graceSeconds: GRACE_S, timeoutMs: 120_000 });
    readyAt = Date.now() - r.connectMs;
    restart = r;
  } else {
    const kill = faults.kill(lab, gw, { timeline: tl });
    const killed = await kill.inject();
    const started = await kill.heal();
    const r = await lab.reconnectOperator({ timeoutMs: 120_000, signal });
    readyAt = Date.now() - r.connectMs;
    restart = { killed, started, ...r };
  }
  if (!lab.operator.client.connected) throw new LabInfraError(`[${v}] the lab's operator did not reconnect after the gateway restart`);
  const heldAfter = (await lab.model.requests({ since: modelSince - 1 })).find((r) => r.id === held.id);
  inFlight[v] = { listed: heldAfter !== undefined, completed: heldAfter?.status === "completed" };
  observe("inFlight", { ...inFlight });
  if (!proceed("P-137355-in-flight")) return undefined;
  log(`[${v}] gateway ready; restart ${JSON.stringify(restart)}; the held model request is now ${heldAfter?.status}`);

  // ---- a NEW message to the same session, at once
  const next = `${uniqueName("tok")} new message after the restart`;
  const want = expectedReply(next);
  const sendAt = Date.now();
  const accepted = await s.send(next).then(
    (r) => r,
    (err: unknown) => refusal(err),
  );
  // agent.wait answers "pending" (timeoutPhase "queue") early while the run is queued behind the
  // recovery turn: wait again until it is something else or the deadline passes.
  let end: RunEnd | undefined;
  // expectation: NEXT_S from ready is the check's bound ("answered within 60 s"): wall time, not paced
  while (!isRefused(accepted) && (end === undefined || end.status === "pending") && Date.now() - readyAt < NEXT_S * 1000) {
    // expectation: the rest of NEXT_S, in wall time
    end = await s.wait(accepted.runId, Math.max(1_000, NEXT_S * 1000 - (Date.now() - readyAt)), { expectation: true });
  }
  // The assistant texts of the history as last read: the check reads the answer from them.
  let texts: string[] = [];
  const answered = await pollUntil(
    "the new message's answer in the session's history",
    async () => {
      texts = assistantTexts(await s.history(100));
      return texts.includes(want);
    },
    (x) => x,
    { deadlineMs: NEXT_S * 1000, from: readyAt, intervalMs: 500, signal },
  );
  const sendSeen = sentAs(accepted);
  const runError = runErrorOf(waitSeen(end));
  log(`[${v}] new message ${Date.now() - readyAt} ms after ready: chat.send ${sendSeen} (${sendAt - readyAt} ms after ready); run ${end?.status ?? "-"} ${runError ?? ""}; answered ${answered.held} (${answered.ms} ms after ready)`);

  // If it was not answered: does the session take a message at all a little later (wedged for good, or a race)?
  let retry: string | null = null;
  let retrySeen: NextSeen["retry"] = null;
  if (!answered.held) {
    const again = `${uniqueName("tok")} retry after the refused message`;
    const r = await s.send(again).then((x) => x, (err: unknown) => refusal(err));
    // expectation: NEXT_S bounds the retry, which the known finding's signature carries: fixed, not paced
    const e = isRefused(r) ? undefined : await s.wait(r.runId, NEXT_S * 1000, { expectation: true });
    retrySeen = { want: expectedReply(again), sent: r, end: waitSeen(e) };
    retry = retryAs(retrySeen);
    log(`[${v}] a retry: ${retry}`);
  }

  // Evidence only: what agent.wait says of the chat.send runId once the answer is there.
  const runAfterAnswer = isRefused(accepted) ? null : await s.wait(accepted.runId, 2_000).catch((err: Error) => ({ error: err.message }));
  const requests = (await lab.model.requests({ since: modelSince - 1 })).filter(isResponsesCall);
  const recoveryTurns = requests.filter((r) => (r.userText ?? "").includes(RECOVERY_TEXT)).length;
  observe(v, { accepted, end: waitSeen(end), want, assistantTexts: texts, retry: retrySeen });

  return {
    session: s.key,
    first: { message: first, runId: sent.runId, held, modelRequestAfterRestart: heldAfter },
    restart,
    readyAt,
    next: { message: next, sendAt, accepted, end: end ?? null, answered },
    retry,
    runAfterAnswer,
    recoveryTurns,
    modelRequests: requests.map((r) => ({ id: r.id, seq: r.seq, status: r.status, rule: r.rule, userText: (r.userText ?? "").slice(0, 160), time: r.time, endedAt: r.endedAt })),
    history: await s.history(100),
  };
}
