// repro-50219's premise and check on hand-made histories (no Docker): each met / holding and
// not, with exactly what it observed. No finding is registered (not reproduced on 2026.9.6).
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { NodeView } from "../../lab/kits/nodes.ts";
import scenario, { type Observed } from "./repro-50219.ts";
import { approvedNodeView, historyOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-50219-upgrades-refused");
const reads = (o: Observed) => {
  const c = deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((x) => x.id === "R-50219-reconnects");
  return c && { holds: c.holds, observed: c.observed };
};

const T = 1_764_720_000_000;
type Refusals = NonNullable<Observed["refusals"]>;
const upgrade = (dt: number, status: number | null, rule?: string): Refusals["http"][number] => ({ t: T + dt, path: "/", status, ...(rule ? { rule } : {}) });
/** As 2026.9.6 did: five upgrades refused 502, spaced 1, 2, 4, 8, 16 s after the close (listed out of order), then a good upgrade after the heal. */
const refusals: Refusals = {
  held: true,
  ruleHits: 5,
  ruleId: "rule-7",
  firedAt: T,
  http: [upgrade(15_000, 502, "rule-7"), upgrade(1_000, 502, "rule-7"), upgrade(3_000, 502, "rule-7"), upgrade(7_000, 502, "rule-7"), upgrade(31_000, 502, "rule-7"), { t: T + 2_000, path: "/__openclaw__/health", status: 200 }, upgrade(61_000, 101)],
};
const view = (more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: { nodeId: "a1b2", connected: true }, nodeId: "a1b2", ...more });
const sameNodeSeen = { sameNodeId: true, approvalState: "approved", paired: true, connected: true, pendingDevicePairing: 0, pendingNodePairing: 0, deviceApproved: true, nodeApproved: true, sameBundleDir: true };

describe("P-50219-upgrades-refused", () => {
  it("met when the node's own upgrades were answered 502 REFUSALS times", () => {
    expect(premise({ refusals })).toEqual({ id: "P-50219-upgrades-refused", met: true, observed: { refusedUpgrades: 5, statuses: [502], ruleHits: 5, within_s: 75 } });
  });
  it("not met when the rule was aimed off (no upgrade refused), too few were, or one was not a 502", () => {
    expect(premise({ refusals: { ...refusals, held: false, ruleHits: 0, http: [upgrade(1_000, 101)] } })).toEqual({ id: "P-50219-upgrades-refused", met: false, observed: { refusedUpgrades: 0, statuses: [], ruleHits: 0, within_s: 75 } });
    expect(premise({ refusals: { ...refusals, http: refusals.http.slice(0, 3) } })).toEqual({ id: "P-50219-upgrades-refused", met: false, observed: { refusedUpgrades: 3, statuses: [502], ruleHits: 5, within_s: 75 } });
    expect(premise({ refusals: { ...refusals, http: [...refusals.http, upgrade(32_000, null, "rule-7")] } })).toEqual({ id: "P-50219-upgrades-refused", met: false, observed: { refusedUpgrades: 6, statuses: [502, null], ruleHits: 5, within_s: 75 } });
  });
  it("not observed: not judged (never proven)", () => {
    expect(premise({})).toBeUndefined();
  });
});

describe("R-50219-reconnects", () => {
  it("holds when the node came back on its own as the same node; the attempts' spacing from the close", () => {
    expect(reads({ refusals, reconnect: { held: true, connected: true, before: view(), after: view() } })).toEqual({
      holds: true,
      observed: { within_s: 45, refusedUpgrades: 5, attemptSpacing_s: [1, 2, 4, 8, 16], ...sameNodeSeen },
    });
  });
  it("does not hold when it stayed disconnected past the bound", () => {
    expect(reads({ refusals, reconnect: { held: false, connected: false, before: view(), after: view({ connected: false }) } })).toEqual({
      holds: false,
      observed: { within_s: 45, refusedUpgrades: 5, attemptSpacing_s: [1, 2, 4, 8, 16], ...sameNodeSeen, connected: false },
    });
  });
  it("does not hold when it came back as a node asking to be paired again", () => {
    expect(reads({ refusals, reconnect: { held: true, connected: true, before: view(), after: view({ pendingDevice: 1, approvalState: "pending" }) } })).toEqual({
      holds: false,
      observed: { within_s: 45, refusedUpgrades: 5, attemptSpacing_s: [1, 2, 4, 8, 16], ...sameNodeSeen, approvalState: "pending", pendingDevicePairing: 1 },
    });
  });
  it("not judged before the reconnect was observed", () => {
    expect(reads({ refusals })).toBeUndefined();
  });
});

describe("repro-50219 judged", () => {
  it("the node back as the same node with its premise met: pass", () => {
    expect(judgeHistory(hist({ refusals, reconnect: { held: true, connected: true, before: view(), after: view() } }), scenario, []).verdict).toBe("pass");
  });
  it("a node that never came back: fail (no finding registered)", () => {
    expect(judgeHistory(hist({ refusals, reconnect: { held: false, connected: false, before: view(), after: view({ connected: false }) } }), scenario, []).verdict).toBe("fail");
  });
});
