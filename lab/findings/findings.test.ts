import { describe, expect, it } from "vitest";
import { judge, namedVersions, recordProblems, signaturesOf, unexercised, verdictOf, type FindingRecord } from "./findings.ts";

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

  it("an intermittent finding (a race seen in some runs): a run where it holds reads pass with a note on a listed version, fixed? on another; its signature is a known finding; another shortfall fails", () => {
    const flaky: FindingRecord[] = [{ ...registry[0]!, intermittent: true }];
    const held = judge(flaky, { ...base, holds: true });
    expect(held.outcome).toBe("pass");
    expect(held.note).toMatch(/registered intermittent finding F-run-stays-running not seen in this run on 2026.9.6/);
    expect(judge(flaky, { ...base, version: "2027.1.1", holds: true }).outcome).toBe("fixed?");
    expect(judge(flaky, { ...base, holds: false, observed: { placement: "active", session: "running" } }).outcome).toBe("known-finding");
    expect(judge(flaky, { ...base, holds: false, observed: { session: "running", placement: "failed" } }).outcome).toBe("fail");
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

describe("a signature per version range (variants)", () => {
  // The same bug shows differently from 2026.9.5 on: the turn ends in error once the node is back.
  const rec: FindingRecord = {
    id: "F-turn",
    expectation: "the turn ends",
    signature: { run: "timeout" },
    versions: ["2026.9.5", "2026.9.6"],
    variants: [{ versions: ">=2026.9.5 <2026.9.6", signature: { run: "error" }, note: "ends in error once the node is back" }],
    kind: "shortfall",
    evidence: "x",
  };
  const c = { id: "F-turn", scenario: "midturn", expectation: "the turn ends", holds: false };

  it("the variant whose range holds the version matches, and the result names it", () => {
    const r = judge([rec], { ...c, version: "2026.9.5", observed: { run: "error" } });
    expect(r.outcome).toBe("known-finding");
    expect(r.variant).toBe(">=2026.9.5 <2026.9.6");
    expect(r.note).toBe("variant >=2026.9.5 <2026.9.6 matched");
  });

  it("the record's own signature is the base variant, matched outside every range", () => {
    const r = judge([rec], { ...c, version: "2026.9.6", observed: { run: "timeout" } });
    expect(r).toMatchObject({ outcome: "known-finding", variant: "base", note: "its own signature matched" });
  });

  it("a signature seen outside the range it is registered for is still the known bug, and says where it was expected", () => {
    const r = judge([rec], { ...c, version: "2026.9.6", observed: { run: "error" } });
    expect(r.outcome).toBe("known-finding");
    expect(r.variant).toBe(">=2026.9.5 <2026.9.6");
    expect(r.note).toBe("variant >=2026.9.5 <2026.9.6 matched; expected on 2026.9.6: its own signature; registered for >=2026.9.5 <2026.9.6; also seen on 2026.9.6");
  });

  it("a signature no variant has fails, showing the one expected on that version", () => {
    const r = judge([rec], { ...c, version: "2026.9.5", observed: { run: "ok" } });
    expect(r.outcome).toBe("fail");
    expect(r.registered).toEqual({ run: "error" });
    expect(r.note).toMatch(/expected on 2026.9.5: variant >=2026.9.5 <2026.9.6; it has 2 signatures, none equal/);
  });

  it("a record without variants names no variant", () => {
    const r = judge(registry, { ...base, holds: false, observed: { session: "running", placement: "active" } });
    expect(r.variant).toBeUndefined();
    expect(r.note).toBeUndefined();
  });

  it("signaturesOf puts the variants for the version first; recordProblems names a bad range or a repeated signature", () => {
    expect(signaturesOf(rec, "2026.9.5").map((s) => s.label)).toEqual([">=2026.9.5 <2026.9.6", "base"]);
    expect(recordProblems(rec)).toEqual([]);
    expect(recordProblems({ ...rec, variants: [{ versions: "2026.9", signature: 1 }] })[0]).toMatch(/"2026.9" is not a comparator/);
    expect(recordProblems({ ...rec, variants: [{ versions: "2026.9.5", signature: { run: "timeout" } }] })).toEqual(["F-turn: variant 2026.9.5 repeats a signature the record already has"]);
  });
});

describe("not affected vs fixed?", () => {
  const rec: FindingRecord = { id: "F-slot", expectation: "slots free", signature: { available: 1 }, versions: ["2026.9.6"], kind: "shortfall", evidence: "x" };
  const holds = (version: string, r = rec) => judge([r], { id: "F-slot", scenario: "s", expectation: "slots free", holds: true, version });

  it("older than every version the record names: not affected (a pass that says so), not fixed?", () => {
    const r = holds("2026.9.4");
    expect(r.outcome).toBe("pass");
    expect(r.notAffected).toBe(true);
    expect(r.note).toBe("not affected: 2026.9.4 is older than every version registered finding F-slot names (2026.9.6), and the check holds there: a regression that came later");
    expect(verdictOf([r])).toBe("pass");
  });

  it("on a version the record names, or a newer one: fixed?", () => {
    expect(holds("2026.9.6").outcome).toBe("fixed?");
    expect(holds("2026.10.1").outcome).toBe("fixed?");
    expect(holds("2026.10.1").notAffected).toBeUndefined();
  });

  it("a variant's range counts as named: inside it fixed?, older than its bound not affected", () => {
    const r = { ...rec, variants: [{ versions: ">=2026.9.5", signature: { available: 0 } }] };
    expect(holds("2026.9.5", r).outcome).toBe("fixed?");
    expect(holds("2026.9.4", r).notAffected).toBe(true);
    // A range reaching back (<2026.9.6) says the older versions have the bug: fixed?, never not affected.
    expect(holds("2026.9.1", { ...rec, variants: [{ versions: "<2026.9.6", signature: { available: 0 } }] }).outcome).toBe("fixed?");
    expect(namedVersions(r)).toEqual(["2026.9.5", "2026.9.6"]);
  });
});
