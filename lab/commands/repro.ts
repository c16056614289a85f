// The reproduction loop (after etcd's `make test-robustness-issue<N>`): one scenario N times.
// Each attempt is an instance of the scenario (`<name>~03`) with its own evidence folder in one
// run folder: an own-lab scenario gets a fresh lab every time, a shared-lab one runs every
// attempt on the same shared lab, as in a full run.
//
// "Reproduced" means the bug, nothing else. The scenario names the checks that ARE the bug
// (Scenario.bug, default: its registered findings); each attempt is one of:
//   reproduced        a bug check was short with its registered signature, and its record is a
//                     shortfall (OpenClaw short of its own contract), nothing else failed
//   differs from reference
//                     a bug check matched a differs-from-reference record (OpenClaw does what
//                     it documents, or something a reference harness does otherwise): what it
//                     is, never counted as reproduced, nothing else failed
//   new signature     a bug check was short with a signature no record has (the observed value
//                     is shown), nothing else failed: no other check, and no step (a step that
//                     threw, an escape, a leftover: Judged.failedSteps)
//   failed otherwise  any other check or step failed (a precondition, unregistered drift, a
//                     teardown leftover, a time-out): counted apart, never as reproduced
//   not reproduced    every bug check was judged and held (on a version older than every
//                     version a bug's record names, "not affected": the bug came later)
//   could not tell    unknown or n/a, or a bug check was never judged (the ones that were held)
// The premise self-test (`--aim-off`, make repro AIM_OFF=1): the scenario aims its fault off the
// path one premise needs (each Premise.aimOff says how), so that premise cannot be met. Each
// premise with an aim-off is aimed on its own, N attempts each (`--premise P-x` / AIM_OFF=P-x:
// that one only), so a premise check that cannot fail cannot hide behind another that can. Each
// attempt is then "caught" (unknown, with the aimed premise unmet), "let through" (it read met,
// or the verdict was judged anyway: a premise check that lets a missed fault through is a defect
// of the scenario) or "could not tell" (unknown before the aimed premise was proven: the lab, a
// member or a step failed first, so the attempt says nothing of the premise check). Premises
// without an aim-off are never self-tested; the output names them.
// Exit 0 only when every attempt was caught, 1 when one was let through, 3 when none was let
// through but some could not tell.
// A record with a signature per version range (FindingRecord.variants) says which one matched:
// each attempt's `why` and the summary line name it ("R-x [variant >=2026.9.5]").
import type { Run, RunRecord } from "../evidence/run.ts";
import type { z } from "zod";
import { SCHEMA_VERSION, jsonRun, type ReproDocument } from "./json.ts";
import type { CheckResult } from "../findings/findings.ts";
import type { Scenario } from "../scenario.ts";
import { LabPool, endRun, runScenario, type ScenarioResult } from "../run/runner.ts";
import { lastProofs, type PremiseResult } from "../judge/judging.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import type { Verdict } from "../definitions/verdict.ts";
import { LabError } from "../core/log.ts";

export type AttemptClass = "reproduced" | "differs from reference" | "new signature" | "failed otherwise" | "not reproduced" | "could not tell";

/** The checks of a scenario that are its bug. */
export function bugChecks(s: Pick<Scenario, "bug" | "findings">): string[] {
  return s.bug ?? (s.findings ?? []).map((f) => f.id);
}

/** What one attempt showed (see the head of this file). */
export function classify(verdict: Verdict, checks: CheckResult[], bug: string[], failedSteps: string[] = []): { class: AttemptClass; why?: string } {
  if (verdict === "unknown" || verdict === "n/a") return { class: "could not tell" };
  const own = checks.filter((c) => c.scope !== "lab" || c.outcome === "fail");
  const isBug = (c: CheckResult) => bug.includes(c.findingId);
  const otherFail = own.find((c) => !isBug(c) && c.outcome === "fail");
  const bugJudged = own.filter(isBug);
  const bugKnown = bugJudged.filter((c) => c.outcome === "known-finding");
  const bugNew = bugJudged.filter((c) => c.outcome === "fail");
  if (otherFail) return { class: "failed otherwise", why: `${otherFail.findingId}: ${otherFail.note ?? "failed"}` };
  // "Nothing else failed": a step that threw (or an escape, a leftover) beside a bug check is not the bug alone.
  if (failedSteps.length) return { class: "failed otherwise", why: `a step failed: ${failedSteps[0]!.slice(0, 200)}${bugNew.length || bugKnown.length ? ` (besides ${[...bugNew, ...bugKnown].map((c) => `${c.outcome} ${c.findingId}`).join(", ")})` : ""}` };
  if (verdict === "fail" && !bugNew.length) return { class: "failed otherwise", why: "a step failed (see the detail)" };
  if (bugNew.length) return { class: "new signature", why: bugNew.map((c) => `${c.findingId} observed ${JSON.stringify(c.observed)}`).join("; ") };
  const shortfalls = bugKnown.filter((c) => c.kind !== "differs-from-reference");
  if (shortfalls.length) return { class: "reproduced", why: shortfalls.map(matchedName).join(", ") };
  if (bugKnown.length) return { class: "differs from reference", why: `${bugKnown.map(matchedName).join(", ")}: a differs-from-reference record (what OpenClaw documents, or a reference does otherwise), not a bug` };
  // Held only when every bug check was judged: one never judged could have been the one that shows it.
  const unjudged = bug.filter((id) => !bugJudged.some((c) => c.findingId === id));
  if (unjudged.length) return { class: "could not tell", why: `${bugJudged.length ? `${bugJudged.map((c) => c.findingId).join(", ")} held, but ` : ""}no check judged ${unjudged.join(", ")}` };
  const notAffected = bugJudged.filter((c) => c.notAffected);
  if (notAffected.length) return { class: "not reproduced", why: notAffected.map((c) => c.note ?? `not affected: ${c.findingId}`).join("; ") };
  return { class: "not reproduced" };
}

/** A known finding as an attempt names it: its id, and the variant that matched when its record has several signatures. */
export function matchedName(c: Pick<CheckResult, "findingId" | "variant">): string {
  return c.variant ? `${c.findingId} [variant ${c.variant}]` : c.findingId;
}

/** The classes that show the bug. */
export const reproduced = (c: AttemptClass): boolean => c === "reproduced" || c === "new signature";

/** The premises a scenario can aim off (`--aim-off`): those that say how. */
export function aimablePremises(s: Pick<Scenario, "premises">): string[] {
  return (s.premises ?? []).filter((p) => p.aimOff).map((p) => p.id);
}

/** The premises no self-test can show to be able to fail: those without an aim-off. */
export function notSelfTested(s: Pick<Scenario, "premises">): string[] {
  return (s.premises ?? []).filter((p) => !p.aimOff).map((p) => p.id);
}

/**
 * The premises a self-test aims off, one at a time: every one that can be (`--aim-off`), or the
 * one named (`--premise P-x`). A name that is not an aimable premise of the scenario is refused.
 */
export function aimTargets(s: Pick<Scenario, "name" | "premises">, only?: string): string[] {
  const aimable = aimablePremises(s);
  if (!aimable.length) throw new LabError(`--aim-off: scenario ${s.name} declares no premise it can aim its fault off (Premise.aimOff)`);
  if (only === undefined) return aimable;
  if (aimable.includes(only)) return [only];
  const without = notSelfTested(s).includes(only);
  throw new LabError(
    `--premise ${only}: ${without ? `scenario ${s.name}'s premise ${only} has no aim-off (it is not self-tested)` : `scenario ${s.name} declares no premise ${only}`}; the ones it can aim off: ${aimable.join(", ")}`,
  );
}

/** What one --aim-off attempt says of the scenario's premise check. */
export type AimOffClass = "caught" | "let through" | "could not tell";

/**
 * Under --aim-off: caught when the verdict is unknown and one of the aimed premises was unmet
 * (its last proof); could not tell when the verdict is unknown and no aimed premise was proven
 * at all (the attempt ended before the check ran); anything else is a premise check that let the
 * missed fault through.
 */
export function aimOffOutcome(r: { verdict: Verdict; premises?: PremiseResult[]; detail?: string }, aimed: string[]): { caught: boolean; outcome: AimOffClass; why: string } {
  const last = lastProofs(r.premises);
  const unmet = aimed.map((id) => last.get(id)).filter((p): p is PremiseResult => !!p && !p.met);
  const seen = aimed.map((id) => (last.has(id) ? `${id} ${last.get(id)!.met ? "met" : "unmet"} (observed ${JSON.stringify(last.get(id)!.observed ?? null)})` : `${id} never proven`)).join("; ");
  if (r.verdict === "unknown" && unmet.length) return { caught: true, outcome: "caught", why: `unknown: ${unmet.map((p) => `${p.id} unmet (observed ${JSON.stringify(p.observed ?? null)})`).join("; ")}` };
  if (r.verdict === "unknown" && !aimed.some((id) => last.has(id))) return { caught: false, outcome: "could not tell", why: `unknown before the premise was judged (${(r.detail ?? "no detail").slice(0, 200)}); ${seen}` };
  if (r.verdict === "unknown") return { caught: false, outcome: "let through", why: `unknown for another reason (${(r.detail ?? "no detail").slice(0, 200)}); ${seen}` };
  return { caught: false, outcome: "let through", why: `read ${r.verdict} although the fault was aimed off: ${seen}` };
}

export interface Attempt {
  index: number;
  verdict: Verdict;
  class: AttemptClass;
  /** The known findings among the bug checks, as matchedName() names them (with their variant). */
  matched?: string[];
  /** Which bug checks matched, the new signature, or what failed otherwise. */
  why?: string;
  seconds: number;
  evidence: string;
  detail?: string;
  /** Under --aim-off: the premise aimed off, and whether its check caught the miss. */
  aimOff?: { premise?: string; caught: boolean; outcome: AimOffClass; why: string };
}

export interface ReproTally {
  scenario: string;
  /** Attempts made (fewer than asked when UNTIL stopped at the first reproduction, or the run was cut). */
  ran: number;
  asked: number;
  /** With the registered signature (a shortfall record). */
  reproduced: number;
  /** Matched a differs-from-reference record: what it is, not a reproduction. */
  differs: number;
  newSignature: number;
  failedOtherwise: number;
  notReproduced: number;
  unknown: number;
  /** Attempts that showed the bug (registered or new signature), by index. */
  hits: number[];
  /** Each registered signature that matched, as matchedName() names it, with its count of attempts. */
  matched: Record<string, number>;
  /** Under --aim-off: attempts whose premise check caught the miss. */
  caught?: number;
  /** Under --aim-off: attempts whose premise check let the miss through. */
  letThrough?: number;
  /** Under --aim-off: attempts that ended before any aimed premise was proven. */
  couldNotTell?: number;
  /** Under --aim-off: per premise aimed off, its attempts' outcomes. */
  perPremise?: Record<string, { ran: number; caught: number; letThrough: number; couldNotTell: number }>;
  /** Premises of the scenario with no aim-off: never self-tested. */
  notSelfTested?: string[];
}

export function tally(scenario: string, asked: number, attempts: Attempt[], untested: string[] = []): ReproTally {
  const n = (c: AttemptClass) => attempts.filter((a) => a.class === c).length;
  const perPremise: NonNullable<ReproTally["perPremise"]> = {};
  for (const a of attempts) {
    if (!a.aimOff?.premise) continue;
    const p = (perPremise[a.aimOff.premise] ??= { ran: 0, caught: 0, letThrough: 0, couldNotTell: 0 });
    p.ran++;
    if (a.aimOff.outcome === "caught") p.caught++;
    else if (a.aimOff.outcome === "let through") p.letThrough++;
    else p.couldNotTell++;
  }
  return {
    scenario,
    asked,
    ran: attempts.length,
    reproduced: n("reproduced"),
    differs: n("differs from reference"),
    newSignature: n("new signature"),
    failedOtherwise: n("failed otherwise"),
    notReproduced: n("not reproduced"),
    unknown: n("could not tell"),
    hits: attempts.filter((a) => reproduced(a.class)).map((a) => a.index),
    matched: attempts.flatMap((a) => (a.class === "reproduced" || a.class === "differs from reference" ? (a.matched ?? []) : [])).reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {}),
    ...(attempts.some((a) => a.aimOff)
      ? {
          caught: attempts.filter((a) => a.aimOff?.outcome === "caught").length,
          letThrough: attempts.filter((a) => a.aimOff?.outcome === "let through").length,
          couldNotTell: attempts.filter((a) => a.aimOff?.outcome === "could not tell").length,
          perPremise,
        }
      : {}),
    ...(untested.length ? { notSelfTested: untested } : {}),
  };
}

/** "premise self-test (--aim-off): caught the miss 3/3" */
export function aimOffLine(t: ReproTally): string {
  const caught = t.caught ?? 0;
  const through = t.letThrough ?? 0;
  const untold = t.couldNotTell ?? 0;
  const each = Object.entries(t.perPremise ?? {});
  return (
    `premise self-test (--aim-off): caught the miss ${caught}/${t.ran}` +
    (through ? ` - ${through} attempt(s) NOT caught: a premise check let the missed fault through` : "") +
    (untold ? ` - ${untold} attempt(s) could not tell (ended before the premise was judged: the lab, a member or a step failed first; run again)` : "") +
    // Each premise on its own: the line a reader checks against the scenario's premises.
    (each.length > 1 || t.notSelfTested?.length ? each.map(([id, p]) => `\n  ${id} aimed off: caught ${p.caught}/${p.ran}${p.letThrough ? `, NOT caught ${p.letThrough}` : ""}${p.couldNotTell ? `, could not tell ${p.couldNotTell}` : ""}`).join("") : "") +
    (t.notSelfTested?.length ? `\n  not self-tested (no aim-off): ${t.notSelfTested.join(", ")}` : "")
  );
}

/** Exit code of a premise self-test: 0 every attempt caught the miss, 1 one was let through, 3 none was but some could not tell. */
export function aimOffExitCode(t: Pick<ReproTally, "ran" | "caught" | "letThrough" | "couldNotTell">): number {
  if (t.ran > 0 && t.caught === t.ran) return 0;
  return (t.letThrough ?? 0) > 0 || t.ran === 0 ? 1 : 3;
}

/** "reproduced 7/20 (registered signature), new signature 1, failed otherwise 2, not reproduced 9, could not tell 1" */
export function tallyLine(t: ReproTally): string {
  const parts = [`reproduced ${t.reproduced}/${t.ran} (registered signature)`];
  if (t.differs) parts.push(`differs from reference ${t.differs} (a differs-from-reference record matched: what OpenClaw documents or a reference does otherwise, not a reproduction)`);
  if (t.newSignature) parts.push(`new signature ${t.newSignature}`);
  if (t.failedOtherwise) parts.push(`failed otherwise ${t.failedOtherwise} (not the bug: a step or another check)`);
  parts.push(`not reproduced ${t.notReproduced}`);
  if (t.unknown) parts.push(`could not tell ${t.unknown}`);
  const cut = t.ran < t.asked ? `; ${t.asked - t.ran} of ${t.asked} not attempted` : "";
  // Which signature matched, when a record has variants (a plain id says nothing the count does not).
  const variants = Object.entries(t.matched ?? {}).filter(([k]) => k.includes(" [variant "));
  const which = variants.length ? `; matched ${variants.map(([k, n]) => `${k} x${n}`).join(", ")}` : "";
  return parts.join(", ") + cut + which;
}

/**
 * Exit code of a loop: 0 the bug showed in at least one attempt (registered or new signature);
 * 1 it never did and some attempt was judged (not reproduced, differs from reference, or failed
 * otherwise); 3 no attempt could tell.
 */
export function reproExitCode(t: Pick<ReproTally, "reproduced" | "newSignature" | "notReproduced" | "failedOtherwise" | "differs">): number {
  if (t.reproduced + t.newSignature > 0) return 0;
  return t.notReproduced + t.failedOtherwise + t.differs > 0 ? 1 : 3;
}

export const attemptName = (s: Pick<Scenario, "name">, i: number, n: number): string => `${s.name}~${String(i).padStart(String(n).length, "0")}`;

/**
 * Run `s` up to `n` times (stopping at the first reproduction with `until`), each attempt
 * reported through `onAttempt` as it ends.
 */
export async function reproLoop(
  s: Scenario,
  n: number,
  opts: { spec: TopologySpec; run: Run; until?: boolean; aimOff?: boolean; premise?: string; pool?: LabPool; onAttempt?: (a: Attempt, r: ScenarioResult) => void },
): Promise<ReproTally> {
  // Under --aim-off, N attempts per premise aimed off, one premise at a time.
  const targets: (string | undefined)[] = opts.aimOff ? aimTargets(s, opts.premise) : [undefined];
  const untested = opts.aimOff ? notSelfTested(s) : [];
  const total = n * targets.length;
  const plan = targets.flatMap((premise) => Array.from({ length: n }, () => premise));
  const pool = opts.pool ?? new LabPool(opts.spec, opts.run);
  const instances = plan.map((_, k) => ({ ...s, name: attemptName(s, k + 1, total) }));
  await pool.opts.start(opts.run, opts.spec, instances);
  opts.run.update((r) => void (r.repro = { scenario: s.name, asked: total, until: !!opts.until, ...(opts.aimOff ? { aimOff: true, aimed: targets as string[] } : {}) }));
  const attempts: Attempt[] = [];
  try {
    for (const [k, inst] of instances.entries()) {
      if (s.topology === "own") await pool.close();
      const premise = plan[k];
      const r = await runScenario(inst, pool, { aimOff: premise });
      const c = classify(r.verdict, r.checks, bugChecks(s), r.failedSteps);
      const matched = r.checks.filter((x) => bugChecks(s).includes(x.findingId) && x.outcome === "known-finding").map(matchedName);
      const a: Attempt = { index: k + 1, verdict: r.verdict, class: c.class, why: c.why, matched, seconds: r.seconds, evidence: r.evidence, detail: r.detail, ...(premise ? { aimOff: { premise, ...aimOffOutcome(r, [premise]) } } : {}) };
      attempts.push(a);
      opts.onAttempt?.(a, r);
      if (opts.until && reproduced(a.class)) break;
    }
  } finally {
    await pool.close();
    const t = tally(s.name, total, attempts, untested);
    opts.run.update((r) => {
      r.repro = {
        scenario: s.name,
        asked: total,
        until: !!opts.until,
        ...(opts.aimOff ? { aimOff: true, aimed: targets as string[], caught: t.caught ?? 0, letThrough: t.letThrough ?? 0, couldNotTell: t.couldNotTell ?? 0, ...(untested.length ? { notSelfTested: untested } : {}) } : {}),
        ran: t.ran,
        reproduced: t.reproduced,
        differs: t.differs,
        newSignature: t.newSignature,
        failedOtherwise: t.failedOtherwise,
        notReproduced: t.notReproduced,
        unknown: t.unknown,
        hits: t.hits,
        attempts: attempts.map((a) => ({ index: a.index, verdict: a.verdict, class: a.class, ...(a.why ? { why: a.why } : {}), ...(a.aimOff ? { aimOff: a.aimOff } : {}) })),
      };
      // Stopped at the first reproduction on purpose: the attempts not made are not "not run".
      if (opts.until && t.hits.length) r.plan = r.scenarios.map((x) => x.name);
    });
    endRun(opts.run, pool.opts.labFindings);
  }
  return tally(s.name, total, attempts, untested);
}

/**
 * `repro --json` (lab/commands/json.ts): the loop as its run.json keeps it (the repro field and
 * each attempt's row), with the exit code the command ends with (reproExitCode, or
 * aimOffExitCode under --aim-off, on the stored counts).
 */
export function reproDocument(record: RunRecord, dir: string): z.infer<typeof ReproDocument> {
  const r = record.repro;
  if (!r) throw new Error(`run ${record.id} is no repro loop (its run.json has no repro field)`);
  const n = (k?: number) => k ?? 0;
  const ran = r.ran ?? r.attempts?.length ?? 0;
  const counts = { ran, reproduced: n(r.reproduced), differs: n(r.differs), newSignature: n(r.newSignature), failedOtherwise: n(r.failedOtherwise), notReproduced: n(r.notReproduced), caught: n(r.caught), letThrough: n(r.letThrough) };
  return {
    schemaVersion: SCHEMA_VERSION,
    command: "repro",
    exitCode: r.aimOff ? aimOffExitCode(counts) : reproExitCode(counts),
    run: jsonRun(record, dir),
    repro: {
      scenario: r.scenario,
      asked: r.asked,
      ran,
      until: r.until,
      aimOff: !!r.aimOff,
      classes: { reproduced: counts.reproduced, "differs from reference": counts.differs, "new signature": counts.newSignature, "failed otherwise": counts.failedOtherwise, "not reproduced": counts.notReproduced, "could not tell": n(r.unknown) },
      ...(r.aimOff ? { aimOffOutcomes: { caught: counts.caught, "let through": counts.letThrough, "could not tell": n(r.couldNotTell) }, ...(r.aimed ? { aimed: r.aimed } : {}), ...(r.notSelfTested ? { notSelfTested: r.notSelfTested } : {}) } : {}),
      hits: r.hits ?? [],
      attempts: (r.attempts ?? []).map((a) => {
        const name = attemptName({ name: r.scenario }, a.index, r.asked);
        const row = record.scenarios.find((x) => x.name === name);
        return { index: a.index, name, verdict: a.verdict, class: a.class, ...(a.why ? { why: a.why } : {}), ...(row ? { seconds: row.seconds, ...(row.evidence ? { evidence: row.evidence } : {}) } : {}), ...(a.aimOff ? { aimOff: a.aimOff } : {}) };
      }),
    },
  };
}
