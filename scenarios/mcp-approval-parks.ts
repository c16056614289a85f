import assert from "node:assert/strict";
import { defineScenario } from "../lab/scenario.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { approvalState, resolveApproval, waitApproval } from "../lab/kits/approvals.ts";
import { toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolResults } from "../lab/kits/turns.ts";
import { sleep } from "../lab/core/wait.ts";

// south__write_file is gated by the lab's approval plugin. The call must park with the turn
// still running, nothing may reach the server while it is parked, one allow-once must be
// enough, and then the call runs exactly once (a second resolve of the same approval must not
// run it again).
export default defineScenario({
  name: "mcp-approval-parks",
  proves: "a gated MCP call parks with the turn waiting, nothing reaches the server before one allow-once, then it runs exactly once",
  topology: "shared",
  timeoutMs: 120_000,
  async run(ctx) {
    const { lab, log, check, signal } = ctx;
    const south = lab.mcp("south");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["south"] }, async ({ events, extra }) => {
      const turn = await sendTurn(client, 'fleetlab-call south__write_file {"path":"parks.txt","content":"parked"}');
      const asked = await waitApproval(events, turn.runId, { signal });
      log(`parked: ${asked.id} for ${asked.request?.toolName}`);

      // While parked: the turn waits, the server sees no call, the approval is pending.
      await sleep(2_000, signal);
      const during = {
        run: (await waitRun(client, turn.runId, 500)).status,
        approval: (await approvalState(client, asked.id)).status,
        serverCalls: toolCallsIn(await south.requests()).length,
        effects: (await south.effects()).length,
      };
      log(`while parked: ${JSON.stringify(during)}`);

      const first = await resolveApproval(client, asked.id, "allow-once");
      const end = await waitRun(client, turn.runId, 30_000);
      const second = await resolveApproval(client, asked.id, "allow-once");
      await sleep(1_000, signal);
      const after = {
        run: end.status,
        firstResolve: first.ok ? "applied" : first.code,
        secondResolve: second.ok ? "applied" : second.detailsCode ?? second.code,
        serverCalls: toolCallsIn(await south.requests()).map((r) => ({ tool: r.tool, args: r.args })),
        effects: (await south.effects()).map((e) => ({ path: e.path, bytes: e.bytes })),
        result: toolResults(await chatHistory(client, turn.sessionKey)).map((r) => ({ tool: r.toolName, text: r.text, isError: r.isError })),
        approval: (await approvalState(client, asked.id)).status,
      };
      log(`after allow-once: ${JSON.stringify(after)}`);
      extra.observations = { turn, approvalId: asked.id, during, after, first, second, end };
      assert.ok(first.ok, `plugin.approval.resolve allow-once was refused: ${JSON.stringify(first)}`);

      const parked = during.run === "timeout" && during.approval === "pending" && during.serverCalls === 0 && during.effects === 0;
      const ranOnce =
        after.run === "ok" &&
        after.serverCalls.length === 1 &&
        after.effects.length === 1 &&
        after.effects[0]!.path === "parks.txt" &&
        after.result.length === 1 &&
        after.result[0]!.text === "south wrote 6 bytes to parks.txt" &&
        !after.result[0]!.isError;
      check({
        id: "R-mcp-approval-parks",
        expectation: "a call needing approval waits with the turn waiting; nothing executes before the operator approves once; then it runs (once)",
        holds: parked && ranOnce,
        observed: { whileParked: during, afterApproval: { run: after.run, serverCalls: after.serverCalls.length, effects: after.effects.length, secondResolve: after.secondResolve } },
      });
    });
  },
});
