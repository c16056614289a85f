// capacity's declared checks and premise, judged on hand-made histories (no Docker): what its body
// observes of the nodes' slots, the dispatches, turns A and C, and turn B (sent to a session on the
// full node, the registered finding) decides them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import { historyOf, premiseOf } from "../lab/testing/histories.ts";
import scenario, { CAPACITY_TURN_FINDING, type Observed, type TurnOnFullNode } from "./capacity.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const derived = (o: Observed) => deriveChecks(scenario.checks!, o, true);

const MARK = "mark-0a1b2c3d";
const REPLY = `fleetlab-ok: read returned: ${MARK} written only on node-1`;
const onNode = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: MARK, reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 41, t: 1, conn: "c3", launchId: "l-1", environmentId: "env-1" }], ...more });
const ERROR = "⚠️ Agent failed before reply: device worker capacity remained full.\nTo view logs, run `openclaw logs --follow` in a terminal.";
const TRANSCRIPT = ["run-failed-before-reply: This turn ended before a reply: device worker capacity remained full"];

/** Turn B as 2026.9.6 showed it: failed after ~10 s while the slot was held, never run once it freed. */
const failed: TurnOnFullNode = { chatSend: "started", agentWait: "error", error: ERROR, waitedMs: 10_412, transcript: TRANSCRIPT, afterSlotFreed: { within_s: 30, modelRequests: 0, answered: false } };
/** Turn B waiting for the slot and answered on the node once it freed. */
const waited: TurnOnFullNode = { chatSend: "started", agentWait: "timeout", waitedMs: 30_004, transcript: [], afterSlotFreed: { within_s: 30, modelRequests: 1, answered: true }, onNode: onNode() };

const EXPECTATION = "a turn sent to a session whose node has every worker slot busy waits for a slot and completes on that node once one frees (as a turn to an offline node does)";

const NODE_ID = "3f9a0c7d1e2b4a5968c7d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5";
const OTHER_ID = "9b8a7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9";
const AT_CAPACITY = `device worker is at capacity (all worker slots in use): ${NODE_ID}; stop an existing worker environment or retry when a slot is free`;
const MARK_A = "mark-4d5e6f";
const REPLY_A = `fleetlab-ok: read returned: ${MARK_A} written only on node-1`;
const turnA = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: MARK_A, reply: REPLY_A, environmentId: "env-a" }, reply: REPLY_A, launches: [{ seq: 20, t: 1, conn: "c3", launchId: "l-a", environmentId: "env-a" }], ...more });
const MARK_C = "mark-7a8b9c";
const REPLY_C = `fleetlab-ok: read returned: ${MARK_C} written only on node-2`;
const turnC = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-2", marker: { nonce: MARK_C, reply: REPLY_C, environmentId: "env-c" }, reply: REPLY_C, launches: [{ seq: 60, t: 3, conn: "c4", launchId: "l-c", environmentId: "env-c" }], ...more });

/** Everything before turn B as a user needs it: one slot each, A and B placed on node-1, C refused there and placed on node-2, turn A proven on node-1. */
const before = (): Observed => ({
  slots: [
    { alias: "node-1", total: 1 },
    { alias: "node-2", total: 1 },
  ],
  fullNode: { alias: "node-1", nodeId: NODE_ID },
  dispatch: [
    { alias: "node-1", state: "active", deviceId: NODE_ID },
    { alias: "node-1", state: "active", deviceId: NODE_ID },
  ],
  placedSlots: { total: 1, available: 1 },
  toFull: { result: { code: "INVALID_REQUEST", message: AT_CAPACITY }, placementAfter: null },
  auto: { others: ["node-2"], result: { placedOn: "node-2" } },
  turnA: turnA(),
});
/** A run where every expectation holds: turn B waited for the slot and ran on node-1; B's retry and C's turn ran on their nodes. */
const good = (): Observed => ({ ...before(), turnB: waited, retryB: onNode(), turnC: turnC() });
/** A declared check over `o`: holds and the exact observed (undefined: nothing to read). */
const judged = (o: Observed, id: string) => {
  const c = derived(o).checks.find((x) => x.id === id);
  return c && { holds: c.holds, observed: c.observed };
};
const stoppedAt = (o: Observed, id: string) => judgeHistory({ ...hist(o), stopped: id }, scenario, []);

describe("capacity: its checks over a run where everything holds", () => {
  it("declares its premise and its checks in the order the body makes them", () => {
    expect(scenario.premises!.map((p) => p.id)).toEqual(["P-capacity-one-slot"]);
    expect(scenario.checks!.map((c) => c.id)).toEqual([
      "R-capacity-dispatch",
      "R-capacity-placement-no-slot",
      "R-capacity-full-refused",
      "R-capacity-auto-dispatch",
      "R-capacity-turn-a",
      CAPACITY_TURN_FINDING,
      "R-capacity-retry",
      "R-capacity-turn-c",
    ]);
  });

  it("every check holds and none lacks its observation; the registered finding not shown reads fixed?", () => {
    const d = derived(good());
    expect(d.notes).toEqual([]);
    expect(d.checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-capacity-dispatch", true],
      ["R-capacity-placement-no-slot", true],
      ["R-capacity-full-refused", true],
      ["R-capacity-auto-dispatch", true],
      ["R-capacity-turn-a", true],
      [CAPACITY_TURN_FINDING, true],
      ["R-capacity-retry", true],
      ["R-capacity-turn-c", true],
    ]);
    const j = judgeHistory(hist(good()), scenario, []);
    expect(j.premises.map((p) => [p.id, p.met])).toEqual([["P-capacity-one-slot", true]]);
    expect([j.verdict, j.checks.filter((c) => c.outcome !== "pass").map((c) => [c.findingId, c.outcome])]).toEqual(["fixed?", [[CAPACITY_TURN_FINDING, "fixed?"]]]);
  });

  it("what 2026.9.6 was seen to do (turn B failed while the slot was held) reads known-finding, every other check passes", () => {
    const j = judgeHistory(hist({ ...good(), turnB: failed }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", `known-finding ${CAPACITY_TURN_FINDING}`]);
    expect(j.checks.filter((c) => c.outcome !== "pass").map((c) => c.findingId)).toEqual([CAPACITY_TURN_FINDING]);
  });
});

describe("capacity: the premise and the steps before turn B", () => {
  it("P-capacity-one-slot: met with one slot on every node; any other count stops the body, unknown", () => {
    expect(premiseOf(scenario, "P-capacity-one-slot", good())).toEqual({ id: "P-capacity-one-slot", met: true, observed: before().slots });
    const two: Observed = { slots: [{ alias: "node-1", total: 2 }] };
    expect(premiseOf(scenario, "P-capacity-one-slot", two)).toEqual({ id: "P-capacity-one-slot", met: false, observed: [{ alias: "node-1", total: 2 }] });
    const none: Observed = { slots: [{ alias: "node-1", total: 1 }, { alias: "node-2", total: null }] };
    expect(premiseOf(scenario, "P-capacity-one-slot", none)).toEqual({ id: "P-capacity-one-slot", met: false, observed: none.slots });
    const j = stoppedAt(two, "P-capacity-one-slot");
    expect([j.verdict, j.detail]).toEqual([
      "unknown",
      'the lab could not tell: premise P-capacity-one-slot not met (every node host came up with exactly one worker slot (the lab\'s nodeHost.workerRuns.capacity 1), so one held turn fills a node): observed [{"alias":"node-1","total":2}]',
    ]);
    expect(j.derived).toEqual([]);
  });

  it("R-capacity-dispatch: both sessions active on the full node; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-capacity-dispatch")).toEqual({
      holds: true,
      observed: [
        { alias: "node-1", state: "active", onNode: true },
        { alias: "node-1", state: "active", onNode: true },
      ],
    });
    const elsewhere: Observed = { ...before(), dispatch: [{ alias: "node-1", state: "active", deviceId: NODE_ID }, { alias: "node-1", state: "active", deviceId: OTHER_ID }] };
    expect(judged(elsewhere, "R-capacity-dispatch")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", state: "active", onNode: true },
        { alias: "node-1", state: "active", onNode: false },
      ],
    });
    const local: Observed = { ...before(), dispatch: [{ alias: "node-1", state: "local" }, { alias: "node-1", state: "active", deviceId: NODE_ID }] };
    expect(judged(local, "R-capacity-dispatch")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", state: "local", onNode: false },
        { alias: "node-1", state: "active", onNode: true },
      ],
    });
    const { slots, fullNode } = before();
    expect(stoppedAt({ slots, fullNode, dispatch: elsewhere.dispatch }, "R-capacity-dispatch")).toMatchObject({ verdict: "fail", detail: "R-capacity-dispatch: expectation not met and no finding is registered as R-capacity-dispatch" });
  });

  it("R-capacity-placement-no-slot: the slot is still free with two placements and no turn; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-capacity-placement-no-slot")).toEqual({ holds: true, observed: { total: 1, available: 1 } });
    expect(judged({ placedSlots: { total: 1, available: 0 } }, "R-capacity-placement-no-slot")).toEqual({ holds: false, observed: { total: 1, available: 0 } });
    expect(judged({ placedSlots: null }, "R-capacity-placement-no-slot")).toEqual({ holds: false, observed: null });
    const { slots, fullNode, dispatch } = before();
    expect(stoppedAt({ slots, fullNode, dispatch, placedSlots: { total: 1, available: 0 } }, "R-capacity-placement-no-slot")).toMatchObject({
      verdict: "fail",
      detail: "R-capacity-placement-no-slot: expectation not met and no finding is registered as R-capacity-placement-no-slot",
    });
  });

  it("R-capacity-full-refused: refused with the capacity error, nothing active after; the node id named in the observed is replaced", () => {
    expect(judged(good(), "R-capacity-full-refused")).toEqual({
      holds: true,
      observed: { code: "INVALID_REQUEST", message: "device worker is at capacity (all worker slots in use): <full node>; stop an existing worker environment or retry when a slot is free", placementAfter: null },
    });
    const leftActive: Observed = { ...before(), toFull: { result: { code: "INVALID_REQUEST", message: AT_CAPACITY }, placementAfter: "active" } };
    expect(judged(leftActive, "R-capacity-full-refused")).toEqual({
      holds: false,
      observed: { code: "INVALID_REQUEST", message: "device worker is at capacity (all worker slots in use): <full node>; stop an existing worker environment or retry when a slot is free", placementAfter: "active" },
    });
    const otherwise: Observed = { ...before(), toFull: { result: { code: "UNAVAILABLE", message: `node ${OTHER_ID} busy` }, placementAfter: "local" } };
    expect(judged(otherwise, "R-capacity-full-refused")).toEqual({ holds: false, observed: { code: "UNAVAILABLE", message: "node <id> busy", placementAfter: "local" } });
    const accepted: Observed = { ...before(), toFull: { result: { accepted: "active" }, placementAfter: "active" } };
    expect(judged(accepted, "R-capacity-full-refused")).toEqual({ holds: false, observed: { accepted: "active", placementAfter: "active" } });
    // Not a step the rest needs: the body goes on, and the verdict is this check's fail.
    expect(judgeHistory(hist({ ...good(), toFull: accepted.toFull }), scenario, []).verdict).toBe("fail");
  });

  it("R-capacity-auto-dispatch: placed on a node with a free slot (or, with no other node, refused at capacity); a body that stopped there fails on it", () => {
    expect(judged(good(), "R-capacity-auto-dispatch")).toEqual({ holds: true, observed: { placedOn: "node-2" } });
    const notFree: Observed = { ...before(), auto: { others: ["node-2"], result: { placedOn: null } } };
    expect(judged(notFree, "R-capacity-auto-dispatch")).toEqual({ holds: false, observed: { placedOn: null } });
    const refused: Observed = { ...before(), auto: { others: ["node-2"], result: { code: "INVALID_REQUEST", message: "all paired session-host nodes are at capacity" } } };
    expect(judged(refused, "R-capacity-auto-dispatch")).toEqual({ holds: false, observed: { code: "INVALID_REQUEST", message: "all paired session-host nodes are at capacity" } });
    // One node only: every node is full, so a refusal is what is expected.
    const alone: Observed = { auto: { others: [], result: { code: "INVALID_REQUEST", message: "all paired session-host nodes are at capacity (1 node)" } } };
    expect(derived(alone).checks.find((c) => c.id === "R-capacity-auto-dispatch")).toEqual({
      id: "R-capacity-auto-dispatch",
      expectation: "automatic dispatch with every node's worker slots busy is refused (INVALID_REQUEST: all paired session-host nodes are at capacity)",
      holds: true,
      observed: { code: "INVALID_REQUEST", message: "all paired session-host nodes are at capacity (1 node)" },
    });
    expect(judged({ auto: { others: [], result: { placedOn: null } } }, "R-capacity-auto-dispatch")).toEqual({ holds: false, observed: { placedOn: null } });
    const { turnA: _turnA, ...upToAuto } = { ...before(), auto: notFree.auto };
    expect(stoppedAt(upToAuto, "R-capacity-auto-dispatch")).toMatchObject({ verdict: "fail", detail: "R-capacity-auto-dispatch: expectation not met and no finding is registered as R-capacity-auto-dispatch" });
  });

  it("R-capacity-turn-a: turn A proven on the full node; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-capacity-turn-a")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const notOnNode: Observed = { ...before(), turnA: turnA({ launches: [] }) };
    expect(judged(notOnNode, "R-capacity-turn-a")).toEqual({ holds: false, observed: { reply: "node-only marker", launches: 0 } });
    expect(judged({ turnA: turnA({ reply: null, launches: [] }) }, "R-capacity-turn-a")).toEqual({ holds: false, observed: { reply: "none", launches: 0 } });
    expect(stoppedAt(notOnNode, "R-capacity-turn-a")).toMatchObject({ verdict: "fail", detail: "R-capacity-turn-a: expectation not met and no finding is registered as R-capacity-turn-a" });
  });
});

describe("capacity: after turn B", () => {
  it("R-capacity-retry: B's next turn proven on the full node; not a step the rest needs", () => {
    expect(judged(good(), "R-capacity-retry")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const failedRetry = onNode({ reply: null, launches: [], error: "agent.wait timeout" });
    expect(judged({ retryB: failedRetry }, "R-capacity-retry")).toEqual({ holds: false, observed: { reply: "none", launches: 0, error: "agent.wait timeout" } });
    expect(judgeHistory(hist({ ...good(), retryB: failedRetry }), scenario, []).verdict).toBe("fail");
  });

  it("R-capacity-turn-c: C's turn proven on the node automatic dispatch chose; only judged when C was placed", () => {
    expect(judged(good(), "R-capacity-turn-c")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    expect(judged({ turnC: turnC({ reply: "fleetlab-ok: read returned: nothing" }) }, "R-capacity-turn-c")).toEqual({ holds: false, observed: { reply: "fleetlab-ok: read returned: nothing", launches: 1 } });
    // No node had a free slot (one node only): automatic dispatch was refused and there is no turn C, which is no problem.
    const { turnC: _turnC, ...noC } = { ...good(), auto: { others: [], result: { code: "INVALID_REQUEST", message: "all paired session-host nodes are at capacity" } } };
    expect(judged(noC, "R-capacity-turn-c")).toBeUndefined();
    expect(derived(noC).notes).toEqual([]);
  });
});

describe(`capacity: ${CAPACITY_TURN_FINDING}`, () => {
  it("holds when turn B is answered once the slot frees and proven on the node: no observed", () => {
    expect(derived({ ...good(), turnB: waited }).checks.filter((c) => c.id === CAPACITY_TURN_FINDING)).toEqual([{ id: CAPACITY_TURN_FINDING, expectation: EXPECTATION, holds: true }]);
  });

  it("does not hold when turn B failed while the slot was held and never ran: the registered signature, a known finding", () => {
    const signature = { chatSend: "started", agentWait: "error", error: ERROR, failedAfter: "10-20s", transcript: TRANSCRIPT, ranAfterSlotFreed: { within_s: 30, ran: false } };
    expect(derived({ turnB: failed }).checks).toEqual([{ id: CAPACITY_TURN_FINDING, expectation: EXPECTATION, holds: false, observed: signature }]);
    expect(signature).toEqual(scenario.findings!.find((f) => f.id === CAPACITY_TURN_FINDING)!.signature);
    const j = judgeHistory(hist({ ...good(), turnB: failed }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", `known-finding ${CAPACITY_TURN_FINDING}`]);
  });

  it("does not hold when turn B answered but no launch on the node proves it ran there: what the proof read is in the observed", () => {
    const r = derived({ turnB: { ...waited, waitedMs: 4_000, onNode: onNode({ launches: [] }) } }).checks.find((c) => c.id === CAPACITY_TURN_FINDING)!;
    expect(r.holds).toBe(false);
    expect(r.observed).toEqual({ chatSend: "started", agentWait: "timeout", failedAfter: "<10s", transcript: [], ranAfterSlotFreed: { within_s: 30, ran: true }, onNode: { reply: "node-only marker", launches: 0 } });
    expect(judgeHistory(hist({ ...good(), turnB: { ...waited, onNode: onNode({ launches: [] }) } }), scenario, []).verdict).toBe("fail");
  });

  it("a turn that failed otherwise (after 20 s, other words) differs from the registered signature: fail", () => {
    const r = derived({ turnB: { ...failed, waitedMs: 25_000, afterSlotFreed: { within_s: 30, modelRequests: 1, answered: false } } }).checks.find((c) => c.id === CAPACITY_TURN_FINDING)!;
    expect([r.holds, r.observed]).toEqual([false, { chatSend: "started", agentWait: "error", error: ERROR, failedAfter: ">=20s", transcript: TRANSCRIPT, ranAfterSlotFreed: { within_s: 30, ran: true } }]);
    expect(judgeHistory(hist({ ...good(), turnB: { ...failed, waitedMs: 25_000 } }), scenario, []).verdict).toBe("fail");
  });

  it("nothing observed of turn B once the body returned: the lab could not tell", () => {
    const { turnB: _turnB, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: `check ${CAPACITY_TURN_FINDING} had nothing to judge: the body returned without observing what it reads` });
  });
});
