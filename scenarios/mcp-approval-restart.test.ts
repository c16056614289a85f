import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-approval-restart.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import { historyOf } from "../lab/testing/histories.ts";

type AfterRestart = NonNullable<Observed["firstRestart"]>;
type Resumed = NonNullable<Observed["resumed"]>;
type Durable = NonNullable<Observed["secondRestart"]>;
const parked = { id: "plugin:p1", toolCallId: "call-1" };
const EXPIRED = { ok: false as const, code: "INVALID_REQUEST", message: "unknown or expired approval id" };
/** The first restart as 2026.9.6 showed it: the changed policy in effect, the approval closed by the restart, the answer refused, nothing ran. */
const first = (more: Partial<AfterRestart> = {}): AfterRestart => ({
  tools: { alsoAllow: ["south__write_file"], deny: ["north__example_echo"] },
  state: { id: "plugin:p1", status: "cancelled", reason: "gateway-restart" },
  listed: false,
  answer: EXPIRED,
  serverCalls: 0,
  effects: 0,
  ...more,
});
const modelRequests = [
  { rule: null, output: ["function_call"] },
  { rule: "resume-after-restart", output: ["function_call"] },
];
/** The resumed call asked a fresh approval, which was denied; nothing reached south. */
const askedAgain = (more: Partial<NonNullable<Resumed["newApproval"]>> = {}): Resumed => ({
  askedOrAnswered: true,
  modelRequests,
  newApproval: { id: "plugin:p2", within_ms: 1_500, watchCalls: 0, beforeDecision: 20, callSeqs: [], denied: true, resumedRun: "ok", ...more },
  results: [{ toolCallId: "call-2", isError: true, text: "denied by the operator" }],
  serverCalls: 0,
  effects: 0,
});
/** The second restart as 2026.9.6 showed it (R-mcp-approval-restart's signature). */
const notDurable: Durable = { ...first({ tools: { alsoAllow: ["south__write_file"] } }), results: [{ toolCallId: "call-2", isError: true, text: "denied by the operator" }], originalRun: "error" };
/** The reference: the same approval pending and listed, run once on allow-once, the turn completed with south's result. */
const durable: Durable = {
  tools: { alsoAllow: ["south__write_file"] },
  state: { id: "plugin:p1", status: "pending" },
  listed: true,
  answer: { ok: true },
  serverCalls: 1,
  effects: 1,
  results: [{ toolCallId: "call-1", isError: false, text: "south wrote 1 bytes to restart.txt" }],
  originalRun: "ok",
};
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, { ...o }, true).checks.map((c) => [c.id, c]));
const history = (o: Observed) => historyOf(scenario, o);

describe("mcp-approval-restart's checks over what its body observed", () => {
  it("fail-closed: started with the changed policy, the same approval id, the answer refused, nothing ran: holds", () => {
    expect(judged({ parked, firstRestart: first() })["R-mcp-approval-restart-fail-closed"]).toEqual({
      id: "R-mcp-approval-restart-fail-closed",
      expectation: "the gateway SIGKILLed while an approval is parked and started again under a changed policy: answering that approval is refused, the approval is still there under the same id, and nothing ran",
      holds: true,
      observed: {
        startedWithChangedPolicy: true,
        approval: { sameId: true, status: "cancelled", reason: "gateway-restart" },
        listedPending: false,
        answer: "INVALID_REQUEST: unknown or expired approval id",
        serverSawCall: false,
        executed: false,
      },
    });
  });

  it("fail-closed: the answer applied, the old policy, or no record of the approval: short", () => {
    const ran = judged({ parked, firstRestart: first({ state: { id: "plugin:p1", status: "allowed", reason: "user" }, answer: { ok: true }, serverCalls: 1, effects: 1 }) })["R-mcp-approval-restart-fail-closed"]!;
    expect(ran.holds).toBe(false);
    expect(ran.observed).toEqual({
      startedWithChangedPolicy: true,
      approval: { sameId: true, status: "allowed", reason: "user" },
      listedPending: false,
      answer: "applied",
      serverSawCall: true,
      executed: true,
    });
    expect(judged({ parked, firstRestart: first({ tools: { alsoAllow: ["south__write_file"] } }) })["R-mcp-approval-restart-fail-closed"]).toMatchObject({ holds: false, observed: { startedWithChangedPolicy: false } });
    const gone = first({ state: null, answer: { ok: false, code: "INVALID_REQUEST", detailsCode: "NOT_FOUND", message: "no such approval" } });
    expect(judged({ parked, firstRestart: gone })["R-mcp-approval-restart-fail-closed"]).toMatchObject({
      holds: false,
      observed: { approval: { sameId: false, status: null, reason: null }, answer: "INVALID_REQUEST/NOT_FOUND: no such approval" },
    });
  });

  it("resumed: a fresh approval (another id) asked, denied, nothing at south before it: holds, with the decision", () => {
    expect(judged({ parked, resumed: askedAgain() })["R-mcp-approval-restart-resumed"]).toEqual({
      id: "R-mcp-approval-restart-resumed",
      expectation: "work resumed after the restart cannot run the parked call without a fresh operator approval: within 60 s it is asked about again or refused",
      holds: true,
      observed: {
        within_s: 60,
        askedOrAnswered: true,
        reissuedCall: true,
        newApprovalRequested: true,
        sameId: false,
        within_ms: 1_500,
        serverCallsBeforeDecision: 0,
        denied: true,
        resumedRun: "ok",
        resumedCallResult: { isError: true, text: "denied by the operator" },
        serverSawCall: false,
      },
    });
  });

  it("resumed: refused without a new approval: holds, with no decision in the observed", () => {
    const refused: Resumed = { ...askedAgain(), newApproval: null, results: [{ toolCallId: "call-1", isError: true, text: "x" }, { toolCallId: "call-2", isError: true, text: "approval required" }] };
    expect(judged({ parked, resumed: refused })["R-mcp-approval-restart-resumed"]).toMatchObject({
      holds: true,
      observed: { within_s: 60, askedOrAnswered: true, reissuedCall: true, newApprovalRequested: false, resumedCallResult: { isError: true, text: "approval required" }, serverSawCall: false },
    });
    expect(judged({ parked, resumed: refused })["R-mcp-approval-restart-resumed"]!.observed).not.toHaveProperty("sameId");
  });

  it("resumed: a call at south before the decision (by its log), the old approval asked again, neither within the window, no re-issued call: short", () => {
    const early = judged({ parked, resumed: { ...askedAgain({ callSeqs: [15, 30] }), serverCalls: 2 } })["R-mcp-approval-restart-resumed"]!;
    expect(early.holds).toBe(false);
    expect(early.observed).toEqual({
      within_s: 60,
      askedOrAnswered: true,
      reissuedCall: true,
      newApprovalRequested: true,
      sameId: false,
      within_ms: 1_500,
      serverCallsBeforeDecision: 1,
      denied: true,
      resumedRun: "ok",
      resumedCallResult: { isError: true, text: "denied by the operator" },
      serverSawCall: true,
    });
    expect(judged({ parked, resumed: askedAgain({ watchCalls: 1 }) })["R-mcp-approval-restart-resumed"]).toMatchObject({ holds: false, observed: { serverCallsBeforeDecision: 1 } });
    expect(judged({ parked, resumed: askedAgain({ id: "plugin:p1" }) })["R-mcp-approval-restart-resumed"]).toMatchObject({ holds: false, observed: { sameId: true } });
    const nothing: Resumed = { ...askedAgain(), askedOrAnswered: false, newApproval: null, results: [] };
    expect(judged({ parked, resumed: nothing })["R-mcp-approval-restart-resumed"]).toMatchObject({ holds: false, observed: { askedOrAnswered: false, resumedCallResult: null } });
    const notReissued: Resumed = { ...askedAgain(), modelRequests: [{ rule: "resume-after-restart", output: ["text"] }] };
    expect(judged({ parked, resumed: notReissued })["R-mcp-approval-restart-resumed"]).toMatchObject({ holds: false, observed: { reissuedCall: false } });
  });

  it("R-mcp-approval-restart: the same approval pending and run once: holds", () => {
    expect(judged({ parked, secondRestart: durable })["R-mcp-approval-restart"]).toEqual({
      id: "R-mcp-approval-restart",
      expectation: "approvals are durable: started again with the original policy, the same parked approval (same id) is still pending and listed, one allow-once runs the call exactly once, and the turn completes with the server's result",
      holds: true,
      kind: "differs-from-reference",
      observed: {
        startedWithOriginalPolicy: true,
        approval: { status: "pending", reason: null },
        listedPending: true,
        answer: "applied",
        serverCalls: 1,
        executed: 1,
        resultOfParkedCall: "south wrote 1 bytes to restart.txt",
      },
    });
    expect(judged({ parked, secondRestart: { ...durable, originalRun: "error" } })["R-mcp-approval-restart"]!.holds).toBe(false);
    expect(judged({ parked, secondRestart: { ...durable, tools: { alsoAllow: ["south__write_file"], deny: [] } } })["R-mcp-approval-restart"]).toMatchObject({ holds: false, observed: { startedWithOriginalPolicy: false } });
  });

  it("the registered signature (the restart closed the approval for good) reads known-finding", () => {
    expect(judged({ parked, secondRestart: notDurable })["R-mcp-approval-restart"]!.observed).toEqual({
      startedWithOriginalPolicy: true,
      approval: { status: "cancelled", reason: "gateway-restart" },
      listedPending: false,
      answer: "INVALID_REQUEST: unknown or expired approval id",
      serverCalls: 0,
      executed: 0,
      resultOfParkedCall: null,
    });
    const j = judgeHistory(history({ parked, firstRestart: first(), resumed: askedAgain(), secondRestart: notDurable, operator: { connected: true } }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-approval-restart"]);
  });

  it("R-mcp-approval-restart-operator: the operator's connection after the restarts still open holds; closed is short and fails the run", () => {
    expect(judged({ operator: { connected: true } })["R-mcp-approval-restart-operator"]).toEqual({
      id: "R-mcp-approval-restart-operator",
      expectation: "the operator's connection made after the restarts stays open while it answers the approval and reads the turn",
      holds: true,
      observed: { connected: true },
    });
    expect(judged({ operator: { connected: false } })["R-mcp-approval-restart-operator"]).toMatchObject({ holds: false, observed: { connected: false } });
    const j = judgeHistory(history({ parked, firstRestart: first(), resumed: askedAgain(), secondRestart: durable, operator: { connected: false } }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-mcp-approval-restart-operator: expectation not met and no finding is registered as R-mcp-approval-restart-operator"]);
    expect(judgeHistory(history({ parked, firstRestart: first(), resumed: askedAgain(), secondRestart: durable, operator: { connected: true } }), scenario, []).verdict).toBe("fixed?");
  });

  it("a body that returned before the second restart: unknown", () => {
    expect(judgeHistory(history({ parked, firstRestart: first(), resumed: askedAgain() }), scenario, []).verdict).toBe("unknown");
  });
});
