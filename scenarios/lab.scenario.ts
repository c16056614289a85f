// The scenario suite under vitest: one test per scenario, run and judged by the same runner
// and the same verdict rule as `make lab` (so verdicts, evidence and clean-up are identical).
import { afterAll, describe, expect, it } from "vitest";
import { Run } from "../lab/evidence/run.ts";
import { LabPool, endRun, runOrder, runScenario, startRun } from "../lab/runner.ts";
import { topologyFromEnv } from "../lab/topology/spec.ts";
import { accepted } from "../lab/verdict.ts";
import { loadScenarios } from "./index.ts";

const spec = topologyFromEnv();
const run = Run.create({ seed: spec.seed });
const pool = new LabPool(spec, run);
const scenarios = runOrder(await loadScenarios());

describe(`scenarios (evidence: ${run.dir})`, () => {
  afterAll(async () => {
    await pool.close();
    endRun(run);
  });

  it("has a Docker engine", async () => {
    await startRun(run, spec, scenarios);
  });

  for (const s of scenarios) {
    it(`${s.name}: ${s.proves}`, { timeout: s.timeoutMs + 300_000 }, async () => {
      if (s.topology === "own") await pool.close();
      const r = await runScenario(s, pool);
      expect(accepted(r.verdict), `${r.verdict}: ${r.detail ?? ""}\nevidence: ${run.dir}/${r.evidence}`).toBe(true);
    });
  }
});
