// Runs scenarios: resolves names, brings up labs (one shared standard lab for "shared"
// scenarios, a fresh one for each "own"), judges each, checks that the shared lab stayed
// healthy and that every torn-down lab left nothing behind, and records verdicts in run.json.
import fs from "node:fs";
import path from "node:path";
import { pruneDeadRuns } from "./cleanup.ts";
import { requireEngine } from "./docker.ts";
import type { Run } from "./evidence/run.ts";
import { LabError, info, step } from "./log.ts";
import { LabInfraError, type Scenario, type ScenarioContext, type Verdict } from "./scenario.ts";
import { Lab } from "./topology/lab.ts";
import { parseTopology, type TopologySpec } from "./topology/spec.ts";
import { scenarios as registry } from "../scenarios/index.ts";
import { findings } from "../scenarios/findings.ts";
import { judge, verdictOf, type CheckResult } from "./findings/findings.ts";
import { healAll } from "./faults/fault.ts";

export interface ScenarioResult {
  name: string;
  verdict: Verdict;
  seconds: number;
  detail?: string;
  evidence: string;
  checks: CheckResult[];
}

/** Exit code of a run: 0 all pass (known findings and "fixed?" included), 1 any fail, 3 any unknown. */
export function exitCodeOf(results: ScenarioResult[]): number {
  if (results.some((r) => r.verdict === "fail")) return 1;
  if (results.some((r) => r.verdict === "unknown")) return 3;
  return 0;
}

export function resolveScenarios(names: string[], known: Scenario[] = registry): Scenario[] {
  if (!names.length) return known;
  const byName = new Map(known.map((s) => [s.name, s]));
  const unknown = names.filter((n) => !byName.has(n));
  if (unknown.length) {
    throw new LabError(`unknown scenario${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}. Known scenarios: ${known.map((s) => s.name).join(", ")}`);
  }
  return names.map((n) => byName.get(n)!);
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
  const checks: CheckResult[] = [];
  const done = (verdict: Verdict, detail?: string): ScenarioResult => {
    const r = { name: s.name, verdict, seconds: Math.round(performance.now() - t0) / 1000, detail, evidence: path.relative(run.dir, dir), checks };
    if (checks.length) fs.writeFileSync(path.join(dir, "findings.json"), JSON.stringify(checks, null, 2) + "\n");
    const f = ((run.record.findings as CheckResult[]) ??= []);
    f.push(...checks.filter((c) => c.outcome !== "pass"));
    run.record.scenarios.push({ name: r.name, verdict: r.verdict, seconds: r.seconds, detail: r.detail });
    run.save();
    fs.writeFileSync(path.join(dir, "verdict.json"), JSON.stringify(r, null, 2) + "\n");
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
  const ctx: ScenarioContext = {
    lab,
    run,
    dir,
    file: (rel) => {
      const p = path.join(dir, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      return p;
    },
    log: (msg) => {
      log.write(`${new Date().toISOString()} ${msg}\n`);
      info(`  [${s.name}] ${msg}`);
    },
    check: (c) => {
      const r = judge(findings, { ...c, scenario: s.name, version: lab.spec.openclawVersion });
      checks.push(r);
      ctx.log(`check ${c.id}: ${r.outcome}${r.outcome === "pass" ? "" : ` (observed ${JSON.stringify(c.observed)})`}`);
      return c.holds;
    },
  };

  let verdict: Verdict = "pass";
  let detail: string | undefined;
  try {
    await step(`scenario ${s.name}`, () => withTimeout(s.run(ctx), s.timeoutMs, `scenario ${s.name} did not finish within ${s.timeoutMs / 1000} s`));
    verdict = verdictOf(checks);
    if (verdict === "fail") detail = checks.filter((c) => c.outcome === "fail").map((c) => `${c.findingId}: ${c.note}`).join("; ");
    else if (verdict !== "pass") detail = checks.filter((c) => c.outcome !== "pass").map((c) => `${c.outcome} ${c.findingId}`).join(", ");
  } catch (err) {
    verdict = err instanceof LabInfraError ? "unknown" : "fail";
    detail = (err as Error).message;
    ctx.log(`${verdict}: ${(err as Error).stack ?? detail}`);
  }

  // Every fault the scenario left is healed before judging the lab's state.
  const healed = await healAll({ lab: lab.id });
  if (healed.healed.length) ctx.log(`healed faults left by the scenario: ${healed.healed.map((h) => h.fault).join(", ")}`);
  if (healed.failed.length && verdict !== "fail") {
    verdict = "unknown";
    detail = `could not heal: ${healed.failed.map((f) => `${f.fault} (${f.error})`).join("; ")}`;
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

/** Run the named scenarios (all when none are named) and return their results. */
export async function runScenarios(names: string[], spec: TopologySpec, run: Run): Promise<ScenarioResult[]> {
  const chosen = resolveScenarios(names);
  run.record.engine = await requireEngine();
  run.record.topology = spec;
  run.save();
  await pruneDeadRuns();
  const pool = new LabPool(spec, run);
  const results: ScenarioResult[] = [];
  try {
    // Shared-lab scenarios first, then the ones that need a lab of their own.
    for (const s of [...chosen.filter((c) => c.topology === "shared"), ...chosen.filter((c) => c.topology === "own")]) {
      if (s.topology === "own") await pool.close();
      results.push(await runScenario(s, pool));
    }
  } finally {
    await pool.close();
    run.record.endedAt = new Date().toISOString();
    run.save();
  }
  return results;
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

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(message)), ms)))]).finally(() => clearTimeout(t));
}
