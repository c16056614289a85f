// offline-dispatch's declared checks, judged on hand-made histories (no Docker): the dispatch to
// the down node, the turn queued while it was down, and the dispatch once it was back.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { type Observed } from "./offline-dispatch.ts";
import { historyOf } from "../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const judged = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks!, o, true).checks.find((x) => x.id === id)!;
  return { holds: c.holds, observed: c.observed };
};

const NODE_ID = "9c1f".repeat(16);
const REPLY = "fleetlab-ok: read returned: mark-5 written only on node-1";
const turn = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: "mark-5", reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 12, t: 1, conn: "c4", launchId: "l", environmentId: "env-1" }], ...more });

const good = (): Observed => ({
  dispatch: { alias: "node-1", state: "active", deviceId: NODE_ID },
  refused: { nodeId: NODE_ID, result: { code: "INVALID_REQUEST", message: `device worker node is not connected: ${NODE_ID}; reconnect it before retrying` }, ms: 40, placement: null },
  queued: { chatSend: "started", whileDown: "timeout", whileDown_ms: 3_000, afterReturn: "ok", turn: turn() },
  back: { sameNodeId: true, pendingDevice: 0, pendingNode: 0 },
  again: { state: "active", ms: 900 },
});

describe("offline-dispatch", () => {
  it("a run where the down node refused, the queued turn waited and ran there, and the dispatch after its return placed: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-offline-dispatch-placed", true],
      ["R-offline-dispatch-refused", true],
      ["R-offline-dispatch-queued-turn", true],
      ["R-offline-dispatch-same-node", true],
      ["R-offline-dispatch-after-return", true],
    ]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("R-offline-dispatch-refused: the clear error at once, nothing placed (the node id replaced in the observed)", () => {
    expect(judged(good(), "R-offline-dispatch-refused")).toEqual({ holds: true, observed: { code: "INVALID_REQUEST", message: "device worker node is not connected: <nodeId>; reconnect it before retrying", within5s: true, placement: null } });
    const accepted = { ...good(), refused: { nodeId: NODE_ID, result: { accepted: "active" }, ms: 120, placement: "active" } };
    expect(judged(accepted, "R-offline-dispatch-refused")).toEqual({ holds: false, observed: { accepted: "active", within5s: true, placement: "active" } });
    const slow = { ...good(), refused: { ...good().refused!, ms: 5_000, placement: "pending" } };
    expect(judged(slow, "R-offline-dispatch-refused")).toEqual({ holds: false, observed: { code: "INVALID_REQUEST", message: "device worker node is not connected: <nodeId>; reconnect it before retrying", within5s: false, placement: "pending" } });
    expect(judgeHistory(hist(slow), scenario, []).verdict).toBe("fail");
  });

  it("R-offline-dispatch-queued-turn: accepted, still waiting while down, ok after the return, on the node", () => {
    expect(judged(good(), "R-offline-dispatch-queued-turn")).toEqual({ holds: true, observed: { chatSend: "started", whileDown: "timeout", whileDown_ms: 3_000, afterReturn: "ok", reply: "node-only marker", launches: 1 } });
    // Failed at once while the node was down: no reply, no launch.
    const failed = { ...good(), queued: { chatSend: "started", whileDown: "error", whileDown_ms: 3_000, afterReturn: "error", turn: turn({ reply: null, launches: [] }) } };
    expect(judged(failed, "R-offline-dispatch-queued-turn")).toEqual({ holds: false, observed: { chatSend: "started", whileDown: "error", whileDown_ms: 3_000, afterReturn: "error", reply: "none", launches: 0 } });
    expect(judgeHistory(hist(failed), scenario, []).verdict).toBe("fail");
    // Answered, but the launch went to another placement (a gateway-local run): not on the node.
    const elsewhere = { ...good(), queued: { ...good().queued!, turn: turn({ launches: [{ seq: 12, t: 1, conn: "c4", environmentId: "env-other" }] }) } };
    expect(judged(elsewhere, "R-offline-dispatch-queued-turn")).toEqual({ holds: false, observed: { chatSend: "started", whileDown: "timeout", whileDown_ms: 3_000, afterReturn: "ok", reply: "node-only marker", launches: 0 } });
  });

  it("R-offline-dispatch-after-return: what the dispatch gave is the observed", () => {
    expect(judged(good(), "R-offline-dispatch-after-return")).toEqual({ holds: true, observed: { state: "active", ms: 900 } });
    expect(judged({ ...good(), again: { error: "INVALID_REQUEST: device worker node is not connected" } }, "R-offline-dispatch-after-return")).toEqual({ holds: false, observed: { error: "INVALID_REQUEST: device worker node is not connected" } });
    expect(judged({ ...good(), again: { state: "failed", ms: 30 } }, "R-offline-dispatch-after-return")).toEqual({ holds: false, observed: { state: "failed", ms: 30 } });
  });

  it("R-offline-dispatch-placed: the session must be placed on the node before the kill; a body that stopped there fails on it, nothing after it is judged", () => {
    expect(judged(good(), "R-offline-dispatch-placed")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local, "R-offline-dispatch-placed")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    const j = judgeHistory({ ...hist(local), stopped: "R-offline-dispatch-placed" }, scenario, []);
    expect(j).toMatchObject({ verdict: "fail", detail: "R-offline-dispatch-placed: expectation not met and no finding is registered as R-offline-dispatch-placed" });
    expect(j.checks.map((c) => c.findingId)).toEqual(["R-offline-dispatch-placed"]);
  });

  it("R-offline-dispatch-same-node: the node back with its nodeId and no pairing request; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-offline-dispatch-same-node")).toEqual({ holds: true, observed: { sameNodeId: true, pendingDevicePairing: 0, pendingNodePairing: 0 } });
    const other = { ...good(), back: { sameNodeId: false, pendingDevice: 1, pendingNode: 0 } };
    expect(judged(other, "R-offline-dispatch-same-node")).toEqual({ holds: false, observed: { sameNodeId: false, pendingDevicePairing: 1, pendingNodePairing: 0 } });
    const pending = { ...good(), back: { sameNodeId: true, pendingDevice: 0, pendingNode: 1 } };
    expect(judged(pending, "R-offline-dispatch-same-node")).toEqual({ holds: false, observed: { sameNodeId: true, pendingDevicePairing: 0, pendingNodePairing: 1 } });
    const { again: _again, ...stopped } = other;
    expect(judgeHistory({ ...hist(stopped), stopped: "R-offline-dispatch-same-node" }, scenario, [])).toMatchObject({
      verdict: "fail",
      detail: "R-offline-dispatch-same-node: expectation not met and no finding is registered as R-offline-dispatch-same-node",
    });
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { again: _again, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-offline-dispatch-after-return had nothing to judge: the body returned without observing what it reads" });
  });
});
