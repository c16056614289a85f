// The scenario suite under vitest: one test per registered scenario, judged by the same
// runner as `make lab` (so verdicts, evidence and clean-up are identical).
import { afterAll, describe, expect, it } from "vitest";
import { Run } from "../lab/evidence/run.ts";
import { requireEngine } from "../lab/docker.ts";
import { pruneDeadRuns } from "../lab/cleanup.ts";
import { LabPool, runScenario } from "../lab/runner.ts";
import { topologyFromEnv } from "../lab/topology/spec.ts";
import { scenarios } from "./index.ts";

const spec = topologyFromEnv();
const run = Run.create({ seed: spec.seed });
const pool = new LabPool(spec, run);

describe(`scenarios (evidence: ${run.dir})`, () => {
  afterAll(async () => {
    await pool.close();
    run.record.endedAt = new Date().toISOString();
    run.save();
  });

  it("has a Docker engine", async () => {
    run.record.engine = await requireEngine();
    run.record.topology = spec;
    run.save();
    await pruneDeadRuns();
  });

  // As `make lab` runs them: every shared-lab scenario on one lab, then each own-lab one.
  const ordered = [...scenarios.filter((s) => s.topology === "shared"), ...scenarios.filter((s) => s.topology === "own")];
  for (const s of ordered) {
    it(`${s.name}: ${s.proves}`, { timeout: s.timeoutMs + 300_000 }, async () => {
      if (s.topology === "own") await pool.close();
      const r = await runScenario(s, pool);
      expect(r.verdict, `${r.detail ?? ""}\nevidence: ${run.dir}/${r.evidence}`).toMatch(/^(pass|known-finding)$/);
    });
  }
});
