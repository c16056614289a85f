import { LabInfraError, defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { cancelParams, cancelsIn, toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn } from "../lab/kits/turns.ts";
import { WaitTimeout, pollUntil, waitFor } from "../lab/core/wait.ts";
import { isResponsesCall } from "../lab/clients/model.ts";
import type { McpRecord } from "../lab/clients/mcp.ts";

// MCP servers are discovered (initialize + tools/list) when a session's first turn starts.
// south answers tools/list only after 20 s; north at once. The operator cancels the turn
// (chat.abort) while south is still being discovered. Reference: the cancel stops both
// servers' work promptly: south's pending tools/list is cancelled because of the abort (not
// by some later timeout), no tool is called and the model is never asked.
//
// The gateway gives a catalog listing 1.5 s when the server has no requestTimeoutMs
// (BUNDLE_MCP_CATALOG_LIST_TIMEOUT_MS): the abort must land inside that window, or the turn
// goes on without south and the lab could not make the condition (verdict unknown).
// After the abort the servers are watched until WATCH_S (past that 1.5 s listing timeout, so
// whatever the gateway does on its own is done by then) for the expected state; what does not
// hold is the state at that deadline. "Promptly" is CANCEL_WITHIN_S of the abort.
const WATCH_S = 3;
const CANCEL_WITHIN_S = 1;
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // The run ends at once, but discovery runs on the MCP runtime's own lifecycle signal, not
    // the run's: the pending tools/list is cut only by the gateway's 1.5 s catalog-listing
    // timeout, after which that server's session is closed.
    id: "R-mcp-cancel-discovery",
    expectation: "cancelling while the second server is still being discovered stops both servers' work promptly: its pending tools/list is cancelled by the abort, no tool or model call follows",
    signature: {
      within_s: 3,
      cancelWithin_s: 1,
      chat: "aborted",
      modelCalled: false,
      toolCalls: { north: 0, south: 0 },
      slowListCancelReason: "Error: MCP tool listing timed out after 1500ms",
      slowSessionClosed: true,
      listedSessionClosed: false,
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-cancel-discovery.json",
  },
];

// The body drives and observes (ctx.observe); the check below judges what it observed.

/** The state after the abort, as last polled: the turn, the model and tool calls, the cancel of south's pending list, both servers' sessions. */
interface AfterAbort {
  chat: string | null;
  modelCalls: number;
  toolCalls: { north: number; south: number };
  /** The reason of the notifications/cancelled naming south's pending tools/list, and when it came after the abort (null: none came). */
  slowListCancelReason: string | null;
  cancelAfterAbortMs: number | null;
  slowSessionClosed: boolean;
  listedSessionClosed: boolean;
}
export interface Observed {
  afterAbort?: AfterAbort;
}

/** The signature: the bounds, then the state at the end of the watch. */
function discoveryView(a: AfterAbort) {
  return {
    within_s: WATCH_S,
    cancelWithin_s: CANCEL_WITHIN_S,
    chat: a.chat,
    modelCalled: a.modelCalls > 0,
    toolCalls: a.toolCalls,
    slowListCancelReason: a.slowListCancelReason,
    slowSessionClosed: a.slowSessionClosed,
    listedSessionClosed: a.listedSessionClosed,
  };
}

/** South's list cancelled by the abort itself (not a time-out), within CANCEL_WITHIN_S of it. */
const cancelledByAbort = (a: AfterAbort) =>
  a.slowListCancelReason !== null && !/timed out|timeout/i.test(a.slowListCancelReason) && a.cancelAfterAbortMs !== null && a.cancelAfterAbortMs < CANCEL_WITHIN_S * 1000;

/** The expected state after the abort (the poll waits for it; the check judges the last state polled). */
const stoppedPromptly = (a: AfterAbort) => a.chat === "aborted" && a.modelCalls === 0 && a.toolCalls.north === 0 && a.toolCalls.south === 0 && cancelledByAbort(a);

export default defineScenario<Observed>({
  name: "mcp-cancel-discovery",
  proves: "chat.abort while the second MCP server is still being discovered stops both servers' work promptly (the pending tools/list is cancelled by the abort; no tool call, no model call)",
  topology: "shared",
  findings,
  timeoutMs: 120_000,
  checks: [
    {
      id: "R-mcp-cancel-discovery",
      expectation: "cancelling while the second server is still being discovered stops both servers' work promptly: its pending tools/list is cancelled by the abort, no tool or model call follows",
      kind: "differs-from-reference",
      judge: (h) => h.afterAbort && { holds: stoppedPromptly(h.afterAbort), observed: discoveryView(h.afterAbort) },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const north = lab.mcp("north");
    const south = lab.mcp("south");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["north", "south"] }, async ({ events, extra }) => {
      await south.slowDiscovery(20_000);
      const [northSince, southSince] = [await north.lastSeq(), await south.lastSeq()];
      const turn = await sendTurn(client, 'fleetlab-call north__example_echo {"text":"discovery"}');
      // Abort as soon as north is listed and south's tools/list is pending.
      const southList = await waitFor(
        "tools/list at north and south",
        async () => {
          const [n, s] = await Promise.all([north.requests({ since: northSince }), south.requests({ since: southSince })]);
          const sl = s.find((r) => r.rpcMethod === "tools/list");
          return sl && n.some((r) => r.rpcMethod === "tools/list") ? { seq: sl.seq, rpcId: sl.rpcId, at: Date.parse(sl.time) } : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 25, signal },
      ).catch((err: unknown) => {
        throw err instanceof WaitTimeout ? new LabInfraError("the turn never started MCP discovery (no tools/list at north and south within 30 s)", { cause: err }) : err;
      });
      const abortAt = Date.now();
      const aborted = await client.request("chat.abort", { sessionKey: turn.sessionKey, runId: turn.runId });
      const abortLag = abortAt - southList.at;
      log(`chat.abort ${abortLag} ms after south's tools/list arrived: ${JSON.stringify(aborted)}`);
      if (abortLag > 1_000) throw new LabInfraError(`chat.abort went out ${abortLag} ms after south's tools/list: too late to land inside the gateway's 1.5 s listing window`);

      const closed = (records: McpRecord[], id: string | null | undefined) => records.some((r) => r.sessionId === id && (r.event === "session-closed" || r.httpMethod === "DELETE"));
      const polled = await pollUntil(
        "south's tools/list cancelled by the abort, the turn aborted, no tool or model call",
        async () => {
          const [n, s] = await Promise.all([north.requests({ since: northSince }), south.requests({ since: southSince })]);
          const listCancel = cancelsIn(s).find((r) => cancelParams(r).requestId === southList.rpcId);
          const seen: AfterAbort = {
            chat: events.chatOutcome(turn.runId) ?? null,
            modelCalls: (await lab.model.requests()).filter(isResponsesCall).length,
            toolCalls: { north: toolCallsIn(n).length, south: toolCallsIn(s).length },
            slowListCancelReason: listCancel ? String(cancelParams(listCancel).reason) : null,
            cancelAfterAbortMs: listCancel ? Date.parse(listCancel.time) - abortAt : null,
            slowSessionClosed: closed(s, s.find((r) => r.event === "session-created")?.sessionId),
            listedSessionClosed: closed(n, n.find((r) => r.event === "session-created")?.sessionId),
          };
          return seen;
        },
        stoppedPromptly,
        { deadlineMs: WATCH_S * 1000, from: abortAt, intervalMs: 100, signal },
      );
      const { cancelAfterAbortMs } = polled.last;
      log(`observed: ${JSON.stringify(discoveryView(polled.last))}; south's list cancelled ${cancelAfterAbortMs} ms after the abort`);
      extra.observations = { turn, aborted, abortLagMs: abortLag, cancelAfterAbortMs, southList, polled: { held: polled.held, msAfterAbort: polled.ms, polls: polled.polls } };
      observe("afterAbort", polled.last);
    });
  },
});
