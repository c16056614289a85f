// The reproduction loop (after etcd's `make test-robustness-issue<N>`): one scenario N times,
// "reproduced k/N". Each attempt is an instance of the scenario (`<name>~03`) with its own
// evidence folder in one run folder: an own-lab scenario gets a fresh lab every time, a
// shared-lab one runs every attempt on the same shared lab, as in a full run. An attempt
// reproduced when OpenClaw showed the bug: the scenario failed, or one of its registered
// findings matched (a repro scenario asserts what the user should have seen, so the bug is a
// shortfall). A pass or a "fixed?" did not reproduce; an unknown could not tell and is counted
// apart, never as either.
import type { Run } from "./evidence/run.ts";
import type { Scenario } from "./scenario.ts";
import { LabPool, endRun, runScenario, type ScenarioResult } from "./runner.ts";
import type { TopologySpec } from "./spec.ts";
import type { Verdict } from "./verdict.ts";

export const reproduced = (v: Verdict): boolean => v === "fail" || v === "known-finding";

export interface Attempt {
  index: number;
  verdict: Verdict;
  seconds: number;
  evidence: string;
  detail?: string;
}

export interface ReproTally {
  scenario: string;
  /** Attempts made (fewer than asked when UNTIL stopped at the first reproduction, or the run was cut). */
  ran: number;
  asked: number;
  reproduced: number;
  unknown: number;
  /** Attempts that reproduced, by index. */
  hits: number[];
}

export function tally(scenario: string, asked: number, attempts: Attempt[]): ReproTally {
  return {
    scenario,
    asked,
    ran: attempts.length,
    reproduced: attempts.filter((a) => reproduced(a.verdict)).length,
    unknown: attempts.filter((a) => a.verdict === "unknown").length,
    hits: attempts.filter((a) => reproduced(a.verdict)).map((a) => a.index),
  };
}

/** "reproduced 7/20 (35%), 1 unknown" */
export function tallyLine(t: ReproTally): string {
  const judged = t.ran - t.unknown;
  const rate = judged ? ` (${Math.round((100 * t.reproduced) / judged)}% of ${judged} judged)` : "";
  const cut = t.ran < t.asked ? `; ${t.asked - t.ran} of ${t.asked} not attempted` : "";
  return `reproduced ${t.reproduced}/${t.ran}${rate}${t.unknown ? `, ${t.unknown} unknown (the lab could not tell)` : ""}${cut}`;
}

/** Exit code of a loop: 0 reproduced at least once, 1 never (every attempt judged), 3 never but some could not tell. */
export function reproExitCode(t: ReproTally): number {
  if (t.reproduced > 0) return 0;
  return t.unknown > 0 || t.ran === 0 ? 3 : 1;
}

export const attemptName = (s: Scenario, i: number, n: number): string => `${s.name}~${String(i).padStart(String(n).length, "0")}`;

/**
 * Run `s` up to `n` times (stopping at the first reproduction with `until`), each attempt
 * reported through `onAttempt` as it ends.
 */
export async function reproLoop(
  s: Scenario,
  n: number,
  opts: { spec: TopologySpec; run: Run; until?: boolean; pool?: LabPool; onAttempt?: (a: Attempt, r: ScenarioResult) => void },
): Promise<ReproTally> {
  const pool = opts.pool ?? new LabPool(opts.spec, opts.run);
  const instances = Array.from({ length: n }, (_, k) => ({ ...s, name: attemptName(s, k + 1, n) }));
  await pool.opts.start(opts.run, opts.spec, instances);
  opts.run.update((r) => void (r.repro = { scenario: s.name, asked: n, until: !!opts.until }));
  const attempts: Attempt[] = [];
  try {
    for (const [k, inst] of instances.entries()) {
      if (s.topology === "own") await pool.close();
      const r = await runScenario(inst, pool);
      const a: Attempt = { index: k + 1, verdict: r.verdict, seconds: r.seconds, evidence: r.evidence, detail: r.detail };
      attempts.push(a);
      opts.onAttempt?.(a, r);
      if (opts.until && reproduced(r.verdict)) break;
    }
  } finally {
    await pool.close();
    const t = tally(s.name, n, attempts);
    opts.run.update((r) => {
      r.repro = { scenario: s.name, asked: n, until: !!opts.until, ran: t.ran, reproduced: t.reproduced, unknown: t.unknown, hits: t.hits };
      // Stopped at the first reproduction on purpose: the attempts not made are not "not run".
      if (opts.until && t.reproduced) r.plan = r.scenarios.map((x) => x.name);
    });
    endRun(opts.run, pool.opts.labFindings);
  }
  return tally(s.name, n, attempts);
}
