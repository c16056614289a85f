// pair-remove's checks as pure functions of what its body observed: judged on hand-made
// histories, with no Docker.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import { expectedReply } from "../../lab/kits/workers.ts";
import scenario, { type Observed } from "./pair-remove.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const check = (id: string, observations: Observed) => {
  const c = deriveChecks(scenario.checks!, observations as Observations, true).checks.find((x) => x.id === id);
  expect(c, `${id} judged`).toBeDefined();
  return { holds: c!.holds, observed: c!.observed };
};

const nodeId = "8a0f3e549864bbb935b7c74f0c6a869b28318e825731ec354844679146d1ef3d";
const session = "agent:main:fleetlab-dd3c9a";
const env = (worker: Record<string, unknown> | undefined) => ({ id: "env-1", type: "worker", status: "ready", ...(worker ? { worker: worker as never } : {}) });
const message = "tok-5e1f2a local after removal";
// What 2026.9.6 showed (runs 20261130-152637-acd8, 20261130-152707-68be): every check holds.
const recoveryError =
  "Worker reclaim teardown failed: tunnel stop: device worker node is not connected with the supervisor dialect; environment destroy: Worker environment cleanup is still pending: Worker provider no longer recognizes the lease";
const asQaLab: Observed = {
  baselineTurn: { status: "ok", expectedReply: true },
  dispatch: { alias: "node-1", state: "active", environment: true, ownerEpoch: true },
  environmentBefore: { listed: true, attachedSessions: 1 },
  removal: { nodeId, answer: { nodeId } },
  environment: { attachedBefore: [session], after: env({ providerId: "device", state: "attached", attachedSessionIds: [session], tunnelStatus: "stopped" }) },
  placement: { state: "failed", generation: 2, environmentId: "env-1", recoveryError },
  nodeAfter: { listed: false, connected: false, paired: false, approvalState: null },
  localTurn: { message, status: "ok", text: expectedReply(message) },
};

describe("pair-remove: the declared checks over what the body observed", () => {
  it("declares its eight checks in the order the body called them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual(["P-pair-remove-baseline-turn", "P-pair-remove-dispatch", "P-pair-remove-attached", "P-pair-remove-answer", "P-pair-remove-environment", "P-pair-remove-placement-failed", "P-pair-remove-node-disconnected", "P-pair-remove-local-turn"]);
  });

  it("as on 2026.9.6 (qa-lab's assertions): every check holds, the verdict is pass", () => {
    expect(judgeHistory(hist(asQaLab), scenario, [])).toMatchObject({ verdict: "pass" });
  });

  describe("P-pair-remove-baseline-turn (the body stops there when it does not hold)", () => {
    it("holds: the gateway-local turn before the removal answered with the scripted reply", () => {
      expect(check("P-pair-remove-baseline-turn", asQaLab)).toEqual({ holds: true, observed: { status: "ok", expectedReply: true, error: null } });
    });
    it("does not hold: another answer, or an error (normalised); a body that stopped there fails on it, nothing after it judged", () => {
      expect(check("P-pair-remove-baseline-turn", { baselineTurn: { status: "ok", expectedReply: false } })).toEqual({ holds: false, observed: { status: "ok", expectedReply: false, error: null } });
      const failed: Observed = { baselineTurn: { status: "error", expectedReply: false, error: "run 0b6d8f0e-1c2a-4e5b-9f3d-2a1b3c4d5e6f failed" } };
      expect(check("P-pair-remove-baseline-turn", failed)).toEqual({ holds: false, observed: { status: "error", expectedReply: false, error: "run <uuid> failed" } });
      const j = judgeHistory({ ...hist(failed), stopped: "P-pair-remove-baseline-turn" }, scenario, []);
      expect(j).toMatchObject({ verdict: "fail", detail: "P-pair-remove-baseline-turn: expectation not met and no finding is registered as P-pair-remove-baseline-turn" });
      expect(j.checks.map((c) => c.findingId)).toEqual(["P-pair-remove-baseline-turn"]);
    });
  });

  describe("P-pair-remove-dispatch (the body stops there when it does not hold)", () => {
    it("holds: active, with its environment and owner epoch", () => {
      expect(check("P-pair-remove-dispatch", asQaLab)).toEqual({ holds: true, observed: { alias: "node-1", state: "active", environment: true, ownerEpoch: true } });
    });
    it("does not hold: not active, or active without its environment or owner epoch; a body that stopped there fails on it", () => {
      expect(check("P-pair-remove-dispatch", { dispatch: { alias: "node-1", state: "local", environment: false, ownerEpoch: false } })).toEqual({ holds: false, observed: { alias: "node-1", state: "local", environment: false, ownerEpoch: false } });
      expect(check("P-pair-remove-dispatch", { dispatch: { alias: "node-1", state: "active", environment: true, ownerEpoch: false } })).toEqual({ holds: false, observed: { alias: "node-1", state: "active", environment: true, ownerEpoch: false } });
      const noEnv: Observed = { baselineTurn: asQaLab.baselineTurn, dispatch: { alias: "node-1", state: "active", environment: false, ownerEpoch: true } };
      expect(check("P-pair-remove-dispatch", noEnv)).toEqual({ holds: false, observed: { alias: "node-1", state: "active", environment: false, ownerEpoch: true } });
      expect(judgeHistory({ ...hist(noEnv), stopped: "P-pair-remove-dispatch" }, scenario, [])).toMatchObject({
        verdict: "fail",
        detail: "P-pair-remove-dispatch: expectation not met and no finding is registered as P-pair-remove-dispatch",
      });
    });
  });

  describe("P-pair-remove-attached (the body stops there when it does not hold)", () => {
    it("holds: the environment listed with one session attached", () => {
      expect(check("P-pair-remove-attached", asQaLab)).toEqual({ holds: true, observed: { listed: true, attachedSessions: 1 } });
    });
    it("does not hold: two sessions, none said, or the environment not listed; a body that stopped there fails on it", () => {
      expect(check("P-pair-remove-attached", { environmentBefore: { listed: true, attachedSessions: 2 } })).toEqual({ holds: false, observed: { listed: true, attachedSessions: 2 } });
      expect(check("P-pair-remove-attached", { environmentBefore: { listed: true, attachedSessions: null } })).toEqual({ holds: false, observed: { listed: true, attachedSessions: null } });
      const unlisted: Observed = { baselineTurn: asQaLab.baselineTurn, dispatch: asQaLab.dispatch, environmentBefore: { listed: false, attachedSessions: null } };
      expect(check("P-pair-remove-attached", unlisted)).toEqual({ holds: false, observed: { listed: false, attachedSessions: null } });
      expect(judgeHistory({ ...hist(unlisted), stopped: "P-pair-remove-attached" }, scenario, [])).toMatchObject({
        verdict: "fail",
        detail: "P-pair-remove-attached: expectation not met and no finding is registered as P-pair-remove-attached",
      });
    });
  });

  describe("P-pair-remove-answer", () => {
    it("holds: the answer names the removed node", () => {
      expect(check("P-pair-remove-answer", asQaLab)).toEqual({ holds: true, observed: { nodeId: "<the node>" } });
    });
    it("does not hold: another nodeId (normalised), none, or a refusal", () => {
      expect(check("P-pair-remove-answer", { removal: { nodeId, answer: { nodeId: "b".repeat(64) } } })).toEqual({ holds: false, observed: { nodeId: "<id>" } });
      expect(check("P-pair-remove-answer", { removal: { nodeId, answer: { ok: true } } })).toEqual({ holds: false, observed: { nodeId: null } });
      expect(check("P-pair-remove-answer", { removal: { nodeId, answer: { ok: false, code: "INVALID_REQUEST", message: `unknown node ${nodeId}` } } })).toEqual({
        holds: false,
        observed: { refused: "INVALID_REQUEST: unknown node <id>" },
      });
    });
  });

  describe("P-pair-remove-environment", () => {
    it("holds: still attached to the same session, tunnel stopped", () => {
      expect(check("P-pair-remove-environment", asQaLab)).toEqual({ holds: true, observed: { state: "attached", sameSessions: true, tunnelStatus: "stopped", error: null } });
    });
    it("does not hold: detached, other sessions, a tunnel still up, or the environment no longer listed", () => {
      const detached: Observed = { environment: { attachedBefore: [session], after: env({ state: "detached", attachedSessionIds: [], tunnelStatus: "stopped", error: "lease lost at 2026-11-30T15:26:37.000Z" }) } };
      expect(check("P-pair-remove-environment", detached)).toEqual({ holds: false, observed: { state: "detached", sameSessions: false, tunnelStatus: "stopped", error: "lease lost at <time>" } });
      const up: Observed = { environment: { attachedBefore: [session], after: env({ state: "attached", attachedSessionIds: [session], tunnelStatus: "running" }) } };
      expect(check("P-pair-remove-environment", up)).toEqual({ holds: false, observed: { state: "attached", sameSessions: true, tunnelStatus: "running", error: null } });
      expect(check("P-pair-remove-environment", { environment: { attachedBefore: [session], after: env(undefined) } })).toEqual({
        holds: false,
        observed: { state: null, sameSessions: false, tunnelStatus: null, error: null },
      });
      expect(check("P-pair-remove-environment", { environment: { attachedBefore: [session], after: null } })).toEqual({ holds: false, observed: { listed: false } });
    });
  });

  describe("P-pair-remove-placement-failed", () => {
    it("holds: failed, its recoveryError saying not connected (normalised)", () => {
      expect(check("P-pair-remove-placement-failed", asQaLab)).toEqual({ holds: true, observed: { state: "failed", recoveryError } });
      const withIds: Observed = { placement: { state: "failed", generation: 2, recoveryError: "node 8a0f3e549864bbb9 not connected" } };
      expect(check("P-pair-remove-placement-failed", withIds)).toEqual({ holds: true, observed: { state: "failed", recoveryError: "node <id> not connected" } });
    });
    it("does not hold: still active, failed for another reason, or no placement", () => {
      expect(check("P-pair-remove-placement-failed", { placement: { state: "active", generation: 1 } })).toEqual({ holds: false, observed: { state: "active", recoveryError: null } });
      expect(check("P-pair-remove-placement-failed", { placement: { state: "failed", generation: 2, recoveryError: "lease expired" } })).toEqual({ holds: false, observed: { state: "failed", recoveryError: "lease expired" } });
      expect(check("P-pair-remove-placement-failed", { placement: null })).toEqual({ holds: false, observed: { state: null, recoveryError: null } });
    });
  });

  describe("P-pair-remove-node-disconnected", () => {
    it("holds: gone from node.list, or listed but not connected", () => {
      expect(check("P-pair-remove-node-disconnected", asQaLab)).toEqual({ holds: true, observed: { within_s: 30, listed: false, connected: false, paired: false, approvalState: null } });
      const listed: Observed = { nodeAfter: { listed: true, connected: false, paired: false, approvalState: "pending" } };
      expect(check("P-pair-remove-node-disconnected", listed)).toEqual({ holds: true, observed: { within_s: 30, listed: true, connected: false, paired: false, approvalState: "pending" } });
    });
    it("does not hold: still connected at the deadline", () => {
      const still: Observed = { nodeAfter: { listed: true, connected: true, paired: false, approvalState: null } };
      expect(check("P-pair-remove-node-disconnected", still)).toEqual({ holds: false, observed: { within_s: 30, listed: true, connected: true, paired: false, approvalState: null } });
    });
  });

  describe("P-pair-remove-local-turn", () => {
    it("holds: the gateway-local turn answered with the scripted reply to its message", () => {
      expect(check("P-pair-remove-local-turn", asQaLab)).toEqual({ holds: true, observed: { status: "ok", error: null } });
    });
    it("does not hold: another answer, or an error (normalised)", () => {
      expect(check("P-pair-remove-local-turn", { localTurn: { message, status: "ok", text: "fleetlab-ok: something else" } })).toEqual({ holds: false, observed: { status: "ok", error: null } });
      const failed: Observed = { localTurn: { message, status: "error", error: "run 0b6d8f0e-1c2a-4e5b-9f3d-2a1b3c4d5e6f failed" } };
      expect(check("P-pair-remove-local-turn", failed)).toEqual({ holds: false, observed: { status: "error", error: "run <uuid> failed" } });
    });
  });

  it("one check short: fail (nothing is registered); nothing observed after the body returned: unknown", () => {
    const short = judgeHistory(hist({ ...asQaLab, nodeAfter: { listed: true, connected: true, paired: false, approvalState: null } }), scenario, []);
    expect(short.verdict).toBe("fail");
    expect(short.checks.filter((c) => c.outcome !== "pass").map((c) => c.findingId)).toEqual(["P-pair-remove-node-disconnected"]);
    const none = judgeHistory(hist({}), scenario, []);
    expect(none.verdict).toBe("unknown");
    expect(none.detail).toContain("check P-pair-remove-baseline-turn had nothing to judge");
    expect(none.detail).toContain("check P-pair-remove-answer had nothing to judge");
  });
});
