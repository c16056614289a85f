// The scenario suite as `make test` runs it (scenarios/lab.scenario.ts: the runner's lanes, one
// shared lab per lane, a lab of its own for each "own" scenario, then report.html read back in
// headless Chromium), timed: the whole suite's wall time, each scenario's seconds and verdict,
// and every lab's bring-up (the shared lab's first of all). The bench is handed the scenarios
// (the lab never imports them): lab/bench/main.ts loads them from the scenarios folder.
import type { Run } from "../evidence/run.ts";
import { faultScenario, lookAtReport } from "../evidence/report-check.ts";
import { lanesFromEnv } from "../definitions/settings.ts";
import { LabPool, resolveScenarios, runLanes, writeRunReports, type ScenarioResult } from "../run/runner.ts";
import type { Scenario } from "../scenario.ts";
import { Lab, type LabUpOptions } from "../topology/lab.ts";
import type { TopologySpec } from "../definitions/spec.ts";

/** The issue's goal for the whole suite's wall time. */
export const SUITE_TARGET_S = 8 * 60;

export interface LabBringUp {
  name: string;
  nodes: number;
  /** Network created -> gateway ready and every node paired and connected (Lab.timings.ready). */
  ready: number;
  /** Including images and the capability probe (Lab.timings.up). */
  up: number;
  /** restored / taken / fresh (Lab.snapshot.path), when the lab records it. */
  snapshot?: string;
}

export interface SuiteBench {
  run: string;
  dir: string;
  lanes: number;
  wallS: number;
  /** Scenarios: start of the run -> last verdict (the runner's part of the wall time). */
  scenariosS: number;
  reportCheckS?: number;
  reportCheck?: string;
  results: Pick<ScenarioResult, "name" | "verdict" | "seconds">[];
  labs: LabBringUp[];
}

/** The scenarios the suite runs: `names` (space separated, e.g. BENCH_SUITE_SCENARIOS) or every one. */
export function suiteScenarios(all: Scenario[], names: string | undefined): Scenario[] {
  const list = (names ?? "").split(/[\s,]+/).filter(Boolean);
  return resolveScenarios(list, all);
}

export async function benchSuite(scenarios: Scenario[], spec: TopologySpec, run: Run, opts: { lanes?: number; log?: (s: string) => void } = {}): Promise<SuiteBench> {
  const labs: LabBringUp[] = [];
  const up = async (s: TopologySpec, r: Run, name: string, o?: LabUpOptions): Promise<Lab> => {
    const lab = await Lab.up(s, r, name, o);
    labs.push({ name, nodes: s.nodes.count, ready: lab.timings.ready ?? NaN, up: lab.timings.up ?? NaN, snapshot: lab.snapshot?.path });
    opts.log?.(`suite: lab ${name} ready in ${lab.timings.ready} s${lab.snapshot ? ` (${lab.snapshot.path})` : ""}`);
    return lab;
  };
  const lanes = opts.lanes ?? lanesFromEnv();
  const t0 = performance.now();
  const results = await runLanes(scenarios, spec, run, {
    lanes,
    pool: () => new LabPool(spec, run, { up }),
    onResult: (r) => opts.log?.(`suite: ${r.name} ${r.verdict} in ${r.seconds} s`),
  });
  const scenariosS = (performance.now() - t0) / 1000;
  // Last, as in make test: the run's report.html as a person sees it, in headless Chromium.
  let reportCheckS: number | undefined;
  let reportCheck: string | undefined;
  const t1 = performance.now();
  try {
    const page = writeRunReports(run);
    if (!page) reportCheck = "report.html not written";
    else if (!faultScenario(run.dir, run.record)) reportCheck = "skipped: no scenario with a fault ran";
    else {
      await lookAtReport(page.file, run.record);
      reportCheck = "read back";
    }
  } catch (err) {
    reportCheck = `failed: ${(err as Error).message.split("\n")[0]}`;
  }
  reportCheckS = (performance.now() - t1) / 1000;
  return {
    run: run.id,
    dir: run.dir,
    lanes,
    wallS: (performance.now() - t0) / 1000,
    scenariosS,
    reportCheckS,
    reportCheck,
    results: results.map((r) => ({ name: r.name, verdict: r.verdict, seconds: r.seconds })),
    labs,
  };
}

/** The per-scenario table: [scenario, seconds, verdict], slowest first, then the labs' bring-ups. */
export function suiteTable(b: SuiteBench): string[][] {
  const rows = [...b.results].sort((x, y) => y.seconds - x.seconds).map((r) => [r.name, r.seconds.toFixed(1), r.verdict]);
  const labs = b.labs.map((l) => [`  lab ${l.name} (${l.nodes} node hosts) ready`, l.ready.toFixed(1), l.snapshot ?? "-"]);
  return [...rows, ...labs];
}
