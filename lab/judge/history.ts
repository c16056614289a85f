// One history per scenario run (after Jepsen's history and its checkers): what the run's phases
// recorded, before any of it was judged: the body's raw checks (holds or not, with the observed
// signature), what the body observed for its pure checks (ctx.observe), the premises' proofs, the
// evidence checks' raw results, the notes of its phases and the machine's state. judgeHistory
// turns a history into the verdict with today's checks and finding records; the runner judges
// every scenario through it and writes the history beside the verdict (history.json), so
// `fleetlab judge <run>` (lab/commands/judge.ts) judges a stored run again the same way: nothing
// is run again, and a verdict differs only where a record or a check changed.
import { isDeepStrictEqual } from "node:util";
import { judge, unexercised, type CheckResult, type FindingRecord } from "../findings/findings.ts";
import { judgeScenario, type Note, type PremiseResult } from "./judging.ts";
import type { Verdict } from "../definitions/verdict.ts";
import type { RunRecord } from "../evidence/run.ts";

/** The history file in each scenario's evidence folder. */
export const HISTORY_FILE = "history.json";
/** 2: it records what its scenario declared (`declared`); a format-1 history is still read (declaredThen). */
export const HISTORY_FORMAT = 2;

/** One expectation as recorded, before it is judged against the finding records. */
export interface RawCheck {
  id: string;
  expectation: string;
  holds: boolean;
  observed?: unknown;
  kind?: FindingRecord["kind"];
}

/** An evidence check's expectation (lab/checks), with the check that made it. */
export interface RawEvidenceCheck extends RawCheck {
  check: string;
}

/** One premise's proof as recorded (ctx.premise, or a premise's judge over the observations). */
export interface RawPremise {
  id: string;
  met: boolean;
  observed?: unknown;
}

/** What a scenario's body recorded for its pure checks (ctx.observe): JSON values by name. */
export type Observations = Record<string, unknown>;

export interface ScenarioHistory {
  format: typeof HISTORY_FORMAT | 1;
  scenario: string;
  /** The OpenClaw version (or build) it ran on: records are matched on it. */
  version: string;
  /** It ended before its body (n/a, a lab that could not come up): this verdict and why. */
  notRun?: { verdict: Verdict; why: string };
  /** What went wrong while it ran (its body's end, escapes, failed undo, evidence checks that could not tell), in order. */
  problems: Note[];
  /** Its body's own checks (ctx.check), in order. */
  body: RawCheck[];
  /** What its body observed (ctx.observe), for the checks and premises it declares as functions. */
  observations: Observations;
  /** Its declared checks (Scenario.checks) over the observations, as they read when it ran: a re-judge says which changed. */
  derived: RawCheck[];
  /** Its premises' proofs (ctx.premise), in order. */
  premises: RawPremise[];
  /** The evidence checks over its window, raw. */
  evidence: RawEvidenceCheck[];
  /** What came after its checks (the lab's state after it), in order. */
  afterwards: Note[];
  bodyReturned: boolean;
  /** The declared check or premise at which the body stopped (ctx.proceed read false): what came after it was not run. */
  stopped?: string;
  /** The machine was busier than the lab plans for while its body ran (lab/core/pace.ts): why. */
  busy?: string;
  /** The run was interrupted while it ran. */
  interrupted?: boolean;
  /** A stall of the lab's own process inside its window (lab/core/stalls.ts), said with the verdict. */
  stall?: string;
  /**
   * The checks and premises its scenario declared when it ran. One declared since has nothing to
   * read in this history: it is not judged (said), where one declared then with nothing to read is
   * unknown. A history kept before this was recorded counts what it judged then (its derived and
   * raw checks; the premises that read something) as declared then.
   */
  declared?: { checks: string[]; premises: string[] };
  /** The finding records it was judged against when it ran (its own, then the lab-wide ones). */
  registry: { own: FindingRecord[]; labWide: FindingRecord[] };
}

/** What judging needs of a scenario: its records, its declared premises and its declared checks. */
export interface JudgedScenario {
  name: string;
  findings?: FindingRecord[];
  premises?: { id: string; what: string; judge?(h: never): { met: boolean; observed?: unknown } | undefined }[];
  checks?: CheckDef[];
}

/**
 * A check as a pure function of what the body observed (Scenario.checks): undefined when the
 * observations it reads were not recorded (the body ended before them). Unit-tested on recorded
 * histories, with no engine and no network; `fleetlab judge` runs it again over a stored run.
 */
export interface CheckDef<H = never> {
  id: string;
  /** What a user needs; a function when it names what the run used (a count, a node). */
  expectation: string | ((h: H) => string);
  kind?: FindingRecord["kind"];
  /**
   * true: the body observes what it reads only on some paths (a branch of the scenario, a version
   * that has the feature), and not judging it on the others is no problem, as a ctx.check in that
   * branch would not have been called. Otherwise nothing to read once the body returned is unknown.
   */
  optional?: true;
  judge(h: H): { holds: boolean; observed?: unknown } | undefined;
}

export interface HistoryJudged {
  verdict: Verdict;
  detail?: string;
  checks: CheckResult[];
  premises: PremiseResult[];
  /** Its declared checks over the observations as they read now. */
  derived: RawCheck[];
  unexercised: FindingRecord[];
  failedSteps: string[];
}

/** A history to start with: nothing recorded yet. */
export function emptyHistory(scenario: string, version: string, registry: ScenarioHistory["registry"]): ScenarioHistory {
  return { format: HISTORY_FORMAT, scenario, version, problems: [], body: [], observations: {}, derived: [], premises: [], evidence: [], afterwards: [], bodyReturned: false, registry };
}

/** A value as a history keeps it (JSON): what a check reads when it runs is what it reads when judged again. */
export function asRecorded<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** One expectation as a history keeps it: JSON, with no empty observed or kind (ctx.check, an evidence check, a declared check). */
export function rawCheck(c: RawCheck): RawCheck {
  return asRecorded({ id: c.id, expectation: c.expectation, holds: c.holds, ...(c.observed !== undefined ? { observed: c.observed } : {}), ...(c.kind ? { kind: c.kind } : {}) });
}

/**
 * The declared checks over the observations: each one's raw expectation, and a note for each that
 * could not judge (it threw: the lab's own check; or it had nothing to read though the body
 * returned): the lab could not tell, never a pass.
 */
export function deriveChecks(defs: CheckDef<never>[], observations: object, bodyReturned: boolean, recordedRaw: ReadonlySet<string> = new Set(), declaredThen?: ReadonlySet<string>): { checks: RawCheck[]; notes: Note[]; since: string[] } {
  const checks: RawCheck[] = [];
  const notes: Note[] = [];
  const since: string[] = [];
  const h = observations as never;
  for (const d of defs) {
    try {
      const r = d.judge(h);
      if (r === undefined) {
        // A run recorded before this check was declared kept it raw (ctx.check): judged from there;
        // or it did not have it at all: nothing to judge, and no sign of anything.
        if (bodyReturned && !d.optional && !recordedRaw.has(d.id)) {
          if (declaredThen && !declaredThen.has(d.id)) since.push(d.id);
          else notes.push({ verdict: "unknown", text: `check ${d.id} had nothing to judge: the body returned without observing what it reads` });
        }
        continue;
      }
      const expectation = typeof d.expectation === "function" ? d.expectation(h) : d.expectation;
      checks.push(rawCheck({ id: d.id, expectation, holds: r.holds, observed: r.observed, kind: d.kind }));
    } catch (err) {
      notes.push({ verdict: "unknown", text: `check ${d.id} could not judge what was observed (the lab's own check): ${(err as Error).message}` });
    }
  }
  return { checks, notes, since };
}

/**
 * What a history's scenario declared when it ran (ScenarioHistory.declared); for a format-1
 * history (kept before that was recorded), what it judged then (its derived and raw checks, the
 * premises that read something). Undefined: everything declared now counts as declared then.
 */
export function declaredThen(h: ScenarioHistory, premisesRead: string[]): { checks: Set<string>; premises: Set<string> } | undefined {
  if (h.declared) return { checks: new Set(h.declared.checks), premises: new Set(h.declared.premises) };
  if (h.format !== 1) return undefined;
  return { checks: new Set([...h.derived.map((c) => c.id), ...h.body.map((c) => c.id)]), premises: new Set([...h.premises.map((p) => p.id), ...premisesRead]) };
}

/** The declared premises that are functions of the observations, over them (as deriveChecks). */
export function derivePremises(defs: JudgedScenario["premises"], observations: object): { premises: RawPremise[]; notes: Note[] } {
  const premises: RawPremise[] = [];
  const notes: Note[] = [];
  for (const d of defs ?? []) {
    if (!d.judge) continue;
    try {
      const r = d.judge(observations as never);
      if (r) premises.push({ id: d.id, met: r.met, ...(r.observed !== undefined ? { observed: asRecorded(r.observed) } : {}) });
    } catch (err) {
      notes.push({ verdict: "unknown", text: `premise ${d.id} could not be judged from what was observed (the lab's own check): ${(err as Error).message}` });
    }
  }
  return { premises, notes };
}

/** An evidence check's result as the runner reads it: a lab-wide record's absence from one window is no sign of a fix. */
export function evidenceResult(r: CheckResult, labWide: FindingRecord[]): CheckResult {
  r.source = "evidence";
  if (labWide.some((f) => f.id === r.findingId)) {
    r.scope = "lab";
    // A lab-wide record shows where the frames that carry it pass (drift in a node-hosted MCP call
    // shows only in scenarios that make one): absent from one scenario's window is no sign of a
    // fix. It is judged for the whole run instead (endRun: not seen in any scenario of a full run
    // -> "fixed?" there).
    if (r.outcome === "fixed?") Object.assign(r, { outcome: "pass", registered: undefined, note: `lab-wide record not seen in this scenario's window` });
  }
  return r;
}

/**
 * The verdict of one scenario run from its history, with the scenario's records, premises and
 * checks as they are now (`s`) and the lab-wide records: one rule for the run and for every
 * judging again. The order is lab/judge/judging.ts's; then a starved machine turns a fail or a
 * fixed? into unknown, an interrupted run a fail, and a stall is said.
 */
export function judgeHistory(h: ScenarioHistory, s: JudgedScenario, labWide: FindingRecord[]): HistoryJudged {
  const own = s.findings ?? [];
  const at = (c: RawCheck, registry: FindingRecord[]) => judge(registry, { ...c, scenario: h.scenario, version: h.version });
  // A body that stopped at a step (ctx.proceed) did not run to its end: the checks and premises
  // after the step were not reached, as after a step that threw.
  const complete = h.bodyReturned && !h.stopped;
  const fromObserved = derivePremises(s.premises, h.observations);
  const then = declaredThen(h, fromObserved.premises.map((p) => p.id));
  const derived = s.checks ? deriveChecks(s.checks, h.observations, complete, new Set(h.body.map((c) => c.id)), then?.checks) : { checks: h.derived, notes: [], since: [] };
  const stop = h.stopped && h.bodyReturned ? stoppedNote(h.stopped, derived.checks, [...h.premises, ...fromObserved.premises]) : undefined;
  const checks = [...h.body.map((c) => at(c, own)), ...derived.checks.map((c) => at(c, own)), ...h.evidence.map((c) => evidenceResult(at(c, [...own, ...labWide]), labWide))];
  // A premise declared after the run has nothing in its history to be proven by: not judged, and said.
  const premisesSince = then ? (s.premises ?? []).filter((p) => !then.premises.has(p.id)).map((p) => p.id) : [];
  const declared = (s.premises ?? []).filter((p) => !premisesSince.includes(p.id)).map((p) => ({ id: p.id, what: p.what }));
  const since = [...derived.since, ...premisesSince];
  const sinceNote: Note[] = since.length ? [{ verdict: "pass", text: `declared after this run was recorded, so not judged: ${since.join(", ")}` }] : [];
  const premises = [...h.premises, ...fromObserved.premises].map((p): PremiseResult => {
    const d = declared.find((x) => x.id === p.id);
    return { id: p.id, what: d ? d.what : "not declared in the scenario's premises", met: d ? p.met : false, observed: p.observed };
  });
  const judged = judgeScenario({
    notRun: h.notRun,
    problems: [...h.problems, ...derived.notes, ...fromObserved.notes, ...(stop ? [stop] : []), ...sinceNote],
    checks,
    afterwards: h.afterwards,
    findings: own,
    bodyReturned: complete,
    declared,
    premises,
  });
  let { verdict, detail } = judged;
  // A starved machine gives unknown (or another attempt), never a fail: a fail judged while the
  // machine was busier than the lab plans for (a bound that is the expectation held against a
  // starved OpenClaw, a deadline of the lab's own) is not charged to OpenClaw (lab/core/pace.ts).
  // The same for a fixed?: a registered finding that did not show on a starved machine may only
  // not have come in time (seen: capacity's turn B never met the full slot within its window under
  // load 12-20, and the lab read fixed?). "The bug may be fixed" is not claimed from it.
  if ((verdict === "fail" || verdict === "fixed?") && h.busy) {
    const what = verdict === "fail" ? "its fail is not charged to OpenClaw" : "its fixed? (a registered finding that did not show) is not claimed";
    verdict = "unknown";
    detail = `the lab could not tell: ${h.busy} while it ran, so ${what}: ${detail ?? ""}`;
  }
  // A fail once the run was interrupted is the clean-up's doing as likely as OpenClaw's (seen: a
  // Ctrl-C during a bring-up killed the gateway under 'openclaw devices approve', exit 137, and the
  // lab read "OpenClaw did not come up": FAIL). The lab took its containers away: unknown.
  if (verdict === "fail" && h.interrupted) {
    verdict = "unknown";
    detail = `the lab could not tell: the run was interrupted (a signal; the lab was taking its containers down) while this scenario ran, so its fail is not charged to OpenClaw: ${detail ?? ""}`;
  }
  if (h.stall) detail = detail ? `${detail}; also ${h.stall}` : h.stall;
  return { verdict, detail, checks, premises: h.notRun ? [] : premises, derived: derived.checks, unexercised: h.notRun ? [] : complete ? unexercised(own, checks) : [], failedSteps: judged.failedSteps };
}

/**
 * The body stopped at `id` because it did not hold then. If, judged now, it holds (its check was
 * corrected) or no longer reads anything, nothing decides the run: what came after the step was
 * never run, so the lab cannot tell (never a pass).
 */
export function stoppedNote(id: string, checks: RawCheck[], premises: RawPremise[]): Note | undefined {
  const c = checks.find((x) => x.id === id);
  const p = [...premises].reverse().find((x) => x.id === id);
  const stillShort = c ? !c.holds : p ? !p.met : false;
  return stillShort ? undefined : { verdict: "unknown", text: `the lab could not tell: the body stopped at ${id}, which ${c || p ? "holds" : "reads nothing"} as judged now, so what came after it was never run` };
}

/**
 * One judged scenario into its run's record (run.json): its checks that did not pass as the run's
 * findings, the records it exercised (a lab-wide one only where it was seen, not where it merely
 * held), its own records no check judged. One rule for a run (lab/run/runner.ts record()) and a
 * judging again (lab/commands/judge.ts).
 */
export function addJudged(rec: RunRecord, scenario: string, j: Pick<HistoryJudged, "checks" | "unexercised">): void {
  const shown = j.checks.filter((c) => c.outcome !== "pass");
  if (shown.length) (rec.findings ??= []).push(...shown);
  const seen = j.checks.filter((c) => !(c.scope === "lab" && c.outcome === "pass"));
  if (seen.length) rec.exercised = [...new Set([...(rec.exercised ?? []), ...seen.map((c) => c.findingId)])].sort();
  if (j.unexercised.length) (rec.unexercised ??= []).push(...j.unexercised.map((f) => ({ id: f.id, scenario })));
}

/**
 * The end of a run's record: the lab-wide records no scenario of it exercised, added to its
 * unexercised list once each (none for a run that ran nothing). Returns the records added.
 */
export function addLabWideUnexercised(rec: RunRecord, labWide: FindingRecord[]): FindingRecord[] {
  if (!rec.scenarios.length) return [];
  const exercised = new Set(rec.exercised ?? []);
  const known = new Set((rec.unexercised ?? []).filter((u) => !u.scenario).map((u) => u.id));
  const add = labWide.filter((f) => !exercised.has(f.id) && !known.has(f.id));
  if (add.length) (rec.unexercised ??= []).push(...add.map((f) => ({ id: f.id })));
  return add;
}

/** The detail of a scenario that took more than one attempt (lab/run/runner.ts runScenarioAttempts). */
export function attemptsDetail(attempt: number, of: number, earlier: { verdict: string; detail?: string }[], detail: string | undefined): string {
  return `attempt ${attempt} of ${of}: ${earlier.map((a, i) => `attempt ${i + 1} read ${a.verdict} (${(a.detail ?? "").split("\n")[0].slice(0, 300)})`).join("; ")}${detail ? `; ${detail}` : ""}`;
}

/**
 * Why a check reads differently now than when the run judged it: its record (added, removed,
 * changed) or its check (a declared check reads the observations differently now).
 */
export function whyChanged(h: ScenarioHistory, now: HistoryJudged, s: JudgedScenario, labWide: FindingRecord[], recorded?: { verdict: Verdict; detail?: string; premises?: { id: string; met: boolean }[] }): string[] {
  // Then: the records it was judged against and its declared checks as they read then (h.derived);
  // the premises as declared today on both sides, so only a record or a check tells them apart.
  const before = judgeHistory(h, { name: h.scenario, findings: h.registry.own, premises: s.premises, checks: undefined }, h.registry.labWide);
  const out: string[] = [];
  const key = (c: CheckResult) => `${c.source ?? "body"}:${c.findingId}`;
  const thenBy = new Map(before.checks.map((c) => [key(c), c]));
  const nowBy = new Map(now.checks.map((c) => [key(c), c]));
  const recordOf = (id: string, reg: { own: FindingRecord[]; labWide: FindingRecord[] }) => [...reg.own, ...reg.labWide].find((f) => f.id === id);
  const today = { own: s.findings ?? [], labWide };
  for (const id of new Set([...thenBy.keys(), ...nowBy.keys()])) {
    const a = thenBy.get(id);
    const b = nowBy.get(id);
    const fid = (a ?? b)!.findingId;
    if (a && b && a.outcome === b.outcome && isDeepStrictEqual(a.observed, b.observed)) continue;
    const r0 = recordOf(fid, h.registry);
    const r1 = recordOf(fid, today);
    const record = !r0 && r1 ? `record ${fid} added` : r0 && !r1 ? `record ${fid} removed` : r0 && r1 && !isDeepStrictEqual(r0, r1) ? `record ${fid} changed` : undefined;
    const d0 = h.derived.find((c) => c.id === fid);
    const d1 = now.derived.find((c) => c.id === fid);
    const check = !isDeepStrictEqual(d0, d1) ? (d0 && d1 ? `check ${fid} reads the history differently now (holds ${d0.holds} -> ${d1.holds})` : d1 ? `check ${fid} added` : `check ${fid} removed`) : undefined;
    out.push(`${fid}: ${a?.outcome ?? "not judged"} -> ${b?.outcome ?? "not judged"} (${[record, check].filter(Boolean).join("; ") || "judged again"})`);
  }
  // A premise that reads the history differently now (its judge was corrected), against the
  // premises as the run recorded them (run.json's row).
  for (const p of now.premises) {
    const was = recorded?.premises?.find((x) => x.id === p.id);
    if (was && was.met !== p.met) out.push(`premise ${p.id}: ${was.met ? "met" : "not met"} -> ${p.met ? "met" : "not met"} (its judge reads the history differently now)`);
  }
  // No check reads differently but the verdict or its detail does: what the lab said around the
  // checks changed (a declared check with nothing to read, a premise judged differently).
  const then = recorded ?? before;
  if (!out.length && (then.verdict !== now.verdict || then.detail !== now.detail)) out.push(`no check's outcome changed; the lab's own notes did: before "${then.detail ?? ""}", now "${now.detail ?? ""}"`);
  return out;
}
