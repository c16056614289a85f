// Upstream: openclaw/openclaw#68187 "SSE-backed MCP sessions can stay stale after server restart
// and fail with 'Session not found'" (opened 2026-04-17 by gwjr, closed; reported on OpenClaw
// CLI/app 2026.4.14, macOS arm64).
//
// Reporter's steps and symptom: an MCP server behind OpenClaw restarts; "the next tool call from
// an already-established OpenClaw-side client session can fail with stale session state ...
// `Session not found` immediately after server restart, with recovery requiring a full OpenClaw
// gateway restart."
//
// What the user should have seen (asserted here): OpenClaw should "detect the dead/stale session,
// reconnect, and establish a fresh session automatically, or at least invalidate and recreate
// the client session on the next call". Bound: within RECOVER_S of the server forgetting its
// sessions, a call in the same chat session succeeds over a new MCP session (a new initialize
// at north, the successful tools/call on a session id north did not drop) (R-68187-recovers);
// and no call is replayed: each call made after the drop reaches north at most once, the one
// refused on the dead session included (R-68187-no-replay; "return the failed tool call to its
// caller without replaying a possibly mutating operation", PR #115614).
//
// Fix: the thread names no closing PR in what could be read. Related and merged:
// openclaw/openclaw#98738 (onclose marks the session disconnected), #113916 ("reconnect a
// bundled MCP server instead of wedging on it") and #115614 ("recover expired stateful HTTP
// sessions after restarts", the Streamable HTTP case; inferred first version 2026.8.1, not
// confirmed). 2026.9.6 has isMcpHttpSessionExpired and retireSessionIfCurrent in
// dist/agents/agent-bundle-mcp-runtime.js ("recycling server ... after an expired HTTP session").
//
// How this lab reproduces it: an own lab with one gateway MCP server (north), no node hosts, no
// git. A turn in session S calls north__example_echo (it works). Then north forgets every MCP
// session, as a restarted server would (lab.mcp("north").dropSessions(): the session's open
// streams end and its next request is answered 404 "Session not found"), while the server stays
// up. Turns in S then call north__example_echo until one works or RECOVER_S has passed; north's
// request log says on which session each call arrived and how often.
//
// Premise (proven, else the verdict is unknown): P-68187-call-on-forgotten-session: after the
// drop, a request of the gateway reached north on a session north had forgotten (its 404
// "Session not found" in north's request log); a gateway that happened to open a new session
// first would pass without ever meeting the stale state. Self-test (make repro NAME=repro-68187
// N=1 AIM_OFF=1): north forgets no session (the drop is not sent), so no request can meet a
// forgotten one and the verdict must be unknown.
//
// Outcome: not reproduced on 2026.9.6 (run 20261130-123425-2177, PASS). The first call after the
// drop was POSTed once on the dropped session, answered 404, and returned to the model as an
// error result ("Streamable HTTP error: Error POSTing to endpoint: ... Session not found"), not
// replayed; the gateway then opened a new MCP session (one initialize) and the next call, 1.5 s
// after the drop, worked on it ("north echoed: after-2"). No gateway restart was needed.
//
// Out of this lab's reach: the SSE transport itself, as reported. The lab's MCP servers speak
// Streamable HTTP only (docker/mcp/server.ts, StreamableHTTPServerTransport); the SSE case needs
// an SSE endpoint (the SDK's SSEServerTransport) added to that server. A server restart with a
// TCP reset (container killed) is scenarios/mcp-server-lost.ts.
import type { McpRecord } from "../../lab/clients/mcp.ts";
import { writeJson } from "../../lab/evidence/write.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { echoAttempt, mcpEvidence, modelEvidence, type EchoAttempt } from "../../lab/kits/mcp.ts";
import { openSession } from "../../lab/kits/session.ts";
import { defineScenario, LabInfraError, type FindingRecord, labStep } from "../../lab/scenario.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** From the drop to a call that works. */
const RECOVER_S = 30;
/** One turn's budget. */
const TURN_S = 60;
/** History messages read to find a turn's tool result (4 per turn; at most ~15 turns). */
const HISTORY = 200;

const EXPECTATION_RECOVERS = `after the MCP server forgot its sessions (as a restart does), a call in the same chat session succeeds within ${RECOVER_S} s, over a new MCP session (a new initialize at the server)`;
const EXPECTATION_NO_REPLAY = "no tool call is replayed after the server forgot its sessions: each call made after it reaches the server at most once (the one refused on the dead session included)";

const findings: FindingRecord[] = [];

/** A record of north's request log, as much of it as the checks read. */
type NorthRecord = Pick<McpRecord, "seq" | "kind" | "event" | "rpcMethod" | "sessionId" | "tool" | "args">;

/** What the body observed (JSON, for the history); the premise and the checks below judge it. */
export interface Observed {
  /** The session ids north dropped, and north's records since just before the drop. */
  north?: { dropped: string[]; records: NorthRecord[] };
  /**
   * The calls after the drop: whether one worked within RECOVER_S (the poll's verdict), the text
   * of each attempt in order, and the last attempt (its text and what its turn saw).
   */
  recovery?: { held: boolean; texts: string[]; last: { text: string; run: string; resultIsError: boolean | null; result: string | null } };
}

/** What north's records say since the drop, for the attempts with these texts. */
function northSeen(north: NonNullable<Observed["north"]>, texts: string[]) {
  const { dropped, records } = north;
  const isDropped = (sid: string | null) => sid !== null && dropped.includes(sid);
  const textOf = (r: NorthRecord) => (r.args as { text?: unknown } | undefined)?.text;
  const newSessions = records.filter((r) => r.event === "session-created" && !isDropped(r.sessionId)).map((r) => r.sessionId);
  const initializes = records.filter((r) => r.kind === "rpc" && r.rpcMethod === "initialize").length;
  const calls = records.filter((r) => r.kind === "rpc" && r.rpcMethod === "tools/call" && r.tool === "example_echo");
  const perAttempt = texts.map((text) => {
    const mine = calls.filter((r) => textOf(r) === text);
    return { text, posts: mine.length, on: mine.map((r) => sessionKind(r, isDropped)) };
  });
  /** A call of this text that reached north on a session it did not drop. */
  const onNewSession = (text: string) => calls.find((r) => textOf(r) === text && r.sessionId !== null && !isDropped(r.sessionId));
  // The state the issue reports was reached only if the gateway did use a forgotten session:
  // otherwise (a fresh session before any call) there was nothing stale to recover from.
  const onDropped = records.filter((r) => r.event === "unknown-session" || (r.kind === "rpc" && isDropped(r.sessionId)));
  const unknownSession404s = records.filter((r) => r.event === "unknown-session").length;
  return { newSessions, initializes, perAttempt, onNewSession, onDropped, unknownSession404s };
}

export default defineScenario<Observed>({
  name: "repro-68187",
  upstream: {
    issue: 68187,
    title: "SSE-backed MCP sessions can stay stale after server restart and fail with 'Session not found'",
    status: "closed",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/68187",
  },
  proves: "after an MCP server forgets its sessions (as a restart does), a later call in the same chat session succeeds over a new MCP session and no call is replayed (openclaw/openclaw#68187, Streamable HTTP)",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [{ name: "north", catalog: "north", port: 8080 }] } },
  findings,
  premises: [
    {
      id: "P-68187-call-on-forgotten-session",
      what: "after the drop, a request of the gateway reached north on a session north had forgotten (answered 404 Session not found)",
      aimOff: "north forgets no session (the drop is not sent)",
      judge: (h) => {
        if (!h.north) return undefined;
        const n = northSeen(h.north, []);
        return { met: n.onDropped.length > 0, observed: { requestsOnDroppedSessions: n.onDropped.length, unknownSession404s: n.unknownSession404s } };
      },
    },
  ],
  checks: [
    {
      id: "R-68187-recovers",
      expectation: EXPECTATION_RECOVERS,
      judge: (h) => {
        if (!h.north || !h.recovery) return undefined;
        const { held, texts, last } = h.recovery;
        const n = northSeen(h.north, texts);
        const success = held ? n.onNewSession(last.text) : undefined;
        return {
          holds: held && n.initializes > 0 && n.newSessions.length > 0 && !!success,
          observed: normalise({
            within_s: RECOVER_S,
            succeeded: held,
            newInitialize: n.initializes > 0,
            successOnNewSession: !!success,
            last: { run: last.run, resultIsError: last.resultIsError, result: last.result },
          }),
        };
      },
    },
    {
      id: "R-68187-no-replay",
      expectation: EXPECTATION_NO_REPLAY,
      judge: (h) => {
        if (!h.north || !h.recovery) return undefined;
        const replayed = northSeen(h.north, h.recovery.texts).perAttempt.filter((p) => p.posts > 1);
        return { holds: replayed.length === 0, observed: normalise({ replayed }) };
      },
    },
  ],
  timeoutMs: 240_000,
  async run({ lab, log, file, observe, signal, aimOff }) {
    const north = lab.mcp("north");
    const attempts: Attempt[] = [];
    const extra: Record<string, unknown> = {};
    try {
      const s = await openSession(lab);

      // ---- 1. a call that works, on the gateway's first MCP session with north
      const before = await echoAttempt(lab, s, "north", "before", 0, { timeoutMs: TURN_S * 1000, history: HISTORY });
      log(`before the drop: ${JSON.stringify(before.observed)}`);
      extra.before = before;
      if (before.observed.result !== "north echoed: before") throw new Error(`the call before the drop did not work: ${JSON.stringify(before.observed)}`);
      const live = await labStep("read north's sessions", () => north.sessions());

      // ---- 2. north forgets every session, as a restarted server would
      const since = await labStep("read north's records", () => north.lastSeq());
      const dropped = aimOff ? [] : await labStep("drop north's sessions", () => north.dropSessions());
      const droppedAt = Date.now();
      log(`north dropped sessions ${JSON.stringify(dropped)} (live before: ${live.map((x) => x.id).join(", ")})`);
      extra.dropped = { dropped, live };
      if (!aimOff && !dropped.length) throw new LabInfraError(`north had no MCP session to drop after the first call (sessions: ${JSON.stringify(live)}): the reported state was not reached`);

      // ---- 3. calls in the same chat session until one works, for RECOVER_S
      const polled = await pollUntil(
        "a call to north__example_echo that works after the drop",
        async () => {
          const a = await echoAttempt(lab, s, "north", `after-${attempts.length + 1}`, since, { timeoutMs: TURN_S * 1000, history: HISTORY });
          attempts.push(a);
          log(`attempt ${a.text} (+${Math.round((a.at - droppedAt) / 100) / 10} s): ${JSON.stringify(a.observed)}`);
          return a;
        },
        (a) => a.observed.run === "ok" && a.observed.result === `north echoed: ${a.text}`,
        { deadlineMs: RECOVER_S * 1000, from: droppedAt, intervalMs: 1_000, signal },
      );

      // ---- 4. what north saw: new sessions, and each call's POSTs by session
      const records = await labStep("read north's records", () => north.requests({ since }));
      const northObserved = { dropped, records: records.map(({ seq, kind, event, rpcMethod, sessionId, tool, args }) => ({ seq, kind, event, rpcMethod, sessionId, tool, args })) };
      const { run, resultIsError, result } = polled.last.observed;
      const recovery = { held: polled.held, texts: attempts.map((a) => a.text), last: { text: polled.last.text, run, resultIsError, result } };
      const { newSessions, initializes, perAttempt } = northSeen(northObserved, recovery.texts);
      log(`north since the drop: ${records.length} records, new sessions ${JSON.stringify(newSessions)}, initialize ${initializes}, calls per attempt ${JSON.stringify(perAttempt)}, 404s ${records.filter((r) => r.event === "unknown-session").length}`);
      extra.north = { newSessions, initializes, perAttempt, unknownSession: records.filter((r) => r.event === "unknown-session") };
      // P-68187-call-on-forgotten-session, R-68187-recovers and R-68187-no-replay judge these.
      observe("north", northObserved);
      extra.recovered = { held: polled.held, msAfterDrop: polled.ms, attempts: attempts.length, first: attempts[0]?.observed ?? null };
      observe("recovery", recovery);
    } finally {
      writeJson(file("attempts.json"), attempts);
      writeJson(file("mcp-servers.json"), await mcpEvidence(lab, ["north"]));
      writeJson(file("model-requests.json"), await modelEvidence(lab).catch((e: Error) => ({ unreachable: e.message })));
      writeJson(file("evidence.json"), extra);
    }
  },
});

/** On which session a call reached north: one it dropped, a live one, or none (no header). */
function sessionKind(r: NorthRecord, isDropped: (sid: string | null) => boolean): string {
  return r.sessionId === null ? "no session" : isDropped(r.sessionId) ? "dropped session" : "new session";
}

/** One turn calling north__example_echo {text}. */
type Attempt = EchoAttempt<"north">;

