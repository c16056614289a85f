import { describe, expect, it } from "vitest";
import { judge, verdictOf, type FindingRecord } from "./findings.ts";

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

  it("a registered finding that no longer reproduces is reported as fixed?", () => {
    expect(judge(registry, { ...base, holds: true }).outcome).toBe("fixed?");
    expect(judge(registry, { ...base, version: "2027.1.1", holds: true }).outcome).toBe("pass");
  });

  it("a scenario's verdict is its worst check", () => {
    const k = judge(registry, { ...base, holds: false, observed: { session: "running", placement: "active" } });
    const f = judge(registry, { ...base, id: "F-x", holds: false, observed: 1 });
    expect(verdictOf([k])).toBe("known-finding");
    expect(verdictOf([k, f])).toBe("fail");
    expect(verdictOf([])).toBe("pass");
  });
});
