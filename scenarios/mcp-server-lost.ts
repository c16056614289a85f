import { defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { faults } from "../lab/faults/index.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { callsBefore, refusedCleanly, toolCallsIn, waitMcpHealthy, type CallObserved } from "../lab/kits/mcp.ts";
import { mcpScene, type McpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolErrorMessage, toolResults, type Turn } from "../lab/kits/turns.ts";
import { sleep } from "../lab/core/wait.ts";
import type { GatewayClient } from "../lab/clients/gateway.ts";
import type { McpControl } from "../lab/clients/mcp.ts";

// A call of north__example_echo is held at the north server when north's container is
// SIGKILLed. Reference: the turn ends with an error (not a hang, not a success), and once the
// server is back the next call works.
//
// "Back" is made exact: north is started again and answers, but takes 1.5 s to accept a new
// MCP session (initialize), as a server that warms up does; the next turn comes 6 s later
// (past the gateway's 5 s catalog-retry window, BUNDLE_MCP_CATALOG_FAILURE_RETRY_MS). Without
// the slow initialize the outcome of that call is a race between the gateway's background
// reconnect (~0.1-0.3 s) and the scripted model's answer (~0.1-0.2 s): both were seen.
// The signatures carry these bounds: how long the lost turn was given to end (LOST_RUN_S),
// how long after north answered again the next call came (NEXT_AFTER_S, at least) and how
// long north took to accept initialize (INITIALIZE_S), and how long a later turn may take
// (TURN_S).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): LOST_RUN_S, TURN_S
// and LATER_S, the bounds the signatures and the checks carry.
const LOST_RUN_S = 120;
const NEXT_AFTER_S = 6;
const INITIALIZE_S = 1.5;
const TURN_S = 90;
const LATER_S = 30;
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // The call fails in ~5 s (tool item "failed", error result to the model) and the model
    // answers: the run itself ends "ok".
    id: "R-mcp-server-lost-turn-error",
    expectation: "an MCP server container killed during a call: the turn ends with an error",
    signature: { within_s: 120, run: "ok", toolItems: ["failed"], toolResultIsError: true },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-server-lost-turn-error.json",
  },
  {
    // After the transport closed, the gateway keeps the stale catalog and reconnects in the
    // background when the next turn starts; a call made before that reconnect completes is
    // refused without reaching the server (here the server takes 1.5 s to accept initialize;
    // with a fast server it is a race against the model's answer). A later call works.
    id: "R-mcp-server-lost-next-call",
    expectation: "after the server is back, the next call works",
    signature: { after_s_at_least: 6, serverInitialize_s: 1.5, within_s: 90, run: "ok", serverCalls: 0, resultIsError: true, result: 'bundle-mcp server "north" is not connected' },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-server-lost-next-call.json",
  },
];

// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** The turn whose call was held when north was killed: its end, its tool items, its result. */
interface Lost {
  run: string;
  toolItems: string[];
  toolResultIsError: boolean | null;
}
/** One later call: the text it echoes and what it showed. */
interface Attempt {
  text: string;
  observed: CallObserved;
}
export interface Observed {
  lost?: Lost;
  /** The next call after north was back. */
  next?: CallObserved;
  /** The later calls, once the gateway had a new session with north, in order: until one worked or LATER_S passed. */
  later?: Attempt[];
}

/** A call that worked: the turn ended ok, one tools/call reached north, and the result is north's echo of its text. */
const worked = (o: CallObserved, text: string) => o.run === "ok" && o.serverCalls === 1 && o.result === `north echoed: ${text}`;

export default defineScenario<Observed>({
  name: "mcp-server-lost",
  proves: "an MCP server killed during a call ends the turn with an error, and after the server is back the next call works",
  topology: "own",
  findings,
  spec: { nodes: { count: 0 }, git: { enabled: false } },
  timeoutMs: 240_000,
  checks: [
    {
      id: "R-mcp-server-lost-turn-error",
      expectation: "an MCP server container killed during a call: the turn ends with an error",
      kind: "differs-from-reference",
      judge: (h) => h.lost && { holds: h.lost.run === "error", observed: { within_s: LOST_RUN_S, ...h.lost } },
    },
    {
      id: "R-mcp-server-lost-next-call",
      expectation: "after the server is back, the next call works",
      kind: "differs-from-reference",
      judge: (h) => h.next && { holds: worked(h.next, "back"), observed: { after_s_at_least: NEXT_AFTER_S, serverInitialize_s: INITIALIZE_S, within_s: TURN_S, ...h.next } },
    },
    {
      id: "R-mcp-server-lost-later-call",
      expectation: `once the gateway has reconnected to the restarted server, calls work again within ${LATER_S} s (a call before the one that works is refused cleanly: an error result, nothing reaching the server)`,
      judge: (h) => {
        const attempts = h.later;
        if (!attempts) return undefined;
        const last = attempts.at(-1);
        const works = last !== undefined && worked(last.observed, last.text);
        const before = callsBefore(attempts, works);
        return { holds: works && before.every(refusedCleanly), observed: { within_s: LATER_S, attempts: attempts.length, refusalsBefore: before.length, before, last: last?.observed } };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const client = lab.operator.client;
    const kill = faults.kill(lab, "north");
    const atEnd = async ({ extra }: McpScene) => {
      // A no-op when healed by the body; starts north again when the scenario stopped early.
      extra.healedAtEnd = await kill.heal().catch((e: Error) => ({ error: e.message }));
    };
    await mcpScene(ctx, { atEnd }, async ({ events, extra }) => {
      await lab.mcp("north").hold("example_echo");
      const turn = await sendTurn(client, 'fleetlab-call north__example_echo {"text":"lost"}');
      extra.held = await lab.mcp("north").waitForHeld(30_000);
      extra.killed = await kill.inject();
      const t0 = Date.now();
      // expectation: LOST_RUN_S is the bound in the finding's signature (within_s): fixed, not paced
      const end = await waitRun(client, turn.runId, LOST_RUN_S * 1000, { expectation: true });
      const endedAfterMs = Date.now() - t0;
      const lostResult = toolResults(await chatHistory(client, turn.sessionKey))[0];
      const lostSeen: Lost = {
        run: end.status,
        toolItems: events.toolItems(turn.runId).map((i) => i.status),
        toolResultIsError: lostResult?.isError ?? null,
      };
      const lost = { within_s: LOST_RUN_S, ...lostSeen };
      log(`north killed during the call: ${JSON.stringify(lost)} after ${endedAfterMs} ms (tool error: ${lostResult ? toolErrorMessage(lostResult.text) : "none"})`);
      observe("lost", lostSeen);

      extra.restarted = await kill.heal();
      await waitMcpHealthy(lab, "north", { signal });
      const answeredAt = Date.now();
      await lab.mcp("north").slowInitialize(INITIALIZE_S * 1000);
      // Pacing, not judging: the next call is made no sooner than NEXT_AFTER_S after north answered.
      await sleep(Math.max(0, NEXT_AFTER_S * 1000 - (Date.now() - answeredAt)), signal);
      const nextAfterMs = Date.now() - answeredAt;
      const next = await callAgain(client, lab.mcp("north"), turn.sessionKey, "back");
      const nextObserved = { after_s_at_least: NEXT_AFTER_S, serverInitialize_s: INITIALIZE_S, within_s: TURN_S, ...next.observed };
      log(`next call ${nextAfterMs} ms after north answered again: ${JSON.stringify(nextObserved)}`);
      observe("next", next.observed);

      // Once the gateway has a new session with north (its tools/list seen), calls work again.
      await lab.mcp("north").waitForRequest((r) => r.rpcMethod === "tools/list", 20_000, { since: next.since });
      await lab.mcp("north").slowInitialize(0);
      // Calls work again within LATER_S: the gateway's MCP session can still be in flux right
      // after that tools/list (seen once in 4 runs: a session listed at +0 ms, the call made
      // right after refused "not connected" while the gateway opened yet another session), so
      // calls are made until one works or the deadline passes. Every call before the one that
      // works is judged and listed in the observed (how many, and each answer): each must be a
      // clean refusal, an error result with no call reaching north (refusedCleanly), never a
      // call that reached the server and failed there, ran, or did not end.
      const attempts: Attempt[] = [];
      const t1 = Date.now();
      let later: Awaited<ReturnType<typeof callAgain>> | undefined;
      let works = false;
      // expectation: LATER_S is the check's bound ("within 30 s"): wall time, not paced
      while (!works && (attempts.length === 0 || Date.now() - t1 < LATER_S * 1000)) {
        const text = `later-${attempts.length + 1}`;
        later = await callAgain(client, lab.mcp("north"), turn.sessionKey, text);
        attempts.push({ text, observed: later.observed });
        works = worked(later.observed, text);
        log(`a later call (${text}), after the gateway reconnected: ${JSON.stringify(later.observed)}`);
        if (!works) await sleep(1_000, signal); // pacing between attempts, not judging: the deadline is LATER_S, in the observed
      }
      const before = callsBefore(attempts, works);
      log(`calls before the one that works: ${JSON.stringify(before)}`);
      observe("later", attempts);
      extra.laterAttempts = attempts;
      extra.observations = { turn, end, endedAfterMs, lostResult, lost, nextAfterMs, next, later };
    });
  },
});

/** One more turn in the session calling north__example_echo {text}; what the server and the model saw. */
async function callAgain(client: GatewayClient, north: McpControl, sessionKey: string, text: string) {
  const since = await north.lastSeq();
  const turn: Turn = await sendTurn(client, `fleetlab-call north__example_echo {"text":"${text}"}`, sessionKey);
  // expectation: TURN_S is the bound in the signatures (within_s): fixed, not paced
  const end = await waitRun(client, turn.runId, TURN_S * 1000, { expectation: true });
  const r = toolResults(await chatHistory(client, sessionKey)).at(-1);
  const observed: CallObserved = {
    run: end.status,
    serverCalls: toolCallsIn(await north.requests({ since })).length,
    resultIsError: r?.isError ?? null,
    result: r ? (r.isError ? toolErrorMessage(r.text) : r.text) : null,
  };
  return { turn, end, since, observed };
}
