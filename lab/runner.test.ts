import { describe, expect, it } from "vitest";
import { mergeSpec, resolveScenarios, runOrder } from "./runner.ts";
import { defineScenario, type Scenario } from "./scenario.ts";
import { accepted, exitCodeOf } from "./verdict.ts";

const fake = (name: string, topology: "shared" | "own"): Scenario => defineScenario({ name, proves: name, topology, timeoutMs: 1, run: async () => {} });
const known = [fake("smoke", "own"), fake("pair", "shared"), fake("loss", "own"), fake("reuse", "shared")];

describe("runner", () => {
  it("an unknown scenario name fails listing the known ones", () => {
    expect(() => resolveScenarios(["smoke", "smok"], known)).toThrow("unknown scenario: smok. Known scenarios: smoke, pair, loss, reuse");
  });

  it("no names means every scenario handed in: shared-lab ones first, then those with a lab of their own", () => {
    expect(resolveScenarios([], known).map((s) => s.name)).toEqual(["pair", "reuse", "loss", "smoke"]);
    const first = { ...fake("zz-first-install", "shared"), order: 0 };
    expect(runOrder([...known, first]).map((s) => s.name)).toEqual(["zz-first-install", "pair", "reuse", "loss", "smoke"]);
    expect(runOrder(resolveScenarios(["loss", "reuse"], known)).map((s) => s.name)).toEqual(["reuse", "loss"]);
  });

  it("a scenario's overrides keep the run's other settings (NODES from the environment stays)", () => {
    const run = { nodes: { count: 4, capacity: 2, prefix: "node", devicePairing: "subnet" }, mcp: { servers: [{ name: "north" }] } };
    expect(mergeSpec(run, { nodes: { capacity: 1 }, mcp: { servers: [] } })).toEqual({
      nodes: { count: 4, capacity: 1, prefix: "node", devicePairing: "subnet" },
      mcp: { servers: [] },
    });
  });

  it("a finding registered twice on one scenario is refused", () => {
    const f = { id: "F-x", expectation: "e", signature: 1, versions: ["1"], kind: "shortfall" as const, evidence: "x" };
    expect(() => defineScenario({ name: "d", proves: "d", topology: "own", timeoutMs: 1, findings: [f, f], run: async () => {} })).toThrow("finding F-x is registered twice");
  });
});

describe("one verdict rule (CLI exit code and vitest alike)", () => {
  it("fail beats unknown beats pass; known findings and fixed? are accepted", () => {
    expect(exitCodeOf(["pass", "known-finding", "fixed?"])).toBe(0);
    expect(exitCodeOf(["pass", "unknown"])).toBe(3);
    expect(exitCodeOf(["unknown", "fail"])).toBe(1);
    expect(["pass", "known-finding", "fixed?", "fail", "unknown"].filter((v) => accepted(v as never))).toEqual(["pass", "known-finding", "fixed?"]);
  });
});
