// native-worker-slot's checks as pure functions of what its body observed, on hand-made histories (no Docker).
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { TurnSeen } from "../../lab/kits/proof.ts";
import scenario, { type Observed } from "./native-worker-slot.ts";
import { historyOf, premiseOf } from "../../lab/testing/histories.ts";

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
const MARKER_A = { nonce: "mark-9f8e7d6c", reply: "fleetlab-ok: read returned: mark-9f8e7d6c written only on node-1", environmentId: "env-a" };
const turnA: TurnSeen = { alias: "node-1", marker: MARKER_A, reply: MARKER_A.reply, launches: [{ seq: 20, t: 2000, conn: "c1", launchId: "l-a", environmentId: "env-a" }] };
const ACTIVE = { alias: "node-1", state: "active", deviceId: "id-1" };

/** What 2026.9.6 was seen to do (runs 20261130-143641-28a6, 20261130-144418-8f07): every check holds. */
const asExpected: Observed = {
  host: { slotsTotal: 1 },
  dispatches: [ACTIVE, ACTIVE, ACTIVE],
  a: { status: "ok", turn: turnA },
  deleted: {},
  receipt: { ownerEpoch: 2 },
  busy: { status: "error", error: "device worker capacity remained full for session agent:main:fleetlab-3fa2c1", modelRequests: 0 },
  afterDelete: {},
  reuse: { runId: "run-b", inUse: true, slots: { total: 1, available: 0 }, launches: [launchB] },
  staleCancel: { answer: { ok: true, payload: null, error: null }, bHeld: 1 },
  outsideCancel: { answer: outsideRefusal, commands: [{ seq: 60, command: "worker.status.v1" }], bHeld: 1 },
  b: { status: "ok", turn: turnB, slotFree: true },
};

describe("native-worker-slot: its checks over what the body observed", () => {
  it("declares its checks in the order the body made them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual([
      "P-slot-dispatched",
      "P-slot-busy-turn-fails",
      "P-slot-a-completes",
      "P-slot-delete-accepted",
      "P-slot-delete-drops-placement",
      "P-slot-reused",
      "P-slot-b-launched",
      "P-slot-stale-epoch-refused",
      "P-slot-outside-cancel-refused",
      "P-slot-b-completes",
    ]);
    expect(scenario.premises!.map((p) => p.id)).toEqual(["P-slot-capacity-one", "P-slot-stale-epoch-below"]);
  });

  it("P-slot-dispatched: A, Busy and B each placed active on the node; one that is not does not hold", () => {
    expect(judged(asExpected, "P-slot-dispatched")).toEqual({ holds: true, observed: [0, 1, 2].map(() => ({ alias: "node-1", state: "active" })) });
    expect(judged({ dispatches: [ACTIVE, { alias: "node-1", state: "failed" }] }, "P-slot-dispatched")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", state: "active" },
        { alias: "node-1", state: "failed" },
      ],
    });
  });

  it("P-slot-a-completes: A proven on the node with status ok; an error or a reply from elsewhere does not hold", () => {
    expect(judged(asExpected, "P-slot-a-completes")).toEqual({ holds: true, observed: { status: "ok", reply: "node-only marker", launches: 1 } });
    expect(judged({ a: { status: "timeout", turn: { ...turnA, reply: null } } }, "P-slot-a-completes")).toEqual({ holds: false, observed: { status: "timeout", reply: "none", launches: 1 } });
    expect(judged({ a: { status: "ok", turn: { ...turnA, launches: [] } } }, "P-slot-a-completes")).toEqual({ holds: false, observed: { status: "ok", reply: "node-only marker", launches: 0 } });
  });

  it("P-slot-delete-accepted: sessions.delete of A accepted; a refusal does not hold and is named without its ids", () => {
    expect(judged(asExpected, "P-slot-delete-accepted")).toEqual({ holds: true, observed: { delete: "accepted" } });
    const refused: Observed = { deleted: { refusal: { ok: false, code: "UNAVAILABLE", message: "session agent:main:fleetlab-3fa2c1 is busy" } } };
    expect(judged(refused, "P-slot-delete-accepted")).toEqual({ holds: false, observed: { delete: "UNAVAILABLE: session agent:main:fleetlab-<id> is busy" } });
  });

  it("P-slot-b-launched: B's last launch names its launchId; none, or one cut short, does not hold", () => {
    expect(judged(asExpected, "P-slot-b-launched")).toEqual({ holds: true, observed: { launches: 1, launchId: true } });
    expect(judged({ reuse: { runId: "run-b", inUse: true, slots: { total: 1, available: 0 }, launches: [] } }, "P-slot-b-launched")).toEqual({ holds: false, observed: { launches: 0, launchId: false } });
    const cutShort: Observed = { reuse: { runId: "run-b", inUse: true, slots: null, launches: [{ seq: 50, t: 5000, runId: "run-b" }] } };
    expect(judged(cutShort, "P-slot-b-launched")).toEqual({ holds: false, observed: { launches: 1, launchId: false } });
  });

  it("P-slot-capacity-one (premise): the node offers exactly one worker slot", () => {
    expect(premiseOf(scenario, "P-slot-capacity-one", asExpected)).toEqual({ id: "P-slot-capacity-one", met: true, observed: { slotsTotal: 1 } });
    expect(premiseOf(scenario, "P-slot-capacity-one", { host: { slotsTotal: 4 } })).toEqual({ id: "P-slot-capacity-one", met: false, observed: { slotsTotal: 4 } });
    expect(premiseOf(scenario, "P-slot-capacity-one", { host: { slotsTotal: null } })).toEqual({ id: "P-slot-capacity-one", met: false, observed: { slotsTotal: null } });
  });

  it("P-slot-stale-epoch-below (premise): B's receipt names an owner epoch of at least 1", () => {
    expect(premiseOf(scenario, "P-slot-stale-epoch-below", asExpected)).toEqual({ id: "P-slot-stale-epoch-below", met: true, observed: { ownerEpoch: "at least 1" } });
    expect(premiseOf(scenario, "P-slot-stale-epoch-below", { receipt: { ownerEpoch: 0 } })).toEqual({ id: "P-slot-stale-epoch-below", met: false, observed: { ownerEpoch: 0 } });
    expect(premiseOf(scenario, "P-slot-stale-epoch-below", { receipt: { ownerEpoch: null } })).toEqual({ id: "P-slot-stale-epoch-below", met: false, observed: { ownerEpoch: null } });
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
    expect(j.checks.map((c) => c.outcome)).toEqual(Array(10).fill("pass"));
    expect(j.premises.map((p) => [p.id, p.met])).toEqual([
      ["P-slot-capacity-one", true],
      ["P-slot-stale-epoch-below", true],
    ]);
  });

  it("one that does not hold fails (no finding is registered); one with nothing to read is unknown", () => {
    expect(judgeHistory(hist({ ...asExpected, b: { status: "ok", turn: turnB, slotFree: false } }), scenario, []).verdict).toBe("fail");
    const j = judgeHistory(hist({ ...asExpected, b: undefined }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", "check P-slot-b-completes had nothing to judge: the body returned without observing what it reads"]);
  });

  it("a body that stopped at a step: the step's check fails; nothing after it is judged", () => {
    const fail = (o: Observed, id: string) => judgeHistory({ ...hist(o), stopped: id }, scenario, []);
    const stopDispatch = fail({ host: asExpected.host, dispatches: [ACTIVE, { alias: "node-1", state: "local" }] }, "P-slot-dispatched");
    expect([stopDispatch.verdict, stopDispatch.detail]).toEqual(["fail", "P-slot-dispatched: expectation not met and no finding is registered as P-slot-dispatched"]);
    const upToA: Observed = { host: asExpected.host, dispatches: [ACTIVE, ACTIVE], busy: asExpected.busy };
    const stopA = fail({ ...upToA, a: { status: "error", turn: { ...turnA, reply: null } } }, "P-slot-a-completes");
    expect([stopA.verdict, stopA.detail]).toEqual(["fail", "P-slot-a-completes: expectation not met and no finding is registered as P-slot-a-completes"]);
    expect(stopA.derived.map((c) => c.id)).toEqual(["P-slot-dispatched", "P-slot-busy-turn-fails", "P-slot-a-completes"]);
    const stopDelete = fail({ ...upToA, a: asExpected.a, deleted: { refusal: { ok: false, code: "UNAVAILABLE", message: "busy" } } }, "P-slot-delete-accepted");
    expect([stopDelete.verdict, stopDelete.detail]).toEqual(["fail", "P-slot-delete-accepted: expectation not met and no finding is registered as P-slot-delete-accepted"]);
    const upToB: Observed = { ...upToA, a: asExpected.a, deleted: {}, afterDelete: {}, dispatches: [ACTIVE, ACTIVE, ACTIVE] };
    const stopB = fail({ ...upToB, dispatches: [ACTIVE, ACTIVE, { alias: "node-1", state: "failed" }] }, "P-slot-dispatched");
    expect([stopB.verdict, stopB.detail]).toEqual(["fail", "P-slot-dispatched: expectation not met and no finding is registered as P-slot-dispatched"]);
    const stopLaunch = fail({ ...upToB, reuse: { runId: "run-b", inUse: true, slots: { total: 1, available: 0 }, launches: [] } }, "P-slot-b-launched");
    expect(stopLaunch.verdict).toBe("fail");
    expect(stopLaunch.detail).toContain("P-slot-b-launched: expectation not met and no finding is registered as P-slot-b-launched");
  });

  it("a body that stopped at a premise: unknown, the lab could not tell", () => {
    const one = judgeHistory({ ...hist({ host: { slotsTotal: 2 } }), stopped: "P-slot-capacity-one" }, scenario, []);
    expect([one.verdict, one.detail]).toEqual(["unknown", 'the lab could not tell: premise P-slot-capacity-one not met (the lab\'s node host (nodeHost capacity 1) offers exactly one worker slot in node.list before the first dispatch): observed {"slotsTotal":2}']);
    const { staleCancel: _s, outsideCancel: _o, b: _b, ...upToReceipt } = asExpected;
    const epoch = judgeHistory({ ...hist({ ...upToReceipt, receipt: { ownerEpoch: 0 } }), stopped: "P-slot-stale-epoch-below" }, scenario, []);
    expect([epoch.verdict, epoch.detail]).toEqual(["unknown", 'the lab could not tell: premise P-slot-stale-epoch-below not met (B\'s launch receipt from the node names an owner epoch of at least 1, so a stale epoch (ownerEpoch - 1) exists to cancel with): observed {"ownerEpoch":0}']);
  });
});
