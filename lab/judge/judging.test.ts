import { describe, expect, it } from "vitest";
import type { CheckResult, FindingRecord } from "../findings/findings.ts";
import { judgeScenario, type Observed } from "./judging.ts";

const seen = (o: Partial<Observed>): Observed => ({ problems: [], checks: [], afterwards: [], findings: [], bodyReturned: true, ...o });
const check = (findingId: string, outcome: CheckResult["outcome"], more: Partial<CheckResult> = {}): CheckResult => ({ findingId, scenario: "s", expectation: "e", outcome, kind: "shortfall", ...more });
const record = (id: string): FindingRecord => ({ id, expectation: "e", signature: 1, versions: ["2026.9.6"], kind: "shortfall", evidence: "x" });

describe("judgeScenario: one call from what a scenario observed to its verdict", () => {
  it("nothing wrong and every check held: pass, no detail", () => {
    expect(judgeScenario(seen({ checks: [check("E-ok", "pass")] }))).toEqual({ verdict: "pass", detail: undefined, unexercised: [], failedSteps: [] });
  });

  it("a scenario that never ran has the verdict it ended with, and nothing else counts", () => {
    expect(judgeScenario(seen({ notRun: { verdict: "n/a", why: "no --session-host" }, problems: [{ verdict: "fail", text: "x" }] }))).toEqual({ verdict: "n/a", detail: "no --session-host", unexercised: [], failedSteps: [] });
  });

  it("the checks: a shortfall no finding describes fails with its note; known findings and fixed? are named; a lab-wide known finding leaves the verdict alone", () => {
    expect(judgeScenario(seen({ checks: [check("E-x", "fail", { note: "expectation not met" }), check("F-a", "known-finding")] }))).toMatchObject({ verdict: "fail", detail: "E-x: expectation not met" });
    expect(judgeScenario(seen({ checks: [check("F-a", "known-finding"), check("F-b", "fixed?")] }))).toMatchObject({ verdict: "known-finding", detail: "known-finding F-a, fixed? F-b" });
    expect(judgeScenario(seen({ checks: [check("E-drift", "known-finding", { scope: "lab" })] }))).toMatchObject({ verdict: "pass", detail: undefined });
  });

  it("the worst wins and nothing is dropped: a fail before an unknown leads, the other is appended", () => {
    const j = judgeScenario(seen({ problems: [{ verdict: "unknown", text: "the model container died" }], checks: [check("E-x", "fail", { note: "n" })] }));
    expect([j.verdict, j.detail]).toEqual(["fail", "E-x: n; also the model container died"]);
  });

  it("what is found afterwards (leftovers, an unhealthy lab) sets the verdict only of a scenario accepted by then, its checks included", () => {
    const leftovers = { verdict: "fail" as const, text: "teardown left resources behind: x", after: true };
    expect(judgeScenario(seen({ afterwards: [leftovers] }))).toMatchObject({ verdict: "fail", detail: "teardown left resources behind: x", failedSteps: ["teardown left resources behind: x"] });
    // A check's fail is not a failed step (a repro's "nothing else failed" tells them apart).
    expect(judgeScenario(seen({ checks: [check("E-x", "fail", { note: "n" })] })).failedSteps).toEqual([]);
    expect(judgeScenario(seen({ checks: [check("F-a", "known-finding")], afterwards: [leftovers] }))).toMatchObject({ verdict: "fail", detail: "teardown left resources behind: x; also known-finding F-a" });
    const unknownFirst = judgeScenario(seen({ problems: [{ verdict: "unknown", text: "evidence check broken" }], afterwards: [leftovers] }));
    expect([unknownFirst.verdict, unknownFirst.detail]).toEqual(["unknown", "evidence check broken; also teardown left resources behind: x"]);
  });

  it("an undo that failed counts before the checks (after a pass: unknown), and an error that escaped afterwards counts at once", () => {
    const undo = { verdict: "unknown" as const, text: "could not undo: heal partition", after: true };
    expect(judgeScenario(seen({ problems: [undo], checks: [check("F-a", "known-finding")] }))).toMatchObject({ verdict: "unknown", detail: "could not undo: heal partition; also known-finding F-a" });
    const escaped = judgeScenario(seen({ checks: [check("F-a", "known-finding")], afterwards: [{ verdict: "fail", text: "an error escaped" }, { verdict: "unknown", text: "could not take the lab down", after: true }] }));
    expect([escaped.verdict, escaped.detail]).toEqual(["fail", "an error escaped; also known-finding F-a; also could not take the lab down"]);
  });

  it("records no check judged are unexercised only when the body ran to its end", () => {
    const findings = [record("F-checked"), record("F-forgotten")];
    const checks = [check("F-checked", "known-finding")];
    expect(judgeScenario(seen({ findings, checks })).unexercised.map((f) => f.id)).toEqual(["F-forgotten"]);
    expect(judgeScenario(seen({ findings, checks, bodyReturned: false })).unexercised).toEqual([]);
  });

  it("premises: one not met makes the scenario's checks moot (unknown over pass, fixed?, known findings and a fail, with what was seen); a lab-wide fail still leads", () => {
    const served = { id: "P-502-served", what: "the tap answered the node's upgrades 502" };
    const missed = { ...served, met: false, observed: { refused: 0 } };
    const j = judgeScenario(seen({ declared: [served], premises: [missed], checks: [check("F-a", "fixed?")] }));
    expect([j.verdict, j.detail]).toEqual(["unknown", 'the lab could not tell: premise P-502-served not met (the tap answered the node\'s upgrades 502): observed {"refused":0}; also moot (premise not met): fixed? F-a']);
    // The scenario's own check fell short because the fault missed (repro-68187 under --aim-off): moot, unknown.
    const own = judgeScenario(seen({ declared: [served], premises: [missed], checks: [check("R-recovers", "fail", { note: "n" })] }));
    expect([own.verdict, own.detail]).toEqual(["unknown", 'the lab could not tell: premise P-502-served not met (the tap answered the node\'s upgrades 502): observed {"refused":0}; also moot (premise not met): fail R-recovers']);
    // An evidence check (at-most-once, the protocol schema: no scope, as the runner records it) or
    // a lab-wide record does not rest on the premise: its fail leads.
    expect(judgeScenario(seen({ declared: [served], premises: [missed], checks: [check("E-tool-effect-at-most-once", "fail", { note: "n", source: "evidence" })] })).verdict).toBe("fail");
    expect(judgeScenario(seen({ declared: [served], premises: [missed], checks: [check("F-protocol-drift x", "fail", { note: "n", scope: "lab" })] })).verdict).toBe("fail");
    // Proven again after a retry: the last proof counts.
    expect(judgeScenario(seen({ declared: [served], premises: [missed, { ...served, met: true }], checks: [check("E-ok", "pass")] })).verdict).toBe("pass");
  });

  it("premises: one declared but never proven is unknown once the body returned (not when it threw: that is its own verdict)", () => {
    const declared = [{ id: "P-turn-in-flight", what: "the turn was in flight at the kill" }];
    expect(judgeScenario(seen({ declared, checks: [check("E-ok", "pass")] }))).toMatchObject({ verdict: "unknown", detail: "the lab could not tell: premise P-turn-in-flight was never proven (the turn was in flight at the kill)" });
    expect(judgeScenario(seen({ declared, bodyReturned: false, problems: [{ verdict: "fail", text: "boom" }] }))).toMatchObject({ verdict: "fail", detail: "boom" });
  });
});
