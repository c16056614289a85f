import assert from "node:assert/strict";
import { defineScenario } from "../lab/scenario.ts";
import { faults } from "../lab/faults/index.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { approvalState, resolveApproval, waitApproval, type ApprovalRequested, type ApprovalState } from "../lab/kits/approvals.ts";
import { EventLog } from "../lab/kits/events.ts";
import { saveMcpEvidence, toolCallsIn } from "../lab/kits/mcp.ts";
import { sendTurn, toolResults, type ToolResult } from "../lab/kits/turns.ts";
import { WaitTimeout, sleep, waitFor } from "../lab/wait.ts";

// A gated south__write_file call is parked; the gateway container is SIGKILLed and started
// again (same container, same state volume). Reference: the parked approval survives and is
// still the same approval, or, if it cannot, it is refused and the call never executes.
// OpenClaw resumes interrupted turns after a restart with a system message; the scripted
// model answers that message by issuing the same call again, so the scenario also sees
// whether work resumed after the restart can run the call without a fresh approval.
const ARGS = '{"path":"restart.txt","content":"x"}';

export default defineScenario({
  name: "mcp-approval-restart",
  proves: "a parked MCP approval across a hard gateway restart is either the same approval afterwards or refused with the call never executed; resumed work needs a fresh approval",
  topology: "own",
  spec: { nodes: { count: 0 }, git: { enabled: false } },
  timeoutMs: 240_000,
  async run({ lab, log, file, check, signal }) {
    const south = lab.mcp("south");
    await lab.model.setScript([
      {
        id: "resume-after-restart",
        match: { contains: "interrupted by a gateway restart" },
        rounds: [[{ toolCall: { name: "south__write_file", arguments: ARGS } }], [{ text: "fleetlab-ok: resumed: {{toolOutput}}" }]],
      },
    ]);
    const before = new EventLog(lab.operator.client);
    let after: EventLog | undefined;
    /** When the lab's operator was reconnected after the restart (its frames from then on are kept apart). */
    let reconnectedAt: number | undefined;
    const extra: Record<string, unknown> = {};
    try {
      const turn = await sendTurn(lab.operator.client, `fleetlab-call south__write_file ${ARGS}`);
      const parked = await waitApproval(before, turn.runId, { signal });
      log(`parked ${parked.id}; SIGKILL the gateway`);

      const kill = faults.kill(lab, lab.spec.gateway.alias);
      extra.kill = await kill.inject();
      extra.start = await kill.heal();
      // The lab's operator socket died with the gateway: reconnect it (same client and approved
      // identity, so plugin approvals are routed to it). Its events from here on are `after`'s.
      before.stop();
      reconnectedAt = Date.now();
      const { readyMs } = await lab.reconnectOperator({ timeoutMs: 90_000, signal });
      const op2 = lab.operator.client;
      const afterLog = (after = new EventLog(op2));
      log(`gateway ready ${readyMs} ms after start; operator reconnected`);

      const state: ApprovalState = await approvalState(op2, parked.id);
      log(`approval.get ${parked.id}: ${JSON.stringify(state)}`);
      let survived: Record<string, unknown> | undefined;
      if (state.status === "pending") {
        // Still the same approval: allowing it must run the call exactly once.
        const r = await resolveApproval(op2, parked.id, "allow-once");
        await waitRun(op2, turn.runId, 30_000);
        survived = { resolved: r.ok, executions: (await south.effects()).length };
      }

      // Resumed work: OpenClaw's recovery turn re-issues the call (scripted). It must not run
      // without a fresh approval: either a new approval is asked (denied here) or it is refused.
      const original = parked.request?.toolCallId;
      // Neither within 60 s: the checks below judge what was (not) seen.
      const seen = await waitFor(
        "a new approval request or a result of the resumed call",
        async () => {
          const asked = afterLog.approvalRequests()[0];
          const result = toolResults(await chatHistory(op2, turn.sessionKey)).find((r) => r.toolCallId !== original);
          return asked || result ? { asked, result } : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, signal },
      ).catch((err: unknown) => {
        if (err instanceof WaitTimeout) return undefined;
        throw err;
      });
      const next: ApprovalRequested | undefined = seen?.asked;
      let resumedResult: ToolResult | undefined = seen?.result;
      let decision: Record<string, unknown> = {};
      if (next) {
        await sleep(1_500, signal);
        const callsWhileAsked = toolCallsIn(await south.requests()).length;
        const denied = await resolveApproval(op2, next.id, "deny");
        const end = next.request?.runId ? await waitRun(op2, next.request.runId, 30_000) : undefined;
        decision = { sameId: next.id === parked.id, serverCallsBeforeDecision: callsWhileAsked, denied: denied.ok, resumedRun: end?.status ?? null };
        resumedResult = toolResults(await chatHistory(op2, turn.sessionKey)).find((r) => r.toolCallId !== original);
      }
      await sleep(500, signal);
      const serverCalls = toolCallsIn(await south.requests()).length;
      const effects = (await south.effects()).length;
      const reissued = (await lab.model.requests()).some((r) => r.rule === "resume-after-restart" && r.output.some((o) => o.type === "function_call"));
      const resumed = {
        reissuedCall: reissued,
        newApprovalRequested: next !== undefined,
        ...decision,
        resumedCallResult: resumedResult ? { isError: resumedResult.isError, text: resumedResult.text } : null,
        serverSawCall: serverCalls > (survived ? 1 : 0),
      };
      const originalRun = (await waitRun(op2, turn.runId, 1_000)).status;
      log(`resumed: ${JSON.stringify(resumed)}; south tools/call ${serverCalls}, effects ${effects}; original run now: ${originalRun}`);
      extra.observations = { turn, parkedId: parked.id, stateAfterRestart: state, survived, resumed, serverCalls, effects, originalRun, readyMs };
      extra.history = await chatHistory(op2, turn.sessionKey);

      const refused = ["cancelled", "denied", "expired"].includes(state.status);
      check({
        id: "R-mcp-approval-restart",
        expectation: "a parked approval survives a hard restart of the gateway and is still the same approval; or, if it cannot, it is refused and never executed",
        holds: survived ? survived.resolved === true && survived.executions === 1 : refused && serverCalls === 0 && effects === 0,
        observed: survived ? { approvalStatus: "pending", ...survived } : { approvalStatus: state.status, reason: state.reason ?? null, serverSawCall: serverCalls > 0 },
      });
      check({
        id: "R-mcp-approval-restart-resumed",
        expectation: "work resumed after the restart cannot run the parked call without a fresh operator approval",
        holds: resumed.reissuedCall && !resumed.serverSawCall && effects === (survived ? 1 : 0) && (!next || (decision.sameId === false && decision.serverCallsBeforeDecision === 0)),
        observed: resumed,
      });
      assert.ok(op2.connected, "the operator connection after the restart closed");
    } finally {
      before.stop();
      after?.stop();
      // Approval events before and after the restart, in one file each.
      writeJson(file("approval-events-before-restart.json"), before.approvals());
      await saveMcpEvidence(lab, file, after ?? before, extra);
      if (reconnectedAt !== undefined) lab.operator.client.saveTranscript(file("operator-after-restart.jsonl"), { since: reconnectedAt });
    }
  },
});
