import { describe, expect, it } from "vitest";
import { judge, unexercised, verdictOf, type FindingRecord } from "./findings.ts";

const registry: FindingRecord[] = [
  {
    id: "F-run-stays-running",
    expectation: "the turn ends with an error",
    signature: { session: "running", placement: "active" },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "x",
  },
];
const base = { id: "F-run-stays-running", scenario: "midturn", expectation: "the turn ends with an error", version: "2026.9.6" };

describe("findings", () => {
  it("a shortfall matching the registered signature exactly is a known finding", () => {
    const r = judge(registry, { ...base, holds: false, observed: { placement: "active", session: "running" } });
    expect(r.outcome).toBe("known-finding");
  });

  it("a different shortfall cannot hide behind a registered finding", () => {
    const r = judge(registry, { ...base, holds: false, observed: { session: "running", placement: "failed" } });
    expect(r.outcome).toBe("fail");
    expect(r.note).toMatch(/differs from registered finding/);
  });

  it("an unregistered shortfall fails", () => {
    expect(judge(registry, { ...base, id: "F-other", holds: false, observed: 1 }).outcome).toBe("fail");
  });

  it("a registered finding that no longer reproduces is reported as fixed?, naming the version and the record's versions", () => {
    const same = judge(registry, { ...base, holds: true });
    expect(same.outcome).toBe("fixed?");
    expect(same.note).toBe("registered finding F-run-stays-running did not reproduce on 2026.9.6 (the record lists 2026.9.6)");
  });

  it("on a version the record does not list, a check that holds is still fixed?, not a silent pass", () => {
    const newer = judge(registry, { ...base, version: "2027.1.1", holds: true });
    expect(newer.outcome).toBe("fixed?");
    expect(newer.note).toBe("registered finding F-run-stays-running did not reproduce on 2027.1.1 (the record lists 2026.9.6, not 2027.1.1)");
    expect(newer.registered).toEqual(registry[0]!.signature);
    // Nothing registered under the id: a plain pass on any version.
    expect(judge(registry, { ...base, id: "F-other", version: "2027.1.1", holds: true }).outcome).toBe("pass");
  });

  it("the same shortfall on a version the record does not list is a known finding that says so", () => {
    const r = judge(registry, { ...base, version: "2027.1.1", holds: false, observed: { session: "running", placement: "active" } });
    expect(r.outcome).toBe("known-finding");
    expect(r.note).toBe("registered for 2026.9.6; also seen on 2027.1.1");
  });

  it("records no check judged are unexercised, whatever the outcome of the others", () => {
    const two = [...registry, { ...registry[0]!, id: "F-never-checked" }];
    const checked = [judge(two, { ...base, holds: false, observed: { session: "running", placement: "active" } })];
    expect(unexercised(two, checked).map((f) => f.id)).toEqual(["F-never-checked"]);
    expect(unexercised(two, [...checked, { findingId: "F-never-checked" }])).toEqual([]);
  });

  it("a scenario's verdict is its worst check", () => {
    const k = judge(registry, { ...base, holds: false, observed: { session: "running", placement: "active" } });
    const f = judge(registry, { ...base, id: "F-x", holds: false, observed: 1 });
    expect(verdictOf([k])).toBe("known-finding");
    expect(verdictOf([k, f])).toBe("fail");
    expect(verdictOf([])).toBe("pass");
  });
});

describe("lab-wide known findings", () => {
  it("leave a scenario's verdict alone; a lab-wide fail or fixed? still counts", () => {
    const base = { scenario: "s", expectation: "e", kind: "differs-from-reference" as const };
    const labKnown = { ...base, findingId: "F-lab", outcome: "known-finding" as const, scope: "lab" as const };
    expect(verdictOf([labKnown])).toBe("pass");
    expect(verdictOf([labKnown, { ...base, findingId: "F-own", outcome: "known-finding" }])).toBe("known-finding");
    expect(verdictOf([{ ...labKnown, outcome: "fail" }])).toBe("fail");
    expect(verdictOf([{ ...labKnown, outcome: "fixed?" }])).toBe("fixed?");
  });
});
