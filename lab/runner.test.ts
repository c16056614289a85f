import { describe, expect, it } from "vitest";
import { exitCodeOf, resolveScenarios } from "./runner.ts";
import { scenarios } from "../scenarios/index.ts";

describe("runner", () => {
  it("an unknown scenario name fails listing the known ones", () => {
    expect(() => resolveScenarios(["smoke", "smok"])).toThrow(`unknown scenario: smok. Known scenarios: ${scenarios.map((s) => s.name).join(", ")}`);
  });

  it("no names means every scenario, in registry order", () => {
    expect(resolveScenarios([]).map((s) => s.name)).toEqual(scenarios.map((s) => s.name));
  });

  it("exit codes: fail beats unknown beats pass; known findings pass", () => {
    const r = (verdict: string) => ({ name: "x", verdict, seconds: 1, evidence: "", checks: [] }) as never;
    expect(exitCodeOf([r("pass"), r("known-finding"), r("fixed?")])).toBe(0);
    expect(exitCodeOf([r("pass"), r("unknown")])).toBe(3);
    expect(exitCodeOf([r("unknown"), r("fail")])).toBe(1);
  });
});
