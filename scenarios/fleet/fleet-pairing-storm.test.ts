// fleet-pairing-storm's premise and checks over hand-made histories: no Docker, no gateway.
import { describe, expect, it } from "vitest";
import { asRecorded, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./fleet-pairing-storm.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf as premiseOfScenario } from "../../lab/testing/histories.ts";

const obs = (o: Observed): Observations => asRecorded(o) as Observations;
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, obs(o));
const checkOf = (id: string, o: Observed) => checkOfScenario(scenario, id, obs(o));
const premiseOf = (id: string, o: Observed) => premiseOfScenario(scenario, id, obs(o));

// 20 devices; the operator rejects every tenth (storm-10, storm-20) and approves 18.
const aliases = Array.from({ length: 20 }, (_, i) => `storm-${i + 1}`);
const rejected = ["storm-10", "storm-20"];
const approved = aliases.filter((a) => !rejected.includes(a));
const OPERATOR = "a".repeat(64);
const RATE_LIMITED = "connect after device approval refused: INVALID_REQUEST/AUTH_RATE_LIMITED: unauthorized: too many failed authentication attempts (retry later)";

/** A storm as a user enrolling a fleet expects it: every device asked, the approved ones paired, the rejected ones out. */
const good = (): Observed => ({
  fleet: { aliases, rejected },
  first: aliases.map((alias, i) => ({ alias, admitted: false as const, code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED", requestId: `req-${i + 1}` })),
  pendingAtOnce: [...aliases],
  pairing: aliases.map((alias) => (rejected.includes(alias) ? { alias, end: "refused" as const, why: "the operator rejected its device request" } : { alias, end: "paired" as const })),
  again: { "storm-10": "PAIRING_REQUIRED", "storm-20": "PAIRING_REQUIRED" },
  end: { pairedDevices: [OPERATOR, ...approved], pendingDevices: [], pairedNodes: [...approved] },
});

/** What 2026.9.6 does (runs 20261204-153840, 20261204-155237): the first 10 approved devices pair, the rest are locked out AUTH_RATE_LIMITED. */
const lockedOut = (): Observed => {
  const o = good();
  const paired = approved.slice(0, 10);
  o.pairing = aliases.map((alias) => (rejected.includes(alias) ? { alias, end: "refused" as const, why: "the operator rejected its device request" } : paired.includes(alias) ? { alias, end: "paired" as const } : { alias, end: "refused" as const, why: RATE_LIMITED }));
  o.end = { pairedDevices: [OPERATOR, ...approved], pendingDevices: [], pairedNodes: paired };
  return o;
};

describe("fleet-pairing-storm: P-storm-at-once", () => {
  it("met when device.pair.list listed a pending request of every device of the fleet at once", () => {
    expect(premiseOf("P-storm-at-once", good())).toEqual({ id: "P-storm-at-once", met: true, observed: { pendingAtOnce: 20, of: 20 } });
  });
  it("not met when fewer were pending at once (a queue, not a storm); other devices' requests do not count", () => {
    expect(premiseOf("P-storm-at-once", { ...good(), pendingAtOnce: [OPERATOR, ...aliases.slice(0, 12)] })).toEqual({ id: "P-storm-at-once", met: false, observed: { pendingAtOnce: 12, of: 20 } });
  });
  it("not judged before what it reads was observed", () => {
    expect(premiseOf("P-storm-at-once", { fleet: good().fleet })).toBeUndefined();
  });
});

describe("fleet-pairing-storm: F-storm-every-asked", () => {
  it("holds: every first connect refused PAIRING_REQUIRED with its own request id, every one pending; the expectation names N", () => {
    expect(checkOf("F-storm-every-asked", good())).toEqual({
      id: "F-storm-every-asked",
      expectation: "each of 20 devices connecting at once is refused PAIRING_REQUIRED with a request id of its own, and device.pair.list lists a pending request for every one",
      holds: true,
      observed: { refusals: { PAIRING_REQUIRED: 20 }, distinctIds: "all", listedPending: "all" },
    });
  });
  it("does not hold when requests were merged (one request id for two devices) or another refusal came", () => {
    const o = good();
    o.first![1] = { alias: "storm-2", admitted: false, code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED", requestId: "req-1" };
    o.first![2] = { alias: "storm-3", admitted: false, code: "UNAVAILABLE" };
    o.first![3] = { alias: "storm-4", admitted: true };
    expect(checkOf("F-storm-every-asked", o)).toMatchObject({ holds: false, observed: { refusals: { PAIRING_REQUIRED: 18, UNAVAILABLE: 1, admitted: 1 }, distinctIds: "fewer", listedPending: "all" } });
  });
  it("does not hold when device.pair.list lost some", () => {
    expect(checkOf("F-storm-every-asked", { ...good(), pendingAtOnce: aliases.slice(1) })).toMatchObject({ holds: false, observed: { refusals: { PAIRING_REQUIRED: 20 }, distinctIds: "all", listedPending: "fewer" } });
  });
});

describe("fleet-pairing-storm: F-storm-approved-paired", () => {
  it("holds when every approved device ended paired", () => {
    expect(checkOf("F-storm-approved-paired", good())).toMatchObject({ holds: true, observed: { paired: 18, notPaired: [] } });
  });
  it("does not hold when approved devices were locked out: the registered signature", () => {
    expect(checkOf("F-storm-approved-paired", lockedOut())).toMatchObject({ holds: false, observed: { paired: 10, notPaired: [RATE_LIMITED] } });
  });
  it("does not hold when no device was approved; a lost one reads its end", () => {
    const o = good();
    o.pairing = aliases.map((alias) => ({ alias, end: "lost" as const }));
    expect(checkOf("F-storm-approved-paired", o)).toMatchObject({ holds: false, observed: { paired: 0, notPaired: ["lost"] } });
    expect(checkOf("F-storm-approved-paired", { ...good(), fleet: { aliases, rejected: aliases } })).toMatchObject({ holds: false, observed: { paired: 0, notPaired: [] } });
  });
});

describe("fleet-pairing-storm: F-storm-rejected-stay-out", () => {
  it("holds when every rejected device is refused again and in neither paired list", () => {
    expect(checkOf("F-storm-rejected-stay-out", good())).toMatchObject({ holds: true, observed: { again: { PAIRING_REQUIRED: 2 }, inPairedLists: 0 } });
  });
  it("does not hold when a rejected device is admitted, or listed as paired", () => {
    expect(checkOf("F-storm-rejected-stay-out", { ...good(), again: { "storm-10": "admitted", "storm-20": "PAIRING_REQUIRED" } })).toMatchObject({ holds: false, observed: { again: { admitted: 1, PAIRING_REQUIRED: 1 }, inPairedLists: 0 } });
    const o = good();
    o.end!.pairedNodes.push("storm-20");
    expect(checkOf("F-storm-rejected-stay-out", o)).toMatchObject({ holds: false, observed: { again: { PAIRING_REQUIRED: 2 }, inPairedLists: 1 } });
  });
  it("not judged until the lists at the end were observed", () => {
    const { end: _, ...o } = good();
    expect(checkOf("F-storm-rejected-stay-out", o)).toBeUndefined();
  });
});

describe("fleet-pairing-storm: F-storm-none-half-paired", () => {
  it("holds when the fleet's paired devices are exactly the approved ones, each a paired node, none pending", () => {
    expect(checkOf("F-storm-none-half-paired", good())).toMatchObject({ holds: true, observed: { pairedDevicesExact: true, pairedAsNodesToo: 18, approvedStillPending: 0 } });
  });
  it("does not hold when approved devices are paired devices but not nodes: the registered signature", () => {
    expect(checkOf("F-storm-none-half-paired", lockedOut())).toMatchObject({ holds: false, observed: { pairedDevicesExact: true, pairedAsNodesToo: 10, approvedStillPending: 0 } });
  });
  it("does not hold when an approved device is still pending and missing from the paired list", () => {
    const o = good();
    o.end = { pairedDevices: approved.slice(1), pendingDevices: ["storm-1"], pairedNodes: approved.slice(1) };
    expect(checkOf("F-storm-none-half-paired", o)).toMatchObject({ holds: false, observed: { pairedDevicesExact: false, pairedAsNodesToo: 17, approvedStillPending: 1 } });
  });
});

describe("fleet-pairing-storm: the verdict", () => {
  it("a storm as expected: no shortfall; on 2026.9.6 its registered findings did not show (fixed?)", () => {
    const j = judgeHistory(hist(good()), scenario, []);
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      ["F-storm-every-asked", "pass"],
      ["F-storm-approved-paired", "fixed?"],
      ["F-storm-rejected-stay-out", "pass"],
      ["F-storm-none-half-paired", "fixed?"],
    ]);
    expect(j.verdict).toBe("fixed?");
  });
  it("2026.9.6's lockout reads its registered findings F-storm-approved-paired and F-storm-none-half-paired", () => {
    const j = judgeHistory(hist(lockedOut()), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding F-storm-approved-paired, known-finding F-storm-none-half-paired"]);
  });
  it("not all pending at once: unknown, the checks moot", () => {
    expect(judgeHistory(hist({ ...lockedOut(), pendingAtOnce: aliases.slice(0, 5) }), scenario, [])).toMatchObject({ verdict: "unknown" });
  });
});
