// Registered findings: what the pinned OpenClaw was seen to do short of a scenario's
// expectation (see lab/findings/findings.ts for how runs are judged against these).
// Add one only with its exact signature and the run folder that showed it.
import type { FindingRecord } from "../lab/findings/findings.ts";

export const findings: FindingRecord[] = [
  {
    // Documented ("Launches beyond capacity wait up to 10 seconds for a durable slot"), but
    // chat.send has already admitted the turn: the user's message stays in the transcript
    // with no answer and must be re-sent by hand, while a turn to an offline node queues.
    id: "F-capacity-turn-fails-while-slots-full",
    scenario: "capacity",
    expectation: "a turn sent to a session whose node has every worker slot busy waits for a slot and completes once one frees (as a turn to an offline node does)",
    signature: {
      chatSend: "started",
      agentWait: "error",
      error: "⚠️ Agent failed before reply: device worker capacity remained full.\nTo view logs, run `openclaw logs --follow` in a terminal.",
      failedAfter: "10-20s",
      transcript: ["run-failed-before-reply: This turn ended before a reply: device worker capacity remained full"],
      ranAfterSlotFreed: false,
    },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-181130-e9ea/scenarios/capacity/evidence.json",
  },
  // --- multi-MCP (scenarios/mcp-*.ts); the gateway-side MCP client is agents/agent-bundle-mcp-runtime.js ---
  {
    // No built-in gate looks at annotations: with the plugin not listing them, a write tool
    // declaring readOnlyHint:true and one declaring destructiveHint:true both run unasked.
    // (With the plugin listing south__write_file, its readOnlyHint is ignored: that part passes.)
    id: "R-mcp-readonly-hint-builtin-gate",
    scenario: "mcp-readonly-hint",
    expectation: "without an approval plugin listing it, OpenClaw's own policy still asks the operator before a third-party MCP tool that writes runs, whatever readOnlyHint it declares",
    signature: {
      put_file: { annotations: { readOnlyHint: true }, approvalRequested: false, executed: true, run: "ok" },
      erase_file: { annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true }, approvalRequested: false, executed: true, run: "ok" },
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181755-80c0/scenarios/mcp-readonly-hint",
  },
  {
    // tools/list_changed only marks the catalog stale; after allow-once the gateway re-lists
    // and then sends the parked call anyway, so the approved call runs against the new definition.
    id: "R-mcp-catalog-change-redefined",
    scenario: "mcp-catalog-change",
    expectation: "if a server's catalog changes after the approval was parked (tool redefined), the parked call does not execute and the turn fails",
    signature: { approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: true, run: "ok", toolResultIsError: false, serverAnswer: "success" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181755-80c0/scenarios/mcp-catalog-change",
  },
  {
    // The re-list shows write_file gone, yet tools/call is still sent; only the server's own
    // "Tool write_file not found" stops it, and the model gets that as an error result.
    id: "R-mcp-catalog-change-removed",
    scenario: "mcp-catalog-change",
    expectation: "if a server's catalog changes after the approval was parked (tool removed), the parked call does not execute and the turn fails",
    signature: { approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: false, run: "ok", toolResultIsError: true, serverAnswer: "Tool write_file not found" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181755-80c0/scenarios/mcp-catalog-change",
  },
  {
    // The run ends at once, but discovery runs on the MCP runtime's own lifecycle signal, not
    // the run's: the pending tools/list is cut only by the gateway's 1.5 s catalog-listing
    // timeout, after which that server's session is closed.
    id: "R-mcp-cancel-discovery",
    scenario: "mcp-cancel-discovery",
    expectation: "cancelling while the second server is still being discovered stops both servers' work promptly: its pending tools/list is cancelled by the abort, no tool or model call follows",
    signature: {
      chat: "aborted",
      modelCalled: false,
      toolCalls: { north: 0, south: 0 },
      slowListCancelReason: "Error: MCP tool listing timed out after 1500ms",
      slowSessionClosed: true,
      listedSessionClosed: false,
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181755-80c0/scenarios/mcp-cancel-discovery",
  },
  {
    // A server that fails to start is logged ("failed to start server south ...
    // getaddrinfo EAI_AGAIN south") and left out; the turn goes on with the other server's tools.
    id: "R-mcp-partial-start",
    scenario: "mcp-partial-start",
    expectation: "if one of two servers cannot start, no tool runs and the server that did start is stopped",
    signature: { mcpToolsOffered: ["north__example_echo"], northToolCalls: 1, northSessionStopped: false, run: "ok" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181929-b9f0/scenarios/mcp-partial-start",
  },
  {
    // The call fails in ~5 s (tool item "failed", error result to the model) and the model
    // answers: the run itself ends "ok".
    id: "R-mcp-server-lost-turn-error",
    scenario: "mcp-server-lost",
    expectation: "an MCP server container killed during a call: the turn ends with an error",
    signature: { run: "ok", toolItems: ["failed"], toolResultIsError: true },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-181929-b9f0/scenarios/mcp-server-lost",
  },
  {
    // After the transport closed, the gateway keeps the stale catalog and reconnects in the
    // background when the next turn starts; a call made before that reconnect completes is
    // refused without reaching the server (here the server takes 1.5 s to accept initialize;
    // with a fast server it is a race against the model's answer). A later call works.
    id: "R-mcp-server-lost-next-call",
    scenario: "mcp-server-lost",
    expectation: "after the server is back, the next call works",
    signature: { run: "ok", serverCalls: 0, resultIsError: true, result: 'bundle-mcp server "north" is not connected' },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: ".lab/runs/20261129-183142-5877/scenarios/mcp-server-lost",
  },
  // Node SIGKILLed mid-turn (two checkpoint tool calls done, a partial answer held by the
  // model): openclaw@2026.9.6 notices the node at once (node.list connected false) but never
  // ends the turn; everything below follows from that, until the user aborts the run.
  {
    id: "F-midturn-loss-turn-not-ended",
    scenario: "midturn-node-loss",
    expectation: "the user sees the turn end with an error within 45 s of the node's loss",
    signature: { agentWait: "timeout", chatTerminalState: null, runAfterNodeReturned: "timeout" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    id: "F-midturn-loss-placement-not-terminal",
    scenario: "midturn-node-loss",
    expectation: "the placement reaches a terminal state with a reason within 45 s of the node's loss",
    signature: { state: "active", runner: { kind: "device", status: "offline" }, terminalReason: null },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    // The gateway keeps streaming from the model for a worker that no longer exists; only
    // chat.abort closes the request (then at once, status "aborted").
    id: "F-midturn-loss-model-request-open",
    scenario: "midturn-node-loss",
    expectation: "the held model request is cancelled within 45 s of the node's loss",
    signature: { status: "held" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    // Node log: "Worker <id> lost its cleanup anchor without recorded lineage completion;
    // capacity remains reserved." The slot stays reserved for the node's lifetime.
    id: "F-midturn-loss-slot-reserved",
    scenario: "midturn-node-loss",
    expectation: "the node, started again on its state volume, reconnects with all worker slots free",
    signature: { workerSlots: { total: 2, available: 1 } },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    // The placement is still "active" (runner available again) after the abort, so the
    // session cannot be re-dispatched; the recovery turn runs on the old placement instead.
    id: "F-midturn-loss-redispatch-refused",
    scenario: "midturn-node-loss",
    expectation: "once the node is back, the session can be re-dispatched to it for a recovery turn",
    signature: { code: "INVALID_REQUEST", message: "session cannot dispatch from placement active" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    // chat.abort commits the partial text the model had streamed when the node died as an
    // ordinary assistant message (stopReason "stop"), so the next turn's model request
    // carries it as if the model had said it in full.
    id: "F-midturn-loss-recovery-sees-partial",
    scenario: "midturn-node-loss",
    expectation: "the recovery turn's model request carries each checkpoint exactly once and none of the held partial text",
    signature: { requests: 1, checkpoint1: 1, checkpoint2: 1, partialText: 1 },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
  {
    id: "F-midturn-loss-partial-in-history",
    scenario: "midturn-node-loss",
    expectation: "after recovery, history holds each checkpoint exactly once and none of the held partial text",
    signature: { checkpoint1: 1, checkpoint2: 1, partialText: 1, partialMessages: [{ role: "assistant", stopReason: "stop", textIsTheHeldStream: true }] },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: ".lab/runs/20261129-184705-af0f/scenarios/midturn-node-loss/evidence.json",
  },
];
