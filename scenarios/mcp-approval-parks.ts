import { defineScenario } from "../lab/scenario.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { approvalState, resolveApproval, waitApproval } from "../lab/kits/approvals.ts";
import { toolCallsIn, watchForCall } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolResults } from "../lab/kits/turns.ts";

// south__write_file is gated by the lab's approval plugin. The call must park with the turn
// still running, nothing may reach the server while it is parked, one allow-once must be
// enough, and then the call runs exactly once (a second resolve of the same approval must not
// run it again).
// No clock decides: the parked call is watched for PARKED_WATCH_MS (a call reaching south ends
// the watch at once; the bound is in the check's observed), and the server's own log orders its
// call against the allow-once (its seq after the position read just before answering). The
// turn's end closes the window for the one call; a refused second resolve can start nothing,
// and an applied one is watched for SECOND_WATCH_MS (in the observed too).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): the watch windows
// and the 500 ms read of the parked run ("timeout": still running).
const PARKED_WATCH_MS = 2_000;
const SECOND_WATCH_MS = 1_000;
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** While the call was parked: the watch's bound and the calls it saw, the run and the approval read then, south's effects. */
interface Parked {
  within_ms: number;
  run: string;
  approval: string;
  serverCalls: number;
  effects: number;
}
/** After allow-once: the run, both answers, south's log (its position read just before the allow-once), effects, the tool results. */
interface Allowed {
  run: string;
  firstResolve: string;
  secondResolve: string;
  secondResolveWatched_ms: number;
  /** south's log position read just before the allow-once: a call at or before it did not wait. */
  beforeAllow: number;
  /** south's tools/call records, by their seq in its log. */
  calls: { seq: number; tool: string | null | undefined; args: unknown }[];
  effects: { path: string; bytes: number }[];
  result: { tool: string; text: string; isError: boolean }[];
  approval: string;
}
export interface Observed {
  during?: Parked;
  after?: Allowed;
}

/** The tools/call records at or before the allow-once. */
const callsBeforeAllow = (a: Allowed) => a.calls.filter((r) => r.seq <= a.beforeAllow).length;

export default defineScenario<Observed>({
  name: "mcp-approval-parks",
  proves: "a gated MCP call parks with the turn waiting, nothing reaches the server before one allow-once, then it runs exactly once",
  topology: "shared",
  timeoutMs: 120_000,
  checks: [
    {
      id: "R-mcp-approval-parks-allow-once",
      expectation: "the operator's allow-once of the parked call is accepted (plugin.approval.resolve)",
      judge: (h) => h.after && { holds: h.after.firstResolve === "applied", observed: { firstResolve: h.after.firstResolve } },
    },
    {
      id: "R-mcp-approval-parks",
      expectation: "a call needing approval waits with the turn waiting; nothing executes before the operator approves once; then it runs (once)",
      judge: (h) => {
        const { during, after } = h;
        if (!during || !after) return undefined;
        const before = callsBeforeAllow(after);
        const parked = during.run === "timeout" && during.approval === "pending" && during.serverCalls === 0 && during.effects === 0 && before === 0;
        const ranOnce =
          after.run === "ok" &&
          after.calls.length === 1 &&
          after.effects.length === 1 &&
          after.effects[0]!.path === "parks.txt" &&
          after.result.length === 1 &&
          after.result[0]!.text === "south wrote 6 bytes to parks.txt" &&
          !after.result[0]!.isError;
        return {
          holds: parked && ranOnce,
          observed: {
            whileParked: during,
            afterApproval: { run: after.run, callsBeforeAllow: before, serverCalls: after.calls.length, effects: after.effects.length, secondResolve: after.secondResolve, secondResolveWatched_ms: after.secondResolveWatched_ms },
          },
        };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const south = lab.mcp("south");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["south"] }, async ({ events, extra }) => {
      const turn = await sendTurn(client, 'fleetlab-call south__write_file {"path":"parks.txt","content":"parked"}');
      const asked = await waitApproval(events, turn.runId, { signal });
      const askedAt = Date.now();
      log(`parked: ${asked.id} for ${asked.request?.toolName}`);

      // While parked: the turn waits, the server sees no call, the approval is pending.
      const watch = await watchForCall(south, { withinMs: PARKED_WATCH_MS, from: askedAt, signal });
      const during: Parked = {
        within_ms: watch.within_ms,
        // expectation: a snapshot: "timeout" after 500 ms is the observation "still running" (parked), fixed
        run: (await waitRun(client, turn.runId, 500, { expectation: true })).status,
        approval: (await approvalState(client, asked.id)).status,
        serverCalls: watch.calls,
        effects: (await south.effects()).length,
      };
      log(`while parked: ${JSON.stringify(during)}`);

      // The server's log position just before the answer: a call at or before it did not wait.
      const beforeAllow = await south.lastSeq();
      const first = await resolveApproval(client, asked.id, "allow-once");
      const end = await waitRun(client, turn.runId, 30_000);
      const beforeSecond = await south.lastSeq();
      const second = await resolveApproval(client, asked.id, "allow-once");
      const secondWatch = second.ok ? await watchForCall(south, { withinMs: SECOND_WATCH_MS, since: beforeSecond, signal }) : undefined;
      const allowed: Allowed = {
        run: end.status,
        firstResolve: first.ok ? "applied" : first.code,
        secondResolve: second.ok ? "applied" : second.detailsCode ?? second.code,
        // 0: the second resolve was refused, so it could start nothing and was not watched.
        secondResolveWatched_ms: secondWatch?.within_ms ?? 0,
        beforeAllow,
        calls: toolCallsIn(await south.requests()).map((r) => ({ seq: r.seq, tool: r.tool, args: r.args })),
        effects: (await south.effects()).map((e) => ({ path: e.path, bytes: e.bytes })),
        result: toolResults(await chatHistory(client, turn.sessionKey)).map((r) => ({ tool: r.toolName, text: r.text, isError: r.isError })),
        approval: (await approvalState(client, asked.id)).status,
      };
      // For the log and the evidence: the calls before the allow-once counted, then the calls themselves.
      const after = {
        run: allowed.run,
        firstResolve: allowed.firstResolve,
        secondResolve: allowed.secondResolve,
        secondResolveWatched_ms: allowed.secondResolveWatched_ms,
        callsBeforeAllow: callsBeforeAllow(allowed),
        serverCalls: allowed.calls.map((r) => ({ tool: r.tool, args: r.args })),
        effects: allowed.effects,
        result: allowed.result,
        approval: allowed.approval,
      };
      log(`after allow-once: ${JSON.stringify(after)}`);
      extra.observations = { turn, approvalId: asked.id, during, after, first, second, end };
      if (!first.ok) log(`plugin.approval.resolve allow-once was refused: ${JSON.stringify(first)}`);
      observe("during", during);
      observe("after", allowed);
    });
  },
});
