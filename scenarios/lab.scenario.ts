// The scenario suite under vitest: one test per scenario, run and judged by the same runner
// and the same verdict rule as `make lab` (so verdicts, evidence and clean-up are identical);
// then the run's report.html opened in headless Chromium and read back.
import { afterAll, describe, expect, it } from "vitest";
import { Run } from "../lab/evidence/run.ts";
import { LabPool, endRun, runOrder, runScenario, startRun, writeRunReports } from "../lab/runner.ts";
import { faultScenario, lookAtReport } from "../lab/evidence/report-check.ts";
import { info } from "../lab/log.ts";
import { topologyFromEnv } from "../lab/topology/spec.ts";
import { parseShard, selectShard, shardRecord } from "../lab/shard.ts";
import { accepted } from "../lab/verdict.ts";
import { loadScenarios } from "./index.ts";

const spec = topologyFromEnv();
const run = Run.create({ seed: spec.seed });
const pool = new LabPool(spec, run);
// SHARD=K/N runs only shard K of N (lab/shard.ts: split by measured cost, as `make lab SHARD=K/N`).
const shard = process.env.SHARD?.trim() ? parseShard(process.env.SHARD) : undefined;
// The field-bug repros (scenarios/repro/) are reproduction targets run with make repro, make
// matrix and make lab (the nightly); `make test` keeps to the lab's own suite unless REPROS=1.
const all = runOrder(await loadScenarios(undefined, { repro: process.env.REPROS === "1" }));
const split = shard ? selectShard(all, shard) : undefined;
const scenarios = split?.chosen ?? all;

describe(`scenarios${shard ? ` (shard ${shard.index}/${shard.total})` : ""} (evidence: ${run.dir})`, () => {
  afterAll(async () => {
    await pool.close();
    endRun(run);
  });

  it("has a Docker engine", async () => {
    await startRun(run, spec, scenarios);
    if (shard && split) run.update((r) => void (r.shard = shardRecord(shard, split.plan)));
  });

  for (const s of scenarios) {
    it(`${s.name}: ${s.proves}`, { timeout: s.timeoutMs + 300_000 }, async () => {
      if (s.topology === "own") await pool.close();
      const r = await runScenario(s, pool);
      expect(accepted(r.verdict), `${r.verdict}: ${r.detail ?? ""}\nevidence: ${run.dir}/${r.evidence}`).toBe(true);
    });
  }

  // Last: this run's report.html as a person sees it, in headless Chromium (lab/chromium.sh).
  it("report.html shows the recorded verdicts, a fault and frames on the timeline (headless Chromium)", { timeout: 300_000 }, async (t) => {
    await pool.close(); // every lab down: its transcripts and container events are in the run folder
    // A shard may hold no scenario with a fault: then there is no fault to look for on its page.
    if (shard && !faultScenario(run.dir, run.record)) t.skip(`shard ${shard.index}/${shard.total} ran no scenario with a fault`);
    const page = writeRunReports(run);
    expect(page, "report.html was written").toBeDefined();
    const look = await lookAtReport(page!.file, run.record);
    info(`report: ${page!.file} (${(page!.bytes / 2 ** 20).toFixed(1)} MiB, built in ${page!.ms} ms); verdicts read back: ${Object.keys(look.reading.verdicts).length}; items drawn: ${JSON.stringify(look.reading.items)}`);
    info(`screenshots: ${look.screenshots.join(", ")}`);
  });
});
