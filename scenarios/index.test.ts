// The registry as a user meets it: every file is a scenario named after it, every finding
// sits beside the scenario that checks it and is complete enough to be judged and retired.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarios, scenarioFiles } from "./index.ts";

const scenarios = await loadScenarios();

describe("scenario registry", () => {
  it("finds every scenario file, each named after its file", () => {
    expect(scenarios.length).toBe(scenarioFiles().length);
    for (const [i, s] of scenarios.entries()) expect(path.basename(scenarioFiles()[i]!, ".ts")).toBe(s.name);
  });

  it("every finding id is unique across scenarios and its record is complete", () => {
    const ids = scenarios.flatMap((s) => (s.findings ?? []).map((f) => f.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const s of scenarios)
      for (const f of s.findings ?? []) {
        expect(f.versions.length, f.id).toBeGreaterThan(0);
        expect(f.expectation.length, f.id).toBeGreaterThan(10);
        expect(f.signature, f.id).not.toBeUndefined();
      }
  });
});
