// fleet-restart's premises and checks over hand-made histories: no Docker, no gateway.
import { describe, expect, it } from "vitest";
import { asRecorded, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./fleet-restart.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf as premiseOfScenario } from "../../lab/testing/histories.ts";

const obs = (o: Observed): Observations => asRecorded(o) as Observations;
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, obs(o));
const checkOf = (id: string, o: Observed) => checkOfScenario(scenario, id, obs(o));
const premiseOf = (id: string, o: Observed) => premiseOfScenario(scenario, id, obs(o));

const aliases = Array.from({ length: 10 }, (_, i) => `fleet-${i + 1}`);

/** A restart as a user with a fleet expects it: all connected before, all dropped, all back in time as paired devices, both node hosts back. */
const good = (): Observed => ({
  fleet: { scripted: 10, real: ["node-1", "node-2"] },
  before: { fleetListed: 10, fleetOk: 10, realOk: 2, openConnections: 10 },
  dropped: { stillOpen: 0 },
  returns: aliases.map((alias, i) => ({ alias, backAfterReadyMs: 1_000 + i * 100, refusedWith: i % 2 ? ["HTTP 503 (upgrade turned away)"] : [] })),
  after: { fleetListed: 10, fleetOk: 10, realOk: 2, pendingFleetDevices: 0, pendingFleetNodes: 0, notPairedDevice: 0, notPairedNode: 0 },
  realBack: [
    { node: "node-1", connected: true, approvalState: "approved" },
    { node: "node-2", connected: true, approvalState: "approved" },
  ],
});

describe("fleet-restart: P-fleet-connected", () => {
  it("met when node.list showed the whole fleet and both node hosts connected and approved, each scripted node holding its connection", () => {
    expect(premiseOf("P-fleet-connected", good())).toEqual({ id: "P-fleet-connected", met: true, observed: { fleetConnectedApproved: "all", realConnectedApproved: 2, openConnections: "all" } });
  });
  it("not met when a node host was missing, or a scripted node held no connection", () => {
    expect(premiseOf("P-fleet-connected", { ...good(), before: { fleetListed: 10, fleetOk: 10, realOk: 1, openConnections: 10 } })).toEqual({ id: "P-fleet-connected", met: false, observed: { fleetConnectedApproved: "all", realConnectedApproved: 1, openConnections: "all" } });
    expect(premiseOf("P-fleet-connected", { ...good(), before: { fleetListed: 10, fleetOk: 9, realOk: 2, openConnections: 9 } })).toEqual({ id: "P-fleet-connected", met: false, observed: { fleetConnectedApproved: "fewer", realConnectedApproved: 2, openConnections: "fewer" } });
  });
});

describe("fleet-restart: P-restart-fleet-dropped", () => {
  it("met when no scripted node held a connection after the restart", () => {
    expect(premiseOf("P-restart-fleet-dropped", good())).toEqual({ id: "P-restart-fleet-dropped", met: true, observed: { stillOpen: "none" } });
  });
  it("not met when some still held one", () => {
    expect(premiseOf("P-restart-fleet-dropped", { ...good(), dropped: { stillOpen: 3 } })).toEqual({ id: "P-restart-fleet-dropped", met: false, observed: { stillOpen: "some" } });
  });
});

describe("fleet-restart: F-restart-fleet-back", () => {
  it("holds when every node is back within 60 s with no pairing refusal (503s on the way are no shortfall)", () => {
    expect(checkOf("F-restart-fleet-back", good())).toEqual({
      id: "F-restart-fleet-back",
      expectation: "every scripted node is admitted again within 60 s of the restarted gateway answering, as a paired device (no PAIRING_REQUIRED or NOT_PAIRED refusal on the way)",
      holds: true,
      observed: { leftOut: "none", pairingRefusals: [], within_s: 60, allBackWithin: true },
    });
  });
  it("does not hold when one is left out, or the last came back after 60 s", () => {
    const o = good();
    o.returns![3] = { alias: "fleet-4", backAfterReadyMs: null, refusedWith: ["CONNECTION_CLOSED (code 1000, connect unanswered)"] };
    expect(checkOf("F-restart-fleet-back", o)).toMatchObject({ holds: false, observed: { leftOut: "some", pairingRefusals: [], within_s: 60, allBackWithin: false } });
    const late = good();
    late.returns![9]!.backAfterReadyMs = 60_001;
    expect(checkOf("F-restart-fleet-back", late)).toMatchObject({ holds: false, observed: { leftOut: "none", pairingRefusals: [], allBackWithin: false } });
  });
  it("does not hold when the gateway forgot a pairing on the way (each such refusal named once, sorted)", () => {
    const o = good();
    o.returns![0]!.refusedWith = ["PAIRING_REQUIRED", "NOT_PAIRED"];
    o.returns![1]!.refusedWith = ["PAIRING_REQUIRED"];
    expect(checkOf("F-restart-fleet-back", o)).toMatchObject({ holds: false, observed: { leftOut: "none", pairingRefusals: ["NOT_PAIRED", "PAIRING_REQUIRED"], within_s: 60, allBackWithin: true } });
  });
});

describe("fleet-restart: F-restart-no-lockout", () => {
  it("holds when no node was refused AUTH_RATE_LIMITED", () => {
    expect(checkOf("F-restart-no-lockout", good())).toMatchObject({ holds: true, observed: { rateLimited: "none" } });
  });
  it("does not hold when one was", () => {
    const o = good();
    o.returns![5]!.refusedWith = ["HTTP 503 (upgrade turned away)", "AUTH_RATE_LIMITED"];
    expect(checkOf("F-restart-no-lockout", o)).toEqual({ id: "F-restart-no-lockout", expectation: "no scripted node is refused AUTH_RATE_LIMITED while the fleet returns", holds: false, observed: { rateLimited: "some" } });
  });
});

describe("fleet-restart: F-restart-none-half-paired", () => {
  it("holds when all are listed connected and approved and paired, none pending", () => {
    expect(checkOf("F-restart-none-half-paired", good())).toMatchObject({
      holds: true,
      observed: { fleetConnectedApproved: "all", realConnectedApproved: 2, pendingFleetDevices: "none", notInPairedDevices: "none", notInPairedNodes: "none" },
    });
  });
  it("does not hold when a fleet device is pending again or missing from node.pair.list's paired list", () => {
    const o = good();
    o.after = { fleetListed: 10, fleetOk: 9, realOk: 2, pendingFleetDevices: 1, pendingFleetNodes: 1, notPairedDevice: 0, notPairedNode: 1 };
    expect(checkOf("F-restart-none-half-paired", o)).toMatchObject({
      holds: false,
      observed: { fleetConnectedApproved: "fewer", realConnectedApproved: 2, pendingFleetDevices: "some", notInPairedDevices: "none", notInPairedNodes: "some" },
    });
  });
});

describe("fleet-restart: F-restart-real-nodes-back", () => {
  it("holds when both node hosts are connected and approved again", () => {
    expect(checkOf("F-restart-real-nodes-back", good())).toMatchObject({ holds: true, observed: { within_s: 90, notBack: [] } });
  });
  it("does not hold when one is not back: it is named as last read", () => {
    const o = good();
    o.realBack![1] = { node: "node-2", connected: false, approvalState: "approved" };
    expect(checkOf("F-restart-real-nodes-back", o)).toMatchObject({ holds: false, observed: { within_s: 90, notBack: [{ node: "node-2", connected: false, approvalState: "approved" }] } });
    o.realBack![0] = { node: "node-1", connected: null, approvalState: null };
    expect(checkOf("F-restart-real-nodes-back", o)?.observed).toEqual({ within_s: 90, notBack: [{ node: "node-1", connected: null, approvalState: null }, { node: "node-2", connected: false, approvalState: "approved" }] });
  });
});

describe("fleet-restart: the verdict", () => {
  it("a restart as expected passes", () => {
    expect(judgeHistory(hist(good()), scenario, [])).toMatchObject({ verdict: "pass" });
  });
  it("a fleet locked out fails (no finding is registered)", () => {
    const o = good();
    o.returns![5]!.refusedWith = ["AUTH_RATE_LIMITED"];
    expect(judgeHistory(hist(o), scenario, [])).toMatchObject({ verdict: "fail", detail: "F-restart-no-lockout: expectation not met and no finding is registered as F-restart-no-lockout" });
  });
  it("the body stopped at an unmet premise: unknown for that premise alone (the checks were not reached, which is no problem)", () => {
    const { fleet, before } = good();
    const j = judgeHistory(hist({ fleet, before: { ...before!, fleetOk: 3 } }), scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.checks).toEqual([]);
    expect(j.detail).toBe(
      'the lab could not tell: premise P-fleet-connected not met (before the restart node.list showed all N scripted nodes and both node hosts connected and approved): observed {"fleetConnectedApproved":"fewer","realConnectedApproved":2,"openConnections":"all"}; premise P-restart-fleet-dropped was never proven (the restart closed every scripted node\'s connection)',
    );
  });
});
