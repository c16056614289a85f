// midturn-node-loss's checks as pure functions of what its body observed: judged on hand-made
// histories, with no Docker; a history showing what openclaw@2026.9.6 did (the registered
// signatures) reads known-finding.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../lab/judge/history.ts";
import type { HistoryMessage } from "../lab/clients/sessions.ts";
import scenario, { type Observed } from "./midturn-node-loss.ts";
import { historyOf, premiseOf } from "../lab/testing/histories.ts";

const hist = (observations: Observed, version = "2026.9.6"): ScenarioHistory => historyOf(scenario, observations, version);
const check = (id: string, observations: Observed) => {
  const c = deriveChecks(scenario.checks!, observations as Observations, true).checks.find((x) => x.id === id);
  expect(c, `${id} judged`).toBeDefined();
  return { holds: c!.holds, observed: c!.observed };
};
/** The outcome of one check when the whole history is judged against the scenario's records. */
const outcome = (id: string, observations: Observed, version = "2026.9.6") => judgeHistory(hist(observations, version), scenario, []).checks.find((c) => c.findingId === id);

// ---- a lost turn as the body sees it: token mt-ee8db0, run run-1
const token = "mt-ee8db0";
const cp1 = `CHECKPOINT-1-${token}`;
const cp2 = `CHECKPOINT-2-${token}`;
const heldStream = `PARTIAL-${token} the checkpoint`;
const lost = { token, runId: "run-1", heldStream };

const user: HistoryMessage = { role: "user", content: `${token} run both checkpoints, then summarize`, __openclaw: { runId: "run-1" } };
const call = (n: number): HistoryMessage => ({ role: "assistant", content: [{ type: "toolCall", id: `call-${n}`, name: "read", arguments: { path: `checkpoint-${n}.txt` } }] });
const result = (n: number, text: string): HistoryMessage => ({ role: "toolResult", toolName: "read", toolCallId: `call-${n}`, content: [{ type: "text", text: `${text}\n` }] });
/** What chat.history holds just before the kill: the user message, two tool calls and their results. */
const beforeKill: HistoryMessage[] = [user, call(1), result(1, cp1), call(2), result(2, cp2)];
/** What chat.abort committed on 2026.9.6: the held partial stream as an ordinary assistant message. */
const partialMessage = { role: "assistant", content: [{ type: "text", text: heldStream }], stopReason: "stop" } as HistoryMessage;
const recovery: HistoryMessage[] = [
  { role: "user", content: "rec-7922eb recover after the node loss" },
  { role: "assistant", content: [{ type: "text", text: "fleetlab-ok: rec-7922eb recover after the node loss" }], stopReason: "stop" } as HistoryMessage,
];

const activeOffline = { state: "active", generation: 1, environmentId: "env-1", runner: { kind: "device", status: "offline", deviceId: "8a0f3e54" } };
const responses = (counts: { checkpoint1: number; checkpoint2: number; partialText: number }) => ({ method: "POST", path: "/v1/responses", ...counts });
/** What every run that gets to its checks observed on the way: the session placed, the kill at its point, the snapshot taken, the recovery turn answered. */
const steps: Observed = {
  dispatch: { alias: "node-1", state: "active", deviceId: "8a0f3e54" },
  toolRounds: [
    [0, "completed"],
    [1, "completed"],
    [2, "held"],
  ],
  snapshotBeforeKill: true,
  recoveryTurn: { message: "rec-7922eb recover after the node loss", text: "fleetlab-ok: rec-7922eb recover after the node loss" },
};

/** What openclaw@2026.9.6 showed (run 20261203-235947): every registered finding. */
const on2026_9_6: Observed = {
  ...steps,
  lost,
  atBound: { agentWait: "timeout", chat: [], placement: activeOffline, modelRequest: "held", history: beforeKill },
  nodeReturn: { workerSlots: { total: 2, available: 1 }, run: "timeout" },
  historyEnded: { beforeKill, afterEnd: [...beforeKill, partialMessage] },
  redispatch: { code: "INVALID_REQUEST", message: "session cannot dispatch from placement active" },
  recovery: [responses({ checkpoint1: 1, checkpoint2: 1, partialText: 1 })],
  historyAfterRecovery: [...beforeKill, partialMessage, ...recovery],
  chatEvents: {
    events: [
      { t: 1_000, runId: "run-1", state: "aborted" },
      { t: 2_000, runId: "run-2", state: "final" },
    ],
    abortedAt: 900,
  },
};

/** Everything a user needs: the lost turn ends with an error in time, and recovery is clean. */
const fixed: Observed = {
  ...steps,
  lost,
  atBound: {
    agentWait: "error",
    chat: [{ t: 500, runId: "run-1", state: "error" }],
    placement: { ...activeOffline, state: "failed", terminalReason: "node lost", runner: { kind: "device", status: "offline" } },
    modelRequest: "aborted",
    history: beforeKill,
  },
  nodeReturn: { workerSlots: { total: 2, available: 2 }, run: "error" },
  historyEnded: { beforeKill, afterEnd: beforeKill },
  redispatch: { state: "active" },
  recovery: [responses({ checkpoint1: 1, checkpoint2: 1, partialText: 0 })],
  historyAfterRecovery: [...beforeKill, ...recovery],
  chatEvents: { events: [{ t: 500, runId: "run-1", state: "error" }], abortedAt: null },
};

const ALL = [
  "R-midturn-loss-dispatch",
  "F-midturn-loss-turn-not-ended",
  "F-midturn-loss-placement-not-terminal",
  "F-midturn-loss-model-request-open",
  "R-midturn-loss-history-at-bound",
  "F-midturn-loss-slot-reserved",
  "F-midturn-loss-history-not-snapshot",
  "F-midturn-loss-redispatch-refused",
  "R-midturn-loss-recovery-turn",
  "F-midturn-loss-recovery-sees-partial",
  "F-midturn-loss-partial-in-history",
  "F-midturn-loss-no-chat-error",
];

describe("midturn-node-loss: the declared checks over what the body observed", () => {
  it("declares its checks in the order the body called them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual(ALL);
  });

  it("the run on 2026.9.6 reads known-finding: each registered finding matches its signature, the history at the bound holds", () => {
    const j = judgeHistory(hist(on2026_9_6), scenario, []);
    expect(j.verdict).toBe("known-finding");
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual(ALL.map((id) => [id, id.startsWith("F-") ? "known-finding" : "pass"]));
    expect(j.unexercised).toEqual([]);
  });

  it("a version where every expectation holds: each registered finding reads fixed?, the check of its own passes", () => {
    const j = judgeHistory(hist(fixed), scenario, []);
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual(ALL.map((id) => [id, id.startsWith("F-") ? "fixed?" : "pass"]));
  });

  describe("F-midturn-loss-turn-not-ended", () => {
    const id = "F-midturn-loss-turn-not-ended";
    it("holds: agent.wait said error within the bound, or a chat error event of the run came before it", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { within_s: 45, agentWait: "error", chatTerminalState: "error", runAfterNodeReturned: "error", runAfterNodeReturned_within_s: 20 } });
      const byEvent: Observed = { ...on2026_9_6, atBound: { ...on2026_9_6.atBound!, chat: [{ t: 1, runId: "run-1", state: "error" }] } };
      expect(check(id, byEvent)).toEqual({ holds: true, observed: { within_s: 45, agentWait: "timeout", chatTerminalState: "error", runAfterNodeReturned: "timeout", runAfterNodeReturned_within_s: 20 } });
    });
    it("does not hold: agent.wait timed out and no chat event ended the run (another run's final is not its end); 2026.9.6's signature is the registered finding", () => {
      const otherRun: Observed = { ...on2026_9_6, atBound: { ...on2026_9_6.atBound!, chat: [{ t: 1, runId: "run-2", state: "final" }] } };
      const observed = { within_s: 45, agentWait: "timeout", chatTerminalState: null, runAfterNodeReturned: "timeout", runAfterNodeReturned_within_s: 20 };
      expect(check(id, otherRun)).toEqual({ holds: false, observed });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding", observed });
    });
    it("the run ended with an error only once the node was back: the variant registered for 2026.9.4-2026.9.5", () => {
      const later: Observed = { ...on2026_9_6, nodeReturn: { ...on2026_9_6.nodeReturn!, run: "error" } };
      expect(check(id, later)).toEqual({ holds: false, observed: { within_s: 45, agentWait: "timeout", chatTerminalState: null, runAfterNodeReturned: "error", runAfterNodeReturned_within_s: 20 } });
      expect(outcome(id, later, "2026.9.5")).toMatchObject({ outcome: "known-finding", variant: ">=2026.9.4 <2026.9.6" });
    });
  });

  describe("F-midturn-loss-placement-not-terminal", () => {
    const id = "F-midturn-loss-placement-not-terminal";
    it("holds: failed or reclaimed with a reason (a terminalReason or a recoveryError)", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { within_s: 45, state: "failed", runner: { kind: "device", status: "offline" }, terminalReason: "node lost" } });
      const reclaimed: Observed = { atBound: { ...on2026_9_6.atBound!, placement: { state: "reclaimed", generation: 2, recoveryError: "node not connected" } } };
      expect(check(id, reclaimed)).toEqual({ holds: true, observed: { within_s: 45, state: "reclaimed", runner: null, terminalReason: null } });
    });
    it("does not hold: still active with its runner offline (the registered finding), failed without a reason, or no placement", () => {
      const observed = { within_s: 45, state: "active", runner: { kind: "device", status: "offline" }, terminalReason: null };
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding", observed });
      expect(check(id, { atBound: { ...on2026_9_6.atBound!, placement: { state: "failed", generation: 1 } } })).toEqual({ holds: false, observed: { within_s: 45, state: "failed", runner: null, terminalReason: null } });
      expect(check(id, { atBound: { ...on2026_9_6.atBound!, placement: null } })).toEqual({ holds: false, observed: { within_s: 45, state: null, runner: null, terminalReason: null } });
    });
  });

  describe("F-midturn-loss-model-request-open", () => {
    const id = "F-midturn-loss-model-request-open";
    it("holds: the held request was aborted", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { within_s: 45, status: "aborted" } });
    });
    it("does not hold: still held (the registered finding), or not listed", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { within_s: 45, status: "held" } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      expect(check(id, { atBound: { ...on2026_9_6.atBound!, modelRequest: null } })).toEqual({ holds: false, observed: { within_s: 45, status: null } });
    });
  });

  describe("R-midturn-loss-history-at-bound", () => {
    const id = "R-midturn-loss-history-at-bound";
    it("holds: each checkpoint once, no partial text", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: true, observed: { checkpoint1: 1, checkpoint2: 1, partialText: 0 } });
    });
    it("does not hold: the partial text already committed, or a checkpoint twice", () => {
      expect(check(id, { lost, atBound: { ...on2026_9_6.atBound!, history: [...beforeKill, partialMessage] } })).toEqual({ holds: false, observed: { checkpoint1: 1, checkpoint2: 1, partialText: 1 } });
      expect(check(id, { lost, atBound: { ...on2026_9_6.atBound!, history: [...beforeKill, result(1, cp1)] } })).toEqual({ holds: false, observed: { checkpoint1: 2, checkpoint2: 1, partialText: 0 } });
    });
  });

  describe("F-midturn-loss-slot-reserved", () => {
    const id = "F-midturn-loss-slot-reserved";
    it("holds: every slot free", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { within_s: 20, workerSlots: { total: 2, available: 2 } } });
    });
    it("does not hold: one slot still reserved (the registered finding), or no slots declared", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { within_s: 20, workerSlots: { total: 2, available: 1 } } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      expect(check(id, { nodeReturn: { workerSlots: null, run: "timeout" } })).toEqual({ holds: false, observed: { within_s: 20, workerSlots: null } });
    });
  });

  describe("F-midturn-loss-history-not-snapshot", () => {
    const id = "F-midturn-loss-history-not-snapshot";
    it("holds: the history once the turn ended is the snapshot before the kill", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { before: 5, removed: [], added: [] } });
    });
    it("does not hold: the held partial stream committed (the registered finding); other lines are said with the token normalised", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { before: 5, removed: [], added: ["assistant: <the held partial stream>"] } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      const rewritten: Observed = { lost, historyEnded: { beforeKill, afterEnd: [user, call(1), result(1, cp1)] } };
      expect(check(id, rewritten)).toEqual({
        holds: false,
        observed: { before: 5, removed: ['assistant:  [toolCall read {"path":"checkpoint-2.txt"}]', "toolResult: CHECKPOINT-2-<token>\n"], added: [] },
      });
    });
  });

  describe("F-midturn-loss-redispatch-refused", () => {
    const id = "F-midturn-loss-redispatch-refused";
    it("holds: the re-dispatch gave an active placement", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { state: "active" } });
    });
    it("does not hold: refused (the registered finding), or a placement not active", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { code: "INVALID_REQUEST", message: "session cannot dispatch from placement active" } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      expect(check(id, { redispatch: { state: "pending" } })).toEqual({ holds: false, observed: { state: "pending" } });
    });
  });

  describe("F-midturn-loss-recovery-sees-partial", () => {
    const id = "F-midturn-loss-recovery-sees-partial";
    it("holds: one Responses request carrying each checkpoint once and no partial text (a call that is not a Responses call is not counted)", () => {
      const obs: Observed = { recovery: [{ method: "GET", path: "/v1/models", checkpoint1: 0, checkpoint2: 0, partialText: 1 }, ...fixed.recovery!] };
      expect(check(id, obs)).toEqual({ holds: true, observed: { requests: 1, checkpoint1: 1, checkpoint2: 1, partialText: 0 } });
    });
    it("does not hold: the partial text in the request (the registered finding), or two requests (counted over both bodies)", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { requests: 1, checkpoint1: 1, checkpoint2: 1, partialText: 1 } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      const twice: Observed = { recovery: [...fixed.recovery!, ...fixed.recovery!] };
      expect(check(id, twice)).toEqual({ holds: false, observed: { requests: 2, checkpoint1: 2, checkpoint2: 2, partialText: 0 } });
      expect(check(id, { recovery: [] })).toEqual({ holds: false, observed: { requests: 0, checkpoint1: 0, checkpoint2: 0, partialText: 0 } });
    });
  });

  describe("F-midturn-loss-partial-in-history", () => {
    const id = "F-midturn-loss-partial-in-history";
    it("holds: after recovery each checkpoint once and no partial text", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { checkpoint1: 1, checkpoint2: 1, partialText: 0, partialMessages: [] } });
    });
    it("does not hold: the held stream kept as an assistant message (the registered finding), or a message that only quotes it", () => {
      expect(check(id, on2026_9_6)).toEqual({
        holds: false,
        observed: { checkpoint1: 1, checkpoint2: 1, partialText: 1, partialMessages: [{ role: "assistant", stopReason: "stop", textIsTheHeldStream: true }] },
      });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      const quoted: Observed = { lost, historyAfterRecovery: [...beforeKill, { role: "user", content: `${heldStream} and more` }] };
      expect(check(id, quoted)).toEqual({
        holds: false,
        observed: { checkpoint1: 1, checkpoint2: 1, partialText: 1, partialMessages: [{ role: "user", stopReason: null, textIsTheHeldStream: false }] },
      });
    });
  });

  describe("F-midturn-loss-no-chat-error", () => {
    const id = "F-midturn-loss-no-chat-error";
    it("holds: a chat error event of the run before any abort (no abort: after it is null)", () => {
      expect(check(id, fixed)).toEqual({ holds: true, observed: { beforeAbort: ["error"], afterAbort: null } });
    });
    it("does not hold: the run's only chat event is the abort's (the registered finding); an error after the user's abort does not count", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: false, observed: { beforeAbort: [], afterAbort: ["aborted"] } });
      expect(outcome(id, on2026_9_6)).toMatchObject({ outcome: "known-finding" });
      const afterAbort: Observed = { lost, chatEvents: { events: [{ t: 100, runId: "run-1", state: null }, { t: 950, runId: "run-1", state: "error" }], abortedAt: 900 } };
      expect(check(id, afterAbort)).toEqual({ holds: false, observed: { beforeAbort: [null], afterAbort: ["error"] } });
    });
  });

  describe("R-midturn-loss-dispatch (the body stops there when it does not hold)", () => {
    const id = "R-midturn-loss-dispatch";
    it("holds: the session placed on the node, active", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    });
    it("does not hold: not active; a body that stopped there fails on it, nothing after it is judged", () => {
      const local: Observed = { dispatch: { alias: "node-1", state: "local" } };
      expect(check(id, local)).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
      const j = judgeHistory({ ...hist(local), stopped: id }, scenario, []);
      expect(j).toMatchObject({ verdict: "fail", detail: `${id}: expectation not met and no finding is registered as ${id}` });
      expect(j.checks.map((c) => c.findingId)).toEqual([id]);
    });
  });

  describe("P-midturn-loss-kill-point (the body stops there when it is not met)", () => {
    const id = "P-midturn-loss-kill-point";
    it("met: two tool rounds completed, the third held", () => {
      expect(premiseOf(scenario, id, on2026_9_6)).toEqual({ id, met: true, observed: { rounds: steps.toolRounds } });
    });
    it("not met: the answer held at another round, or a round asked twice; a body that stopped there is unknown", () => {
      const early: Observed = { dispatch: steps.dispatch, lost, toolRounds: [[0, "completed"], [1, "held"]] };
      expect(premiseOf(scenario, id, early)).toEqual({ id, met: false, observed: { rounds: [[0, "completed"], [1, "held"]] } });
      const again: [number | null, string][] = [[0, "completed"], [0, "completed"], [1, "completed"], [2, "held"]];
      expect(premiseOf(scenario, id, { toolRounds: again })).toEqual({ id, met: false, observed: { rounds: again } });
      const j = judgeHistory({ ...hist(early), stopped: id }, scenario, []);
      expect(j.verdict).toBe("unknown");
      expect(j.detail).toBe(`the lab could not tell: premise ${id} not met (${scenario.premises![0]!.what}): observed {"rounds":[[0,"completed"],[1,"held"]]}`);
    });
  });

  describe("P-midturn-loss-snapshot (the body stops there when it is not met)", () => {
    const id = "P-midturn-loss-snapshot";
    it("met: the snapshot was taken before the kill", () => {
      expect(premiseOf(scenario, id, on2026_9_6)).toEqual({ id, met: true, observed: { taken: true } });
    });
    it("not met: no snapshot; a body that stopped there is unknown, not the fail of a check judged before it", () => {
      const none: Observed = { ...on2026_9_6, snapshotBeforeKill: false, historyEnded: undefined, redispatch: undefined, recoveryTurn: undefined, recovery: undefined, historyAfterRecovery: undefined, chatEvents: undefined };
      expect(premiseOf(scenario, id, none)).toEqual({ id, met: false, observed: { taken: false } });
      const j = judgeHistory({ ...hist(none), stopped: id }, scenario, []);
      expect(j.verdict).toBe("unknown");
      expect(j.detail).toContain(`premise ${id} not met`);
    });
  });

  describe("R-midturn-loss-recovery-turn (the body stops there when it does not hold)", () => {
    const id = "R-midturn-loss-recovery-turn";
    it("holds: the recovery turn answered with the scripted reply", () => {
      expect(check(id, on2026_9_6)).toEqual({ holds: true, observed: { reply: "the scripted reply" } });
    });
    it("does not hold: another answer (its token normalised) or an error; a body that stopped there fails on it", () => {
      const message = "rec-7922eb recover after the node loss";
      expect(check(id, { recoveryTurn: { message, text: "fleetlab-ok: rec-7922eb something else" } })).toEqual({ holds: false, observed: { reply: "fleetlab-ok: <token> something else" } });
      const failed: Observed = { recoveryTurn: { message, error: "chat turn 0b6d8f0e-1c2a-4e5b-9f3d-2a1b3c4d5e6f in agent:main:fleetlab-3fa2c1 ended with status timeout: rec-7922eb" } };
      expect(check(id, failed)).toEqual({ holds: false, observed: { reply: "none", error: "chat turn <uuid> in agent:main:fleetlab-<id> ended with status timeout: <token>" } });
      const { recovery: _r, historyAfterRecovery: _h, chatEvents: _c, ...before } = on2026_9_6;
      const j = judgeHistory({ ...hist({ ...before, ...failed }), stopped: id }, scenario, []);
      expect(j.verdict).toBe("fail");
      expect(j.detail).toContain(`${id}: expectation not met and no finding is registered as ${id}`);
      expect(j.checks.map((c) => c.findingId)).not.toContain("F-midturn-loss-no-chat-error");
    });
  });

  it("what a check reads was not observed: it is not judged (the body ended before it), and after the body returned the verdict is unknown", () => {
    const early: Observed = { lost, atBound: on2026_9_6.atBound };
    expect(deriveChecks(scenario.checks!, early as Observations, false).checks.map((c) => c.id)).toEqual(["F-midturn-loss-placement-not-terminal", "F-midturn-loss-model-request-open", "R-midturn-loss-history-at-bound"]);
    const j = judgeHistory(hist({ ...on2026_9_6, chatEvents: undefined }), scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("check F-midturn-loss-no-chat-error had nothing to judge");
  });
});
