// The scenario suite as `make test` runs it (scenarios/lab.scenario.ts: the runner's lanes, one
// shared lab per lane, a lab of its own for each "own" scenario, then report.html read back in
// headless Chromium), timed: the whole suite's wall time, each scenario's seconds and verdict,
// and every lab's bring-up (the shared lab's first of all). The bench is handed the scenarios
// (the lab never imports them): lab/bench/main.ts loads them from the scenarios folder.
import type { Run, ScenarioRow } from "../evidence/run.ts";
import { faultScenario, lookAtReport } from "../evidence/report-check.ts";
import { lanesFromEnv } from "../core/settings.ts";
import { LabPool, resolveScenarios, runLanes, writeRunReports, type ScenarioResult } from "../run/runner.ts";
import type { Scenario } from "../scenario.ts";
import { Lab, type LabUpOptions } from "../topology/lab.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import { ownWorkS } from "../core/waits.ts";

/** Issue 36's goal for the whole suite's wall time (make test and the full make lab). */
export const SUITE_TARGET_S = 15 * 60;

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
  results: SuiteRow[];
  labs: LabBringUp[];
}

/** One scenario of the suite: its time, and where it went (run.json's phases and waits). */
export interface SuiteRow extends Pick<ScenarioResult, "name" | "verdict" | "seconds"> {
  /** Its own lab's bring-up (phase "lab"; 0 on a lane's shared lab once up). */
  labS?: number;
  /** Its body's waits (lab/core/waits.ts), as in run.json. */
  waits?: ScenarioRow["waits"];
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
    results: results.map((r) => suiteRow(r, run.record.scenarios.find((x) => x.name === r.name))),
    labs,
  };
}

/** A scenario's result with where its time went, from its row in run.json. */
export function suiteRow(r: Pick<ScenarioResult, "name" | "verdict" | "seconds">, row: ScenarioRow | undefined): SuiteRow {
  const lab = row?.phases?.find((p) => p.name === "lab");
  return { name: r.name, verdict: r.verdict, seconds: r.seconds, ...(lab ? { labS: lab.ms / 1000 } : {}), ...(row?.waits ? { waits: row.waits } : {}) };
}

export const SUITE_HEAD = ["scenario", "seconds", "verdict", "own lab up", "windows run out", "awaiting OpenClaw", "its answers", "pauses", "lab's own work"];

/**
 * The per-scenario table, slowest first, then the labs' bring-ups: each scenario's seconds split
 * into its own lab's bring-up and its body's waits (lab/core/waits.ts): windows an expectation
 * imposes (run to their end), waits that ended when OpenClaw did what was awaited, requests
 * awaiting the gateway's answers, the scenario's pauses, and the rest (the lab's own work:
 * faults, commands in containers, reading evidence).
 * The last row sums them over the suite.
 */
export function suiteTable(b: SuiteBench): string[][] {
  const f = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(1));
  const cells = (r: SuiteRow) => [r.labS, r.waits?.windowS, r.waits?.observedS, r.waits?.requestS, r.waits?.pauseS, r.waits && ownWorkS(r.waits)];
  const rows = [...b.results].sort((x, y) => y.seconds - x.seconds).map((r) => [r.name, r.seconds.toFixed(1), r.verdict, ...cells(r).map(f)]);
  const sum = (i: number) => b.results.reduce((a, r) => a + (cells(r)[i] ?? 0), 0);
  const total = ["(sum over the suite)", f(b.results.reduce((a, r) => a + r.seconds, 0)), "", ...[0, 1, 2, 3, 4, 5].map((i) => f(sum(i)))];
  const labs = b.labs.map((l) => [`  lab ${l.name} (${l.nodes} node hosts) ready`, l.ready.toFixed(1), l.snapshot ?? "-", "", "", "", "", "", ""]);
  return [...rows, total, ...labs];
}
