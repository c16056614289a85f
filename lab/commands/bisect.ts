// The first version that broke (after `git bisect`): one scenario on the published OpenClaw
// versions between a GOOD one and a BAD one, halving, each step N attempts of the scenario on one
// version (a fresh lab each, as `make repro` runs them).
//
//   fleetlab bisect SCENARIO --good 2026.9.4 --bad 2026.9.6 [--n 3] [--pre]
//   make bisect NAME=SCENARIO GOOD=2026.9.4 BAD=2026.9.6 [N=3] [PRE=1]
//
// The versions searched are the published ones (`npm view openclaw versions --json`), ordered by
// compareVersions, from GOOD to BAD inclusive: releases only, pre-releases too with --pre.
// A step reads one verdict when its attempts agree (attempts that read "unknown" set aside: the
// lab could not tell there), "could not tell" when they disagree or none is left. GOOD and BAD
// are run first: when they read the same there is nothing to bisect (refused); otherwise the
// search halves between the last version reading GOOD's verdict and the first reading
// otherwise, and answers the first version whose verdict differs from GOOD's. A step that could
// not tell ends the search there, named: a flaky verdict cannot place a boundary.
// Exit: 0 the first differing version found, 1 GOOD and BAD read the same (refused: nothing to
// bisect), 2 bad input, 3 could not tell. Each step is a run folder; .lab/runs/bisect-<id>/
// keeps bisect.json (the versions, every step with its verdicts and run, the answer), rewritten
// after every step.
// The pure parts live here (tested beside this file); the command is bisectCommand in cli.ts.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LabError } from "../core/log.ts";
import type { Verdict } from "../definitions/verdict.ts";
import { compareVersions } from "../findings/versions.ts";
import { BisectDocument, SCHEMA_VERSION } from "./json.ts";

export const RELEASE = /^\d+\.\d+\.\d+$/;
export const PRE_RELEASE = /^\d+\.\d+\.\d+-[0-9A-Za-z.-]+$/;

/** What a step reads when its attempts do not settle on one verdict. */
export const COULD_NOT_TELL = "could not tell";
export type StepReading = Verdict | typeof COULD_NOT_TELL;

/**
 * GOOD and BAD as given, before the published list is asked for: exact versions, releases unless
 * `pre`, GOOD older than BAD; anything else is a LabError (exit 2) naming the fix.
 */
export function checkGoodBad(good: string, bad: string, pre = false): void {
  for (const [name, v] of [["GOOD", good], ["BAD", bad]] as const) {
    if (!RELEASE.test(v) && !PRE_RELEASE.test(v)) throw new LabError(`${name}=${v} is not an exact version (e.g. 2026.9.4): give a published version of openclaw`);
    if (!pre && !RELEASE.test(v)) throw new LabError(`${name}=${v} is a pre-release: add --pre (make bisect PRE=1) to search pre-releases, or give a release`);
  }
  const order = compareVersions(good, bad);
  if (order === 0) throw new LabError(`GOOD and BAD are the same version (${good}): give GOOD an older version than BAD`);
  if (order > 0) throw new LabError(`GOOD=${good} is newer than BAD=${bad}: GOOD is the older version (the one that behaved as before); swap them`);
}

/**
 * The versions to search: the published ones from GOOD to BAD inclusive, oldest first, releases
 * only unless `pre` (then versions with a `-` suffix too). GOOD and BAD must be exact, published
 * and GOOD older than BAD (checkGoodBad); anything else is a LabError (exit 2) naming the fix.
 */
export function bisectVersions(published: string[], good: string, bad: string, pre = false): string[] {
  checkGoodBad(good, bad, pre);
  for (const [name, v] of [["GOOD", good], ["BAD", bad]] as const) {
    if (published.includes(v)) continue;
    const recent = published.filter((x) => RELEASE.test(x)).sort(compareVersions).slice(-5);
    throw new LabError(`${name}=${v}: openclaw@${v} is not published.${recent.length ? ` Recent versions: ${recent.join(", ")}.` : ""}`);
  }
  const keep = (v: string) => RELEASE.test(v) || (pre && PRE_RELEASE.test(v));
  const between = [...new Set(published)].filter((v) => keep(v) && compareVersions(v, good) >= 0 && compareVersions(v, bad) <= 0);
  return between.sort(compareVersions);
}

/** A step's reading from the verdicts of its attempts: unknown set aside, the rest must agree. */
export function stepVerdict(verdicts: Verdict[]): StepReading {
  const told = [...new Set(verdicts.filter((v) => v !== "unknown"))];
  return told.length === 1 ? told[0]! : COULD_NOT_TELL;
}

/** One attempt of a step: its verdict and where its evidence is. */
export interface StepAttempt {
  verdict: Verdict;
  evidence?: string;
}

/** What running one step gives back: its attempts, its run id, and why it could not run at all. */
export interface StepRun {
  attempts: StepAttempt[];
  run?: string;
  error?: string;
}

export const BisectStep = z.object({
  version: z.string(),
  /** The verdict of each attempt, in order. */
  verdicts: z.array(z.string()),
  /** The step's reading (stepVerdict). */
  reads: z.string(),
  /** The run folder of this step (one per step, under .lab/runs). */
  run: z.string().optional(),
  /** Each attempt's evidence folder, relative to its run folder. */
  evidence: z.array(z.string()),
  /** Why the step could not run (its set-up failed, or the lab broke before an attempt ended). */
  error: z.string().optional(),
});
export type BisectStep = z.infer<typeof BisectStep>;

export const BisectAnswer = z.discriminatedUnion("result", [
  /** The first version whose verdict differs from GOOD's. */
  z.object({ result: z.literal("found"), good: z.string(), goodReads: z.string(), first: z.string(), firstReads: z.string(), lastGood: z.string() }),
  /** GOOD and BAD read the same: nothing to bisect. */
  z.object({ result: z.literal("same"), reads: z.string() }),
  /** A step's attempts disagreed, all read unknown, or it could not run. */
  z.object({ result: z.literal(COULD_NOT_TELL), at: z.string(), verdicts: z.array(z.string()), error: z.string().optional() }),
]);
export type BisectAnswer = z.infer<typeof BisectAnswer>;

export interface BisectResult {
  answer: BisectAnswer;
  /** Every step run, in the order it ran. */
  steps: BisectStep[];
}

/** Steps a search over `count` versions takes at most: GOOD, BAD, then halving the versions between. */
export function maxSteps(count: number): number {
  return count < 2 ? count : 2 + Math.ceil(Math.log2(count - 1));
}

/**
 * The search: GOOD (versions[0]) and BAD (the last) first, then halving. `runStep` runs one step
 * (N attempts of the scenario on that version); `onStep` hears each step as it ends. Stops at the
 * first step that could not tell (naming it), or when GOOD and BAD read the same.
 */
export async function bisect(versions: string[], runStep: (version: string) => Promise<StepRun>, onStep?: (s: BisectStep) => void): Promise<BisectResult> {
  if (versions.length < 2) throw new LabError(`bisect needs at least two versions (GOOD older than BAD), got ${versions.length}: ${versions.join(", ") || "none"}`);
  const steps: BisectStep[] = [];
  const step = async (i: number): Promise<BisectStep> => {
    const version = versions[i]!;
    const r = await runStep(version);
    const verdicts = r.attempts.map((a) => a.verdict);
    const s: BisectStep = {
      version,
      verdicts,
      // A step that broke off (its set-up failed, the lab broke) has fewer attempts than asked: it cannot tell.
      reads: r.error ? COULD_NOT_TELL : stepVerdict(verdicts),
      ...(r.run ? { run: r.run } : {}),
      evidence: r.attempts.map((a) => a.evidence ?? ""),
      ...(r.error ? { error: r.error } : {}),
    };
    steps.push(s);
    onStep?.(s);
    return s;
  };
  const untold = (s: BisectStep): BisectResult => ({ answer: { result: COULD_NOT_TELL, at: s.version, verdicts: s.verdicts, ...(s.error ? { error: s.error } : {}) }, steps });
  let lo = 0;
  let hi = versions.length - 1;
  const good = await step(lo);
  if (good.reads === COULD_NOT_TELL) return untold(good);
  const bad = await step(hi);
  if (bad.reads === COULD_NOT_TELL) return untold(bad);
  if (bad.reads === good.reads) return { answer: { result: "same", reads: good.reads }, steps };
  let first = bad;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const s = await step(mid);
    if (s.reads === COULD_NOT_TELL) return untold(s);
    if (s.reads === good.reads) lo = mid;
    else (hi = mid), (first = s);
  }
  return { answer: { result: "found", good: good.version, goodReads: good.reads, first: first.version, firstReads: first.reads, lastGood: versions[lo]! }, steps };
}

/** "2026.9.5  known-finding known-finding known-finding  -> known-finding   run <id>" */
export function stepLine(s: BisectStep, width = s.version.length): string {
  const why = s.error ? `  (${s.error.split("\n")[0]!.slice(0, 200)})` : "";
  return `${s.version.padEnd(width)}  ${s.verdicts.join(" ") || "(no attempt ended)"}  -> ${s.reads}${s.run ? `   run ${s.run}` : ""}${why}`;
}

/** The answer in one line. */
export function answerLine(a: BisectAnswer, q: { scenario: string; good: string; bad: string }): string {
  if (a.result === "found") return `first version that differs from GOOD (${a.good}: ${a.goodReads}): ${a.first} (${a.firstReads})`;
  if (a.result === "same") return `GOOD ${q.good} and BAD ${q.bad} both read ${a.reads}: nothing to bisect (refused); give a BAD that reads otherwise, or a scenario that tells them apart`;
  const why = a.error
    ? `could not run (${a.error.split("\n")[0]!.slice(0, 200)})`
    : a.verdicts.length && a.verdicts.every((v) => v === "unknown")
      ? "read unknown in every attempt (the lab could not tell)"
      : a.verdicts.length
        ? `has attempts that disagree (${a.verdicts.join(" ")})`
        : "has no attempt that ended";
  return `could not tell: the step on ${a.at} ${why}; see its run, then try that version alone (make repro NAME=${q.scenario} OPENCLAW_VERSION=${a.at}) or bisect again with a larger N`;
}

/** The make command that runs the same bisect again (same seed, nodes and topology). */
export function bisectAgain(q: { scenario: string; good: string; bad: string; n: number; pre: boolean; seed: number; nodes?: string; topology?: string }): string {
  const quote = (v: string) => (/^[\w.\/:=-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  const extra = [q.nodes ? ` NODES=${quote(q.nodes)}` : "", q.topology ? ` TOPOLOGY=${quote(q.topology)}` : ""].join("");
  return `make bisect NAME=${q.scenario} GOOD=${q.good} BAD=${q.bad} N=${q.n}${q.pre ? " PRE=1" : ""} SEED=${q.seed}${extra}`;
}

/** Exit code of a bisect: 0 the first differing version found, 1 GOOD and BAD read the same, 3 could not tell. */
export function bisectExitCode(a: BisectAnswer): number {
  return a.result === "found" ? 0 : a.result === "same" ? 1 : 3;
}

export const BisectRecord = z.object({
  id: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  scenario: z.string(),
  good: z.string(),
  bad: z.string(),
  /** Attempts per step. */
  n: z.number(),
  pre: z.boolean(),
  seed: z.number().optional(),
  /** The versions searched, oldest first, GOOD and BAD included. */
  versions: z.array(z.string()),
  steps: z.array(BisectStep),
  answer: BisectAnswer.optional(),
});
export type BisectRecord = z.infer<typeof BisectRecord>;

/** Write bisect.json (validated) into the bisect folder; its path. */
export function writeBisect(dir: string, rec: BisectRecord): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "bisect.json");
  fs.writeFileSync(file, JSON.stringify(BisectRecord.parse(rec), null, 2) + "\n");
  return file;
}

/** `bisect --json` (lab/commands/json.ts): bisect.json as it stands, with the exit code the command ends with (3 while no answer). */
export function bisectDocument(rec: BisectRecord, dir: string): z.infer<typeof BisectDocument> {
  return {
    schemaVersion: SCHEMA_VERSION,
    command: "bisect",
    exitCode: rec.answer ? bisectExitCode(rec.answer) : 3,
    ...BisectDocument.pick({ id: true, startedAt: true, endedAt: true, scenario: true, good: true, bad: true, n: true, pre: true, seed: true, versions: true, steps: true, answer: true }).parse(rec),
    dir,
  };
}
