// pair-and-run's declared check and premise, judged on hand-made histories (no Docker): the
// runner inventory updates the node's tap saw, each with the gateway's answer.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, emptyHistory, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import scenario, { type Observed } from "./pair-and-run.ts";

const hist = (observations: Observed): ScenarioHistory => ({ ...emptyHistory("pair-and-run", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations });
const EXPECTATION = "the gateway accepts every runner inventory (node.runnerInventory.update) an approved node host publishes";
const HOST = { enabled: true, capacity: { total: 2, available: 2 }, bundleStatus: 1 };

describe("pair-and-run: F-runner-inventory-rejected", () => {
  it("holds when the gateway accepted every update (an unanswered one is not a rejection)", () => {
    const o: Observed = { inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 30 }] };
    expect(deriveChecks(scenario.checks!, o, true)).toEqual({ checks: [{ id: "F-runner-inventory-rejected", expectation: EXPECTATION, holds: true, observed: [] }], notes: [] });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("pass");
  });

  it("does not hold when one was rejected: its error codes and the worker host's keys, sorted", () => {
    const o: Observed = { inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 12, ok: false, errorCode: "INVALID_REQUEST", errorDetailsCode: "INVALID_PARAMS", workerHost: { portalStream: 1, enabled: true, capacity: {} } }, { seq: 14, ok: false }] };
    expect(deriveChecks(scenario.checks!, o, true).checks).toEqual([
      {
        id: "F-runner-inventory-rejected",
        expectation: EXPECTATION,
        holds: false,
        observed: [{ errorCode: "INVALID_REQUEST", errorDetailsCode: "INVALID_PARAMS", workerHostKeys: ["capacity", "enabled", "portalStream"] }, { workerHostKeys: [] }],
      },
    ]);
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("fail");
  });

  it("nothing observed once the body returned: the lab could not tell", () => {
    expect(judgeHistory(hist({}), scenario, [])).toMatchObject({ verdict: "unknown" });
    expect(deriveChecks(scenario.checks!, {}, true).notes).toEqual([{ verdict: "unknown", text: "check F-runner-inventory-rejected had nothing to judge: the body returned without observing what it reads" }]);
  });
});

describe("pair-and-run: P-pair-inventory-answered", () => {
  it("met when the node published at least one update and the gateway answered it", () => {
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 30 }] })).toEqual({ premises: [{ id: "P-pair-inventory-answered", met: true, observed: { published: 2, answered: 1 } }], notes: [] });
    // A rejection is an answer too.
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 10, ok: false, errorCode: "X" }] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: true, observed: { published: 1, answered: 1 } }]);
  });

  it("not met when none was published, or none answered: the verdict is unknown (the check could say nothing)", () => {
    expect(derivePremises(scenario.premises, { inventory: [] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: false, observed: { published: 0, answered: 0 } }]);
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 30 }] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: false, observed: { published: 1, answered: 0 } }]);
    const j = judgeHistory(hist({ inventory: [] }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", 'the lab could not tell: premise P-pair-inventory-answered not met (the node published at least one runner inventory (node.runnerInventory.update) during the turn and the gateway answered it, on the node\'s tap): observed {"published":0,"answered":0}']);
  });
});
