// native-worker-slot's checks as pure functions of what its body observed, on hand-made histories (no Docker).
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { TurnSeen } from "../../lab/kits/proof.ts";
import scenario, { type Observed } from "./native-worker-slot.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const derived = (observations: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, observations as Observations, true).checks.map((c) => [c.id, c]));
/** One declared check over `observations`: holds and the exact observed (undefined: nothing to read). */
const judged = (observations: Observed, id: string) => {
  const c = derived(observations)[id];
  return c && { holds: c.holds, observed: c.observed };
};

const launchB = { seq: 50, t: 5000, launchId: "l-b", runId: "run-b", environmentId: "env-b", sessionId: "s-b", ownerEpoch: 2, placementGeneration: 1 };
const MARKER = { nonce: "mark-0a1b2c3d", reply: "fleetlab-ok: read returned: mark-0a1b2c3d written only on node-1", environmentId: "env-b" };
const turnB: TurnSeen = { alias: "node-1", marker: MARKER, reply: MARKER.reply, launches: [{ seq: 50, t: 5000, conn: "c1", launchId: "l-b", environmentId: "env-b" }] };
const outsideRefusal = { ok: false as const, code: "INVALID_REQUEST", message: "node.invoke does not allow private node controls" };

/** What 2026.9.6 was seen to do (runs 20261130-143641-28a6, 20261130-144418-8f07): every check holds. */
const asExpected: Observed = {
  busy: { status: "error", error: "device worker capacity remained full for session agent:main:fleetlab-3fa2c1", modelRequests: 0 },
  afterDelete: {},
  reuse: { runId: "run-b", inUse: true, slots: { total: 1, available: 0 }, launches: [launchB] },
  staleCancel: { answer: { ok: true, payload: null, error: null }, bHeld: 1 },
  outsideCancel: { answer: outsideRefusal, commands: [{ seq: 60, command: "worker.status.v1" }], bHeld: 1 },
  b: { status: "ok", turn: turnB, slotFree: true },
};

describe("native-worker-slot: its checks over what the body observed", () => {
  it("declares its checks in the order the body made them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual(["P-slot-busy-turn-fails", "P-slot-delete-drops-placement", "P-slot-reused", "P-slot-stale-epoch-refused", "P-slot-outside-cancel-refused", "P-slot-b-completes"]);
  });

  it("P-slot-busy-turn-fails: error naming capacity, never at the model", () => {
    expect(derived(asExpected)["P-slot-busy-turn-fails"]).toEqual({
      id: "P-slot-busy-turn-fails",
      expectation: "a turn to a second session on a one-slot node whose slot is held ends with status error naming capacity, and never reaches the model (qa-lab)",
      holds: true,
      observed: { within_s: 30, status: "error", error: "device worker capacity remained full for session agent:main:fleetlab-<id>", modelRequests: 0 },
    });
    expect(judged({ busy: { status: "ok", error: "null", modelRequests: 1 } }, "P-slot-busy-turn-fails")).toEqual({ holds: false, observed: { within_s: 30, status: "ok", error: "null", modelRequests: 1 } });
    expect(judged({ busy: { status: "error", error: "capacity full", modelRequests: 1 } }, "P-slot-busy-turn-fails")).toEqual({ holds: false, observed: { within_s: 30, status: "error", error: "capacity full", modelRequests: 1 } });
    // The error kept in what is observed is cut at 300 characters; the whole of it is searched.
    const long = `${"x".repeat(400)} capacity`;
    expect(judged({ busy: { status: "error", error: long, modelRequests: 0 } }, "P-slot-busy-turn-fails")).toEqual({ holds: true, observed: { within_s: 30, status: "error", error: "x".repeat(300), modelRequests: 0 } });
  });

  it("P-slot-delete-drops-placement: no placement after the deletion", () => {
    expect(judged(asExpected, "P-slot-delete-drops-placement")).toEqual({ holds: true, observed: { describe: "found", placement: null } });
    expect(judged({ afterDelete: { refusal: { ok: false, code: "NOT_FOUND", message: "no session fleetlab-3fa2c1" } } }, "P-slot-delete-drops-placement")).toEqual({
      holds: true,
      observed: { describe: "NOT_FOUND: no session fleetlab-<id>", placement: null },
    });
    expect(judged({ afterDelete: { placement: { state: "active", environmentId: "env-a" } } }, "P-slot-delete-drops-placement")).toEqual({ holds: false, observed: { describe: "found", placement: { state: "active", environmentId: "env-a" } } });
    // A placement that is there as null is still one the describe shows (as before: only its absence holds).
    expect(judged({ afterDelete: { placement: null } }, "P-slot-delete-drops-placement")).toEqual({ holds: false, observed: { describe: "found", placement: null } });
  });

  it("P-slot-reused: B's launch on the node's tap and the one slot in use", () => {
    expect(judged(asExpected, "P-slot-reused")).toEqual({ holds: true, observed: { slots: { total: 1, available: 0 }, launches: 1 } });
    const notInUse: Observed = { reuse: { runId: "run-b", inUse: false, slots: { total: 1, available: 1 }, launches: [launchB] } };
    expect(judged(notInUse, "P-slot-reused")).toEqual({ holds: false, observed: { slots: { total: 1, available: 1 }, launches: 1 } });
    // Launches since the deletion that carry another run do not count.
    const otherRun: Observed = { reuse: { runId: "run-b", inUse: true, slots: null, launches: [{ ...launchB, runId: "run-x" }, { seq: 51, t: 5001 }] } };
    expect(judged(otherRun, "P-slot-reused")).toEqual({ holds: false, observed: { slots: null, launches: 0 } });
  });

  it("P-slot-stale-epoch-refused: the node answers with no cancellation and B stays held", () => {
    expect(judged(asExpected, "P-slot-stale-epoch-refused")).toEqual({ holds: true, observed: { answered: true, ok: true, payload: null, error: null, bStillHeld: true } });
    const byError: Observed = { staleCancel: { answer: { ok: false, payload: null, error: { code: "STALE_EPOCH", message: "owner epoch 1 < 2" } }, bHeld: 1 } };
    expect(judged(byError, "P-slot-stale-epoch-refused")).toEqual({ holds: true, observed: { answered: true, ok: false, payload: null, error: "STALE_EPOCH", bStillHeld: true } });
    const cancelled: Observed = { staleCancel: { answer: { ok: true, payload: { state: "cancelled", launchId: "l-b" }, error: null }, bHeld: 0 } };
    expect(judged(cancelled, "P-slot-stale-epoch-refused")).toEqual({ holds: false, observed: { answered: true, ok: true, payload: "cancelled", error: null, bStillHeld: false } });
    expect(judged({ staleCancel: { answer: null, bHeld: 1 } }, "P-slot-stale-epoch-refused")).toEqual({ holds: false, observed: { answered: false, ok: null, payload: null, error: null, bStillHeld: true } });
    // An answer the frame cut short (ok unknown) with a receipt that names no state.
    expect(judged({ staleCancel: { answer: { payload: { launchId: "l-b" }, error: null }, bHeld: 1 } }, "P-slot-stale-epoch-refused")).toEqual({
      holds: false,
      observed: { answered: true, ok: null, payload: "no state", error: null, bStillHeld: true },
    });
  });

  it("P-slot-outside-cancel-refused: refused at the gateway, never on the node's wire, B goes on", () => {
    expect(judged(asExpected, "P-slot-outside-cancel-refused")).toEqual({ holds: true, observed: { answer: "INVALID_REQUEST: node.invoke does not allow private node controls", cancelsOnWire: 0, bStillHeld: true } });
    const accepted: Observed = { outsideCancel: { answer: { ok: true, payload: { state: "cancelled" } }, commands: [{ seq: 61, command: "worker.cancel.v1" }], bHeld: 0 } };
    expect(judged(accepted, "P-slot-outside-cancel-refused")).toEqual({ holds: false, observed: { answer: "accepted", cancelsOnWire: 1, bStillHeld: false } });
    const reached: Observed = { outsideCancel: { answer: outsideRefusal, commands: [{ seq: 61, command: "worker.cancel.v1" }], bHeld: 1 } };
    expect(judged(reached, "P-slot-outside-cancel-refused")).toEqual({ holds: false, observed: { answer: "INVALID_REQUEST: node.invoke does not allow private node controls", cancelsOnWire: 1, bStillHeld: true } });
  });

  it("P-slot-b-completes: B proven on the node, the slot free afterwards", () => {
    expect(judged(asExpected, "P-slot-b-completes")).toEqual({ holds: true, observed: { status: "ok", reply: "node-only marker", launches: 1, slotFree: true } });
    expect(judged({ b: { status: "ok", turn: turnB, slotFree: false } }, "P-slot-b-completes")).toEqual({ holds: false, observed: { status: "ok", reply: "node-only marker", launches: 1, slotFree: false } });
    const onGateway: TurnSeen = { ...turnB, reply: "fleetlab-ok: read returned: nothing", launches: [] };
    expect(judged({ b: { status: "ok", turn: onGateway, slotFree: true } }, "P-slot-b-completes")).toEqual({ holds: false, observed: { status: "ok", reply: "fleetlab-ok: read returned: nothing", launches: 0, slotFree: true } });
    expect(judged({ b: { status: "error", turn: { ...turnB, reply: null }, slotFree: true } }, "P-slot-b-completes")).toEqual({ holds: false, observed: { status: "error", reply: "none", launches: 1, slotFree: true } });
  });
});

describe("native-worker-slot: verdicts from whole histories", () => {
  it("every check holds: pass", () => {
    const j = judgeHistory(hist(asExpected), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["pass", undefined]);
    expect(j.checks.map((c) => c.outcome)).toEqual(["pass", "pass", "pass", "pass", "pass", "pass"]);
  });

  it("one that does not hold fails (no finding is registered); one with nothing to read is unknown", () => {
    expect(judgeHistory(hist({ ...asExpected, b: { status: "ok", turn: turnB, slotFree: false } }), scenario, []).verdict).toBe("fail");
    const j = judgeHistory(hist({ ...asExpected, b: undefined }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", "check P-slot-b-completes had nothing to judge: the body returned without observing what it reads"]);
  });
});
