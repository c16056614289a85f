// repro-129929's checks and premises on hand-made histories (no Docker): each holds (is met) on one
// and not on another, with the exact signature.
import { describe, expect, it } from "vitest";
import { judgeHistory, type Observations } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-129929.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf as premiseOfScenario } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);
const premiseOf = (id: string, obs: Observations) => premiseOfScenario(scenario, id, obs);

const NODE_ID = "54b5a44f843a5853112165492720a49ad7db3e2a82bd1dec30d57f87c0b4a5ae";
const CAPACITY = `device worker is at capacity (all worker slots in use): ${NODE_ID}; stop an existing worker environment or retry when a slot is free`;
const NOT_CONNECTED = `device worker node is not connected: ${NODE_ID}; reconnect it before retrying`;
const OFFLINE = "The device runner is offline. Reconnect it, retry later, or bring the session back to this gateway.";

const marker = (nonce: string, environmentId: string) => ({ nonce, reply: `fleetlab-ok: read returned: ${nonce} written only on node-1`, environmentId });
const launch = (seq: number, environmentId: string) => ({ seq, t: 1796342932790 + seq, conn: "c2", launchId: `launch-${seq}`, environmentId });
const markB = marker("mark-b1", "env-b");
const markB2 = marker("mark-b2", "env-b2");

const full = { atDispatch: { connected: true, workerSlots: { total: 1, available: 0 } }, atTurnEnd: { connected: true, workerSlots: { total: 1, available: 0 } } };
const fullTurn = {
  chatSend: "started",
  status: "error",
  error: "device worker capacity remained full",
  ms: 12_400,
  modelRequests: 0,
  seen: { alias: "node-1", marker: markB, reply: null, launches: [launch(30, "env-b")] },
};
const offline = { atDispatch: { connected: false, workerSlots: null }, atWindowEnd: { connected: false, workerSlots: null } };
const offlineTurn = {
  chatSend: "started",
  modelRequestsWhileDown: 0,
  end: { status: "ok", text: markB2.reply },
  endedAt: 1796343000000,
  backAt: 1796342980000,
  seen: { alias: "node-1", marker: markB2, reply: markB2.reply, launches: [launch(80, "env-b2")] },
};
/** 2026.9.6 as run 20261202-031449 saw it: everything holds, both premises met. */
const good = {
  nodeId: NODE_ID,
  full,
  fullDispatch: { dispatch: { ok: false as const, code: "INVALID_REQUEST", message: CAPACITY }, placementAfter: null },
  fullTurn,
  offline,
  offlineDispatch: { dispatch: { ok: false as const, code: "INVALID_REQUEST", message: NOT_CONNECTED }, placementAfter: null },
  offlineTurn,
} satisfies Observed;

describe("repro-129929: dispatch to the full node", () => {
  const id = "R-129929-full-dispatch";
  it("holds: refused with the capacity error naming the node, nothing placed", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ code: "INVALID_REQUEST", message: CAPACITY.replace(NODE_ID, "<nodeId>"), placementAfter: null });
  });

  it("does not hold: accepted and placed on the node, or refused as offline", () => {
    const placed = checkOf(id, { ...good, fullDispatch: { dispatch: { ok: true as const, state: "active", deviceId: NODE_ID }, placementAfter: "active" } });
    expect(placed?.holds).toBe(false);
    expect(placed?.observed).toEqual({ accepted: "active", onNode: true, placementAfter: "active" });
    const offlineWord = checkOf(id, { ...good, fullDispatch: { dispatch: { ok: false as const, code: "INVALID_REQUEST", message: NOT_CONNECTED }, placementAfter: null } });
    expect(offlineWord?.holds).toBe(false);
    expect(offlineWord?.observed).toEqual({ code: "INVALID_REQUEST", message: "device worker node is not connected: <nodeId>; reconnect it before retrying", placementAfter: null });
  });
});

describe("repro-129929: a turn to the full node", () => {
  const id = "R-130445-full-turn";
  it("holds: ended with the capacity error, run nowhere", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ chatSend: "started", status: "error", error: "device worker capacity remained full", endedAfter: "10-20s", modelRequests: 0, reply: "none", launches: 1 });
  });

  it("holds: it ran on the node (the node-only marker read, launched there)", () => {
    const ran = { ...fullTurn, status: "ok", error: undefined, ms: 25_000, modelRequests: 1, seen: { ...fullTurn.seen, reply: markB.reply } };
    const c = checkOf(id, { ...good, fullTurn: ran });
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ chatSend: "started", status: "ok", error: null, endedAfter: ">=20s", modelRequests: 1, reply: "node-only marker", launches: 1 });
  });

  it("does not hold: the full node called offline (#130445)", () => {
    const c = checkOf(id, { ...good, fullTurn: { ...fullTurn, error: OFFLINE, ms: 3_000, seen: { ...fullTurn.seen, launches: [] } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ chatSend: "started", status: "error", error: OFFLINE, endedAfter: "<10s", modelRequests: 0, reply: "none", launches: 0 });
  });

  it("does not hold: it ran, but not on the node (a model request, no node-only marker); an error that is not text is kept as JSON", () => {
    const c = checkOf(id, { ...good, fullTurn: { ...fullTurn, status: "error", error: { code: "X" }, modelRequests: 1, seen: { ...fullTurn.seen, reply: "fleetlab-ok: read returned: nothing", launches: [] } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ chatSend: "started", status: "error", error: '{"code":"X"}', endedAfter: "10-20s", modelRequests: 1, reply: "fleetlab-ok: read returned: nothing", launches: 0 });
  });
});

describe("repro-129929: dispatch to the killed node", () => {
  const id = "R-129929-offline-dispatch";
  it("holds: refused with the not-connected error naming the node, nothing placed", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ code: "INVALID_REQUEST", message: "device worker node is not connected: <nodeId>; reconnect it before retrying", placementAfter: null });
  });

  it("does not hold: accepted, placed on the gateway instead", () => {
    const c = checkOf(id, { ...good, offlineDispatch: { dispatch: { ok: true as const, state: "local" }, placementAfter: "local" } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ accepted: "local", onNode: false, placementAfter: "local" });
  });
});

describe("repro-129929: a turn to the killed node", () => {
  const id = "R-129929-offline-turn";
  it("holds: ran nowhere while down, then on the node once it was back", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ chatSend: "started", modelRequestsWhileDown: 0, end: "ok", offlineError: null, ended: "after the node was back", reply: "node-only marker", launches: 1 });
  });

  it("holds: ended with the offline error before the node was back, having run nowhere", () => {
    const early = { ...offlineTurn, end: { status: "error", error: OFFLINE }, endedAt: 1796342970000, seen: { ...offlineTurn.seen, reply: null, launches: [] } };
    const c = checkOf(id, { ...good, offlineTurn: early });
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ chatSend: "started", modelRequestsWhileDown: 0, end: "error", offlineError: true, ended: "before the node was back", reply: "none", launches: 0 });
  });

  it("does not hold: the offline error after the node was back (the mislabel the fixes are about)", () => {
    const late = { ...offlineTurn, end: { status: "error", error: OFFLINE }, seen: { ...offlineTurn.seen, reply: null, launches: [] } };
    const c = checkOf(id, { ...good, offlineTurn: late });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ chatSend: "started", modelRequestsWhileDown: 0, end: "error", offlineError: true, ended: "after the node was back", reply: "none", launches: 0 });
  });

  it("does not hold: it ran while the node was down (on the gateway)", () => {
    const c = checkOf(id, { ...good, offlineTurn: { ...offlineTurn, modelRequestsWhileDown: 1, seen: { ...offlineTurn.seen, launches: [] } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ chatSend: "started", modelRequestsWhileDown: 1, end: "ok", offlineError: null, ended: "after the node was back", reply: "node-only marker", launches: 0 });
  });
});

describe("repro-129929: premises", () => {
  it("P-129929-full: met when connected with no free slot at both reads; unmet when a slot was free (aimed off)", () => {
    expect(premiseOf("P-129929-full", good)).toEqual({ id: "P-129929-full", met: true, observed: full });
    const free = { atDispatch: { connected: true, workerSlots: { total: 1, available: 1 } }, atTurnEnd: { connected: true, workerSlots: { total: 1, available: 1 } } };
    expect(premiseOf("P-129929-full", { ...good, full: free })).toEqual({ id: "P-129929-full", met: false, observed: free });
  });

  it("P-129929-offline: met when not connected at the dispatch and at the window's end; unmet when it stayed online (aimed off)", () => {
    expect(premiseOf("P-129929-offline", good)).toEqual({ id: "P-129929-offline", met: true, observed: { atDispatch: false, atWindowEnd: false } });
    const online = { atDispatch: { connected: true, workerSlots: { total: 1, available: 1 } }, atWindowEnd: { connected: true, workerSlots: { total: 1, available: 1 } } };
    expect(premiseOf("P-129929-offline", { ...good, offline: online })).toEqual({ id: "P-129929-offline", met: false, observed: { atDispatch: true, atWindowEnd: true } });
  });

  it("verdicts: all hold reads pass; a premise unmet reads unknown", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("pass");
    expect(judgeHistory(hist({ ...good, offline: { ...offline, atWindowEnd: { connected: true, workerSlots: null } } }), scenario, []).verdict).toBe("unknown");
  });
});
