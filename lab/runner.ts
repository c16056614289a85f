// Runs the scenarios it is handed (after Jepsen: the test map is passed in; the framework
// never imports a scenario): resolves names, brings up labs (one shared standard lab for
// "shared" scenarios, a fresh one for each "own"), judges each against the findings it
// registers, checks that the shared lab stayed healthy and that every torn-down lab left
// nothing behind, and records verdicts in run.json. The CLI and the vitest suite both call it.
import fs from "node:fs";
import { writeJson } from "./evidence/write.ts";
import { junitXml } from "./evidence/junit.ts";
import { writeReportHtml, type ReportWritten } from "./evidence/report-html.ts";
import path from "node:path";
import { pruneDeadRuns } from "./cleanup.ts";
import { requireEngine } from "./docker.ts";
import type { Run } from "./evidence/run.ts";
import { LabError, info, step } from "./log.ts";
import { LabInfraError, type Scenario, type ScenarioContext } from "./scenario.ts";
import { Lab } from "./topology/lab.ts";
import { parseTopology, type TopologySpec } from "./topology/spec.ts";
import { judge, verdictOf, type CheckResult } from "./findings/findings.ts";
import type { Verdict } from "./verdict.ts";
import { withDeadline } from "./wait.ts";

export interface ScenarioResult {
  name: string;
  verdict: Verdict;
  seconds: number;
  detail?: string;
  evidence: string;
  checks: CheckResult[];
  startedAt: string;
  endedAt: string;
}

/** The scenarios named (all of `known` when none are), in the order they run; bad names fail listing the known ones. */
export function resolveScenarios(names: string[], known: Scenario[]): Scenario[] {
  if (!names.length) return runOrder(known);
  const byName = new Map(known.map((s) => [s.name, s]));
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length) {
    throw new LabError(`unknown scenario${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}. Known scenarios: ${known.map((s) => s.name).join(", ")}`);
  }
  return runOrder(names.map((n) => byName.get(n)!));
}

/** Every shared-lab scenario first (on one lab), then each one that needs a lab of its own; within each, by declared order, then name. */
export function runOrder(list: Scenario[]): Scenario[] {
  const sorted = [...list].sort((a, b) => (a.order ?? 50) - (b.order ?? 50) || a.name.localeCompare(b.name));
  return [...sorted.filter((s) => s.topology === "shared"), ...sorted.filter((s) => s.topology === "own")];
}

/** Holds the shared standard lab across scenarios (and across vitest tests). */
export class LabPool {
  #shared: Lab | undefined;
  constructor(
    readonly spec: TopologySpec,
    readonly run: Run,
  ) {}

  async shared(): Promise<Lab> {
    this.#shared ??= await Lab.up(this.spec, this.run, "shared-lab");
    return this.#shared;
  }

  async close(): Promise<void> {
    await this.#shared?.down();
    this.#shared = undefined;
  }
}

export async function runScenario(s: Scenario, pool: LabPool): Promise<ScenarioResult> {
  const run = pool.run;
  const dir = path.join(run.dir, "scenarios", s.name);
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const checks: CheckResult[] = [];
  const done = (verdict: Verdict, detail?: string): ScenarioResult => {
    const r = { name: s.name, verdict, seconds: Math.round(performance.now() - t0) / 1000, detail, evidence: path.relative(run.dir, dir), checks, startedAt, endedAt: new Date().toISOString() };
    if (checks.length) writeJson(path.join(dir, "findings.json"), checks);
    run.update((rec) => {
      (rec.findings ??= []).push(...checks.filter((c) => c.outcome !== "pass"));
      rec.scenarios.push({ name: r.name, verdict: r.verdict, seconds: r.seconds, detail: r.detail, startedAt, endedAt: r.endedAt, evidence: r.evidence });
    });
    writeJson(path.join(dir, "verdict.json"), r);
    writeRunReports(run);
    info(`scenario ${s.name}: ${verdict.toUpperCase()} in ${r.seconds.toFixed(1)} s${detail ? ` (${detail.split("\n")[0]})` : ""}`);
    return r;
  };

  let lab: Lab;
  try {
    lab = s.topology === "shared" ? await pool.shared() : await Lab.up(parseTopology(mergeSpec(pool.spec, s.spec ?? {})), run, `scenarios/${s.name}/lab`);
  } catch (err) {
    if (err instanceof LabError) throw err; // bad input: stop the whole run with its message
    return done("unknown", `the lab could not come up: ${(err as Error).message}`);
  }

  const log = fs.createWriteStream(path.join(dir, "scenario.log"));
  // The signal is the scenario's deadline (withDeadline, below).
  const ctx: Omit<ScenarioContext, "signal"> = {
    lab,
    run,
    dir,
    file: (rel) => run.file(path.join("scenarios", s.name, rel)),
    log: (msg) => {
      log.write(`${new Date().toISOString()} ${msg}\n`);
      info(`  [${s.name}] ${msg}`);
    },
    check: (c) => {
      const r = judge(s.findings ?? [], { ...c, scenario: s.name, version: lab.spec.openclawVersion });
      checks.push(r);
      ctx.log(`check ${c.id}: ${r.outcome}${r.outcome === "pass" ? "" : ` (observed ${JSON.stringify(c.observed)})`}`);
      return c.holds;
    },
  };

  let verdict: Verdict = "pass";
  let detail: string | undefined;
  const mark = lab.teardown.mark();
  try {
    await step(`scenario ${s.name}`, () =>
      withDeadline(
        (signal) => s.run({ ...ctx, signal }),
        s.timeoutMs,
        `scenario ${s.name} did not finish within ${s.timeoutMs / 1000} s`,
      ),
    );
    verdict = verdictOf(checks);
    if (verdict === "fail") detail = checks.filter((c) => c.outcome === "fail").map((c) => `${c.findingId}: ${c.note}`).join("; ");
    else if (verdict !== "pass") detail = checks.filter((c) => c.outcome !== "pass").map((c) => `${c.outcome} ${c.findingId}`).join(", ");
  } catch (err) {
    verdict = err instanceof LabInfraError ? "unknown" : "fail";
    detail = (err as Error).message;
    ctx.log(`${verdict}: ${(err as Error).stack ?? detail}`);
  }

  // Everything the scenario left (faults first of all) is undone before judging the lab's state.
  const undone = await lab.teardown.drain(mark);
  if (undone.done.length) ctx.log(`undone after the scenario: ${undone.done.join(", ")}`);
  if (undone.failed.length && verdict !== "fail") {
    verdict = "unknown";
    detail = `could not undo: ${undone.failed.map((f) => `${f.name} (${f.error})`).join("; ")}`;
  }

  if (s.topology === "own") {
    await lab.down();
    const left = await lab.leftovers();
    if (left.length && verdict === "pass") {
      verdict = "fail";
      detail = `teardown left resources behind: ${left.join(", ")}`;
    }
  } else if (verdict !== "fail" && verdict !== "unknown") {
    const sick = await lab.health();
    if (sick.length) {
      verdict = "fail";
      detail = `scenario declared topology "shared" but left the lab unhealthy: ${sick.join("; ")}`;
    }
  }
  log.end();
  return done(verdict, detail);
}

/** Run these scenarios (already resolved and ordered) and return their results. */
export async function runScenarios(chosen: Scenario[], spec: TopologySpec, run: Run): Promise<ScenarioResult[]> {
  await startRun(run, spec, chosen);
  const pool = new LabPool(spec, run);
  const results: ScenarioResult[] = [];
  try {
    for (const s of runOrder(chosen)) {
      if (s.topology === "own") await pool.close();
      results.push(await runScenario(s, pool));
    }
  } finally {
    await pool.close();
    endRun(run);
  }
  return results;
}

/** The start of every run (CLI and vitest alike): an engine that answers, the plan, what dead runs left removed. */
export async function startRun(run: Run, spec: TopologySpec, plan: Scenario[]): Promise<void> {
  const engine = await requireEngine();
  run.update((r) => {
    r.engine = engine;
    r.topology = spec;
    r.plan = runOrder(plan).map((s) => s.name);
  });
  await pruneDeadRuns();
}

export function endRun(run: Run): void {
  run.update((r) => void (r.endedAt = new Date().toISOString()));
  writeRunReports(run);
}

/**
 * The run's reports beside run.json, written after every scenario so a cut run has them too:
 * junit.xml, and report.html (verdicts, findings, the timeline of every lab; a few hundred ms
 * for a full run's evidence). A report.html that cannot be built is said, never a failed run.
 */
export function writeRunReports(run: Run): ReportWritten | undefined {
  fs.writeFileSync(path.join(run.dir, "junit.xml"), junitXml(run.record));
  try {
    return writeReportHtml(run.dir, run.record);
  } catch (err) {
    info(`report.html of run ${run.id} could not be written: ${(err as Error).stack ?? err}`);
    return undefined;
  }
}

/** A scenario's topology overrides, merged field by field into the run's spec. */
export function mergeSpec(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeSpec(base[k], v);
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
