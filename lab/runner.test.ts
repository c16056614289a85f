import { describe, expect, it } from "vitest";
import { exitCodeOf, mergeSpec, resolveScenarios } from "./runner.ts";
import { scenarios } from "../scenarios/index.ts";

describe("runner", () => {
  it("an unknown scenario name fails listing the known ones", () => {
    expect(() => resolveScenarios(["smoke", "smok"])).toThrow(`unknown scenario: smok. Known scenarios: ${scenarios.map((s) => s.name).join(", ")}`);
  });

  it("no names means every scenario, in registry order", () => {
    expect(resolveScenarios([]).map((s) => s.name)).toEqual(scenarios.map((s) => s.name));
  });

  it("a scenario's overrides keep the run's other settings (NODES from the environment stays)", () => {
    const run = { nodes: { count: 4, capacity: 2, prefix: "node", devicePairing: "subnet" }, mcp: { servers: [{ name: "north" }] } };
    expect(mergeSpec(run, { nodes: { capacity: 1 }, mcp: { servers: [] } })).toEqual({
      nodes: { count: 4, capacity: 1, prefix: "node", devicePairing: "subnet" },
      mcp: { servers: [] },
    });
  });

  it("exit codes: fail beats unknown beats pass; known findings pass", () => {
    const r = (verdict: string) => ({ name: "x", verdict, seconds: 1, evidence: "", checks: [] }) as never;
    expect(exitCodeOf([r("pass"), r("known-finding"), r("fixed?")])).toBe(0);
    expect(exitCodeOf([r("pass"), r("unknown")])).toBe(3);
    expect(exitCodeOf([r("unknown"), r("fail")])).toBe(1);
  });
});
