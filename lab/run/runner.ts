// Runs the scenarios it is handed (after Jepsen: the test map is passed in; the framework
// never imports a scenario): resolves names, brings up labs (one shared standard lab for
// "shared" scenarios, a fresh one for each "own"), runs each to its deadline (a cancelled one
// is settled before anything is healed), judges it against the findings it registers, runs
// the evidence checks (lab/checks) over its window, checks after every verdict that the shared
// lab stayed healthy (replacing it when not) and that every torn-down lab left nothing behind,
// and records verdicts in run.json. A scenario's run is a sequence of named phases, each timed
// into run.json (lab/evidence/phases.ts), that gather what it observed; judging is one call
// (lab/judge/judging.ts) over the verdict rule of lab/definitions/verdict.ts (Judgement). How labs come up is the
// pool's (tests hand in fakes). The CLI and the vitest suite both call it.
import os from "node:os";
import fs from "node:fs";
import { finished } from "node:stream/promises";
import { writeJson } from "../evidence/write.ts";
import { sealFolder } from "../evidence/redact.ts";
import { machineBusyIn, monitor, pace, paceLine, pacedTimer, type PaceMonitor } from "../core/pace.ts";
import { claimCpuShare, cpuSecondsOf } from "../core/cpu-share.ts";
import { admit, SCENARIO_ATTEMPTS, START_ATTEMPTS, starvedStart } from "./admission.ts";
import { junitXml } from "../evidence/junit.ts";
import { writeReportHtml, type ReportWritten } from "../evidence/report-html.ts";
import path from "node:path";
import { interrupted as interruptedRun, pruneDeadRuns } from "../engine/cleanup.ts";
import { engineCgroups, engineTrouble, isEngineError, requireEngine } from "../engine/docker.ts";
import type { PhaseRow, Run, RunRecord, ScenarioRow } from "../evidence/run.ts";
import { LabError, info, step } from "../core/log.ts";
import type { Scenario, ScenarioContext } from "../scenario.ts";
import { Lab, type LabUpOptions } from "../topology/lab.ts";
import { mergeSpec, nodeAliases, parseTopology, type TopologySpec } from "../definitions/spec.ts";
import { lanesFromEnv, selectNames, unmatchedText } from "../core/settings.ts";
import { judge, type CheckResult, type FindingRecord } from "../findings/findings.ts";
import type { Note, PremiseResult } from "../judge/judging.ts";
import { HISTORY_FILE, addJudged, addLabWideUnexercised, asRecorded, deriveChecks, derivePremises, emptyHistory, evidenceResult, judgeHistory, attemptsDetail, rawCheck, type CheckDef, type ScenarioHistory } from "../judge/history.ts";
import { Phases, STOP } from "../evidence/phases.ts";
import { evidenceChecks } from "../checks/index.ts";
import { labFindings } from "../checks/findings.ts";
import type { EvidenceCheck, ScenarioWindow } from "../checks/types.ts";
import { LabInfraError, SystemUnderTestError, type Verdict } from "../definitions/verdict.ts";
import { DeadlineExceeded, sleep } from "../core/wait.ts";
import { isProtocolNeed, probeCapabilities, unmet, type Capabilities } from "../engine/capabilities.ts";
import { labConfigs } from "../topology/lab.ts";
import { ensureImages } from "../engine/images.ts";
import { loadCosts, planShards, type Costs } from "./shard.ts";
import { StallWatch, causeText, stallNote, stallSummary } from "../core/stalls.ts";
import { WaitLedger, bodyWaits, ownWorkS, withWaitLedger, type BodyWaits } from "../core/waits.ts";
import { describe as describeEscape, isWriteFailure, raise, withEscapes, type Escape } from "../core/escapes.ts";

export interface ScenarioResult {
  name: string;
  verdict: Verdict;
  seconds: number;
  detail?: string;
  evidence: string;
  checks: CheckResult[];
  startedAt: string;
  endedAt: string;
  /** Its phases as they ran, timed (needs, lab, protocol, body, drain, evidence checks, lab after). */
  phases?: PhaseRow[];
  /** What its body proved of its premises (ctx.premise). */
  premises?: PremiseResult[];
  /** Why the machine was busier than the lab plans for while it ran, when it was (lab/core/pace.ts). */
  machineBusy?: string;
  /** Its body did not settle after it was cancelled (never run again in this process). */
  stray?: boolean;
  /** What failed besides its checks (lab/judge/judging.ts Judged.failedSteps). */
  failedSteps?: string[];
  /** Earlier attempts (runScenarioAttempts), and failed starts of its lab (LabPool). */
  attempts?: { verdict: Verdict; seconds: number; detail?: string; evidence?: string }[];
  startAttempts?: StartAttempt[];
}

/** The scenarios named or matched by a pattern (all of `known` when none are), in the order they run; bad names fail listing the known ones, a pattern that matches none fails naming it. */
export function resolveScenarios(names: string[], known: Scenario[]): Scenario[] {
  if (!names.length) return runOrder(known);
  const byName = new Map(known.map((s) => [s.name, s]));
  // A pattern ('mcp-*') selects every scenario it matches (lab/core/settings.ts selectNames).
  const picked = selectNames(names, [...byName.keys()]);
  if (picked.unknown.length) {
    throw new LabError(`unknown scenario${picked.unknown.length > 1 ? "s" : ""}: ${picked.unknown.join(", ")}. Known scenarios: ${known.map((s) => s.name).join(", ")}${picked.unmatched.length ? `; and ${unmatchedText(picked.unmatched)}` : ""}`);
  }
  if (picked.unmatched.length) throw new LabError(unmatchedText(picked.unmatched));
  return runOrder(picked.names.map((n) => byName.get(n)!));
}

/** Every shared-lab scenario first (on one lab), then each one that needs a lab of its own; within each, by declared order, then name. */
export function runOrder(list: Scenario[]): Scenario[] {
  const sorted = [...list].sort((a, b) => (a.order ?? 50) - (b.order ?? 50) || a.name.localeCompare(b.name));
  return [...sorted.filter((s) => s.topology === "shared"), ...sorted.filter((s) => s.topology === "own")];
}

/** How the pool brings labs up and what runs after each scenario; the defaults are the real ones (tests hand in fakes). */
export interface PoolOptions {
  /** Bring a lab up (default Lab.up). */
  up?: (spec: TopologySpec, run: Run, name: string, opts?: LabUpOptions) => Promise<Lab>;
  /** The checks run over every scenario's evidence (default lab/checks). */
  evidenceChecks?: EvidenceCheck[];
  /** Lab-wide finding records the evidence checks are judged against besides the scenario's (default lab/checks/findings.ts). */
  labFindings?: FindingRecord[];
  /** How long a scenario cancelled at its deadline gets to settle (default 30 s). */
  settleMs?: number;
  /** How long one evidence check may take (default 120 s). */
  evidenceCheckMs?: number;
  /** The start of a run (default startRun: an engine that answers, the plan, dead runs pruned). */
  start?: (run: Run, spec: TopologySpec, plan: Scenario[]) => Promise<void>;
  /** What a version's CLI offers, before any lab is up (default: its images, probed once; lab/engine/capabilities.ts). */
  capabilities?: (spec: TopologySpec) => Promise<Capabilities>;
  /** Asked when something failed: why the engine cannot be trusted now, if so (default: a ping, lab/engine/docker.ts). */
  engineTrouble?: () => Promise<string | undefined>;
  /** How often engineTrouble is asked while a scenario's body runs (default ENGINE_WATCH_MS). */
  engineWatchMs?: number;
  /** Wait for the machine's headroom before each lab (lab/run/admission.ts; default true unless `up` is handed in). */
  admit?: boolean;
  /** The machine's pace over time (default this process's monitor, lab/core/pace.ts; tests hand in one with readings written in). */
  paceMonitor?: () => PaceMonitor;
  /** Whether a signal has started this process's clean-up (default lab/engine/cleanup.ts interrupted; tests hand in their own). */
  interrupted?: () => boolean;
}

let bringingUp: Promise<unknown> = Promise.resolve();
/** Run `fn` (a lab's admission and bring-up) after every bring-up started before it in this process has ended. */
function bringUpInTurn<T>(fn: () => Promise<T>): Promise<T> {
  const mine = bringingUp.then(fn, fn);
  bringingUp = mine.catch(() => {});
  return mine;
}

export interface StartAttempt {
  lab: string;
  attempt: number;
  reason: string;
  evidence?: string;
}

/** Holds the shared standard lab across scenarios (and across vitest tests), and brings up own labs. */
export class LabPool {
  #shared: Lab | undefined;
  #sharedCount = 0;
  readonly opts: Required<PoolOptions>;
  readonly spec: TopologySpec;
  readonly run: Run;
  constructor(
    spec: TopologySpec,
    run: Run,
    opts: PoolOptions = {},
  ) {
    this.spec = spec;
    this.run = run;
    this.opts = {
      up: opts.up ?? ((spec, run, name, upOpts) => Lab.up(spec, run, name, upOpts)),
      evidenceChecks: opts.evidenceChecks ?? evidenceChecks,
      labFindings: opts.labFindings ?? labFindings,
      settleMs: opts.settleMs ?? 30_000,
      evidenceCheckMs: opts.evidenceCheckMs ?? 120_000,
      start: opts.start ?? startRun,
      capabilities: opts.capabilities ?? (async (spec) => probeCapabilities((await ensureImages(spec.openclawVersion)).openclaw, labConfigs(spec))),
      engineTrouble: opts.engineTrouble ?? (() => engineTrouble()),
      engineWatchMs: opts.engineWatchMs ?? ENGINE_WATCH_MS,
      admit: opts.admit ?? !opts.up,
      paceMonitor: opts.paceMonitor ?? monitor,
      interrupted: opts.interrupted ?? interruptedRun,
    };
  }

  /** The evidence folder name of this pool's shared lab ("shared-lab"; a lane's pool: "shared-lab-lane2"). */
  sharedName = "shared-lab";

  /** The shared lab; for a scenario that tests pairing itself (`pairing: "fresh"`), one paired from scratch. */
  async shared(s?: Pick<Scenario, "name" | "pairing">): Promise<Lab> {
    if (s?.pairing === "fresh" && this.#shared?.snapshot?.path === "restored") await this.replaceShared(`scenario ${s.name} tests pairing itself: it needs a lab paired from scratch`);
    // A replacement (the first one was unhealthy, or a scenario on it would not settle) gets its own evidence folder.
    this.#shared ??= await this.#up(this.spec, this.#sharedCount++ ? `${this.sharedName}-${this.#sharedCount}` : this.sharedName, { snapshot: s?.pairing ?? "use" });
    return this.#shared;
  }

  /** A fresh lab for a scenario that needs its own: the run's spec with the scenario's overrides. */
  own(s: Scenario): Promise<Lab> {
    return this.#up(parseTopology(mergeSpec(this.spec, s.spec ?? {})), `scenarios/${s.name}/lab`, { snapshot: s.pairing ?? "use" });
  }

  /** Failed starts of the last lab this pool brought up (taken by the scenario that asked for it). */
  startAttempts: StartAttempt[] = [];
  /** What admission said of the last lab this pool brought up, when it came up without the headroom. */
  admissionNote: string | undefined;

  /**
   * A lab once the machine has the headroom for it (lab/run/admission.ts), started again on fresh
   * state when OpenClaw gave up its start because the machine starved it, up to START_ATTEMPTS
   * times; each failed attempt's evidence folder is kept as `<name>.attempt<k>`.
   */
  async #up(spec: TopologySpec, name: string, upOpts: LabUpOptions): Promise<Lab> {
    this.startAttempts = [];
    this.admissionNote = undefined;
    for (let attempt = 1; ; attempt++) {
      const from = Date.now();
      try {
        // One lab comes up at a time in this process, admission included: a lane asks for headroom
        // once the lab before it is up, so it sees that lab (two lanes starting together on a
        // loaded 2-core machine each saw none, came up side by side at load 17, and both gateways
        // gave up their start).
        return await bringUpInTurn(async () => {
          if (this.opts.admit) this.admissionNote = (await admit(`lab ${name}`, spec.nodes.count)).note;
          return this.opts.up(spec, this.run, name, upOpts);
        });
      } catch (err) {
        if (err instanceof LabError || attempt >= START_ATTEMPTS) throw err;
        const why = starvedStart(err, this.opts.paceMonitor().worst(from, Date.now())?.raw ?? 1);
        if (!why) throw err;
        const kept = keepAttempt(this.run, name, `${name}.attempt${attempt}`);
        this.startAttempts.push({ lab: name, attempt, reason: `${(err as Error).message.split("\n")[0]} (${why})`, evidence: kept });
        info(`lab ${name}: start attempt ${attempt} of ${START_ATTEMPTS} ended because the machine starved it (${why}); starting again on fresh state (evidence of the attempt: ${kept})`);
      }
    }
  }

  /** Take the shared lab down so the next shared scenario gets a fresh one (nothing left on it can reach that one). */
  async replaceShared(why: string): Promise<void> {
    const lab = this.#shared;
    if (!lab) return;
    this.#shared = undefined;
    info(`replacing the shared lab: ${why}`);
    await lab.down().catch((e: Error) => info(`taking the shared lab down failed: ${e.message}`));
  }

  async close(): Promise<void> {
    const lab = this.#shared;
    this.#shared = undefined;
    await lab?.down();
  }
}

/** How a scenario's body ended: it returned, it threw, an error escaped it (lab/core/escapes.ts), or it ran out of time (and then whether it settled once cancelled). */
export type BodyEnd =
  | { kind: "returned" }
  | { kind: "threw"; error: unknown }
  | { kind: "escaped"; escape: Escape; settled: boolean }
  | { kind: "timed-out"; error: DeadlineExceeded; settled: boolean };

/**
 * Run a scenario's body against its deadline. At the deadline the signal is aborted with a
 * DeadlineExceeded and the body is given `settleMs` to end (every wait takes the signal, so it
 * ends at once); only then does the caller heal faults and hand the lab on, so nothing the
 * cancelled scenario still does can reach the next one. (withDeadline in lab/core/wait.ts rejects at
 * the deadline while the body runs on; here the runner needs to know when it stopped.)
 * An error that escapes the body (a promise nobody awaits rejects, a timer throws) ends it the
 * same way, charged to it: the run goes on. `late` hears escapes after the body ended, until
 * `close()` (the caller's verdict).
 */
export function runBodyScoped(
  fn: (signal: AbortSignal) => Promise<void>,
  opts: { timeoutMs: number; settleMs: number; message: string; owner: string; late?: (e: Escape) => void; watch?: (signal: AbortSignal) => Promise<string | undefined>; monitor?: PaceMonitor },
): { end: Promise<BodyEnd>; close: () => void } {
  const ctl = new AbortController();
  // The watcher (the engine's health) runs until the first race is decided; what it reports
  // ends the body like a deadline, as the lab's own failure (LabInfraError: unknown).
  const watching = new AbortController();
  const lost = opts.watch
    ? opts.watch(watching.signal).then((reason) => (reason ? { kind: "lost" as const, reason } : new Promise<never>(() => {})), () => new Promise<never>(() => {}))
    : new Promise<never>(() => {});
  let escaped: ((e: Escape) => void) | undefined;
  const escape = new Promise<Escape>((r) => (escaped = r));
  let decided = false; // the first race (body, escape, deadline) is over: later escapes are late
  const scope = withEscapes(
    opts.owner,
    (e) => {
      if (!decided && escaped) {
        escaped(e);
        escaped = undefined;
      } else opts.late?.(e);
    },
    () => fn(ctl.signal),
  );
  const body: Promise<BodyEnd> = scope.result.then(
    () => ({ kind: "returned" as const }),
    (error: unknown) => ({ kind: "threw" as const, error }),
  );
  const end = (async (): Promise<BodyEnd> => {
    // The scenario's whole deadline is the lab's own: spent at the machine's pace (lab/core/pace.ts).
    let busy: string | undefined;
    const first = await racePaced(Promise.race([body, escape.then((e) => ({ kind: "escape" as const, e })), lost]), opts.timeoutMs, (b) => (busy = b), opts.monitor);
    decided = true;
    watching.abort();
    if (first !== undefined && first.kind !== "escape" && first.kind !== "lost") return first;
    const cause = first?.kind === "escape" ? first.e.error : first?.kind === "lost" ? new LabInfraError(`${first.reason}; the scenario was cancelled there`) : new DeadlineExceeded(opts.message, busy);
    ctl.abort(cause);
    // fixed: not a deadline: the grace a cancelled body gets to settle (decides no verdict, only whether its lab is used again)
    const settled = (await raceTimer(body, opts.settleMs)) !== undefined;
    if (first?.kind === "lost") return { kind: "threw", error: cause };
    if (first?.kind === "escape") return { kind: "escaped", escape: first.e, settled };
    return { kind: "timed-out", error: cause as DeadlineExceeded, settled };
  })();
  return { end, close: scope.close };
}

/** runBodyScoped for a caller that needs no late escapes: the body's end. */
export async function runBody(fn: (signal: AbortSignal) => Promise<void>, timeoutMs: number, settleMs: number, message: string): Promise<BodyEnd> {
  const r = runBodyScoped(fn, { timeoutMs, settleMs, message, owner: "a scenario body" });
  try {
    return await r.end;
  } finally {
    r.close();
  }
}

/** How often the engine is asked whether it answers while a scenario runs. */
export const ENGINE_WATCH_MS = 5_000;

/**
 * While a scenario runs, the engine is pinged every ENGINE_WATCH_MS; two answers missed in a row
 * (each ping waits 5 s) end the scenario as unknown with the reason, instead of letting it wait
 * out its own deadlines for containers that no engine runs any more (a killed dockerd was seen
 * to take 90 s that way). Undefined when the signal aborts first.
 */
export async function watchEngine(trouble: () => Promise<string | undefined>, signal: AbortSignal, everyMs = ENGINE_WATCH_MS): Promise<string | undefined> {
  let missed = 0;
  while (!signal.aborted) {
    // sleep() takes its abort listener off when it wakes: one per ping would pile up on the signal.
    if (!(await sleep(everyMs, signal).then(() => true, () => false))) return undefined;
    const why = await trouble();
    if (signal.aborted) return undefined;
    missed = why ? missed + 1 : 0;
    if (why && missed >= 2) return `${why}, twice in a row while the scenario ran`;
  }
  return undefined;
}

/** The promise's value, or undefined when `ms` passed first (the timer is cleared either way). */
/** raceTimer on a lab-side deadline spent at the machine's pace; `busy` hears why the machine was busier than planned when it passes. */
async function racePaced<T>(p: Promise<T>, ms: number, busy: (why: string | undefined) => void, m?: PaceMonitor): Promise<T | undefined> {
  let timer: { clear: () => void } | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => (timer = pacedTimer(ms, (b) => (busy(b.busy()), resolve(undefined)), m)))]);
  } finally {
    timer?.clear();
  }
}

async function raceTimer<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]); // fixed: raceTimer itself (its callers say why)
  } finally {
    clearTimeout(timer);
  }
}

/** How one scenario runs: `aimOff` is the premise the self-test aims off (ScenarioContext.aimOff). */
export interface RunOptions {
  aimOff?: string;
}

/**
 * Run one scenario as named phases, each timed into run.json (its row's `phases`): needs (what
 * the version's CLI offers, before any lab), lab (the shared one or its own), protocol (what
 * the gateway advertises), body (to its deadline; a cancelled one settles first), drain (what
 * it left, faults first, undone before its lab is judged), evidence checks (over its window),
 * lab after (an own lab down with nothing left behind, a shared one healthy). The phases only
 * gather what they observe; judgeHistory (lab/judge/history.ts) turns it into the verdict in one
 * call. A phase may end the scenario before its body with a verdict (n/a, a lab that could not
 * come up); drain and lab after run whatever happened once the body began.
 */
export async function runScenario(s: Scenario, pool: LabPool, opts: RunOptions = {}): Promise<ScenarioResult> {
  const r = new ScenarioRun(s, pool, opts);
  const needs = s.needs ?? [];
  try {
    await r.phases.sequence([
      { name: "needs", when: () => needs.some((n) => !isProtocolNeed(n)), run: () => r.needs() },
      { name: "lab", run: () => r.bringLab() },
      { name: "protocol", when: () => needs.some(isProtocolNeed), run: () => r.protocolNeeds() },
      { name: "body", run: () => r.body() },
      { name: "drain", cleanup: true, when: () => r.began, run: () => r.drain() },
      { name: "evidence checks", run: () => r.evidenceChecks() },
      { name: "lab after", cleanup: true, when: () => r.began, run: () => r.labAfter() },
    ]);
  } catch (err) {
    r.closeScope(); // bad input (LabError) stops the whole run; nothing is recorded for this scenario
    throw err;
  }
  return r.record();
}

/**
 * runScenario, and once more when the lab could not judge it because the machine was busier than
 * it plans for (unknown with the machine busy), after waiting for headroom: a busy machine gives
 * another attempt or unknown, never a fail. The attempt before is kept: its evidence folder as
 * `scenarios/<name>.attempt<k>`, its verdict in the row's `attempts` and said in the detail.
 */
export async function runScenarioAttempts(s: Scenario, pool: LabPool, opts: RunOptions = {}): Promise<ScenarioResult> {
  const earlier: NonNullable<ScenarioResult["attempts"]> = [];
  for (let attempt = 1; ; attempt++) {
    const exercised = [...(pool.run.record.exercised ?? [])];
    const r = await runScenario(s, pool, opts);
    if (r.verdict !== "unknown" || !r.machineBusy || r.stray || attempt >= SCENARIO_ATTEMPTS) {
      if (!earlier.length) return r;
      r.attempts = earlier;
      r.detail = attemptsDetail(attempt, SCENARIO_ATTEMPTS, earlier, r.detail);
      pool.run.update((rec) => {
        const row = rec.scenarios.findLast((x) => x.name === s.name);
        if (row) Object.assign(row, { attempts: earlier, detail: r.detail });
      });
      writeRunReports(pool.run, { html: false });
      return r;
    }
    // The attempt's evidence kept beside the next one's; its row and findings out of run.json (the next one judges).
    const kept = keepAttempt(pool.run, r.evidence, `scenarios/${s.name}.attempt${attempt}`);
    earlier.push({ verdict: r.verdict, seconds: r.seconds, detail: r.detail, evidence: kept });
    pool.run.update((rec) => {
      rec.scenarios = rec.scenarios.filter((x) => x.name !== s.name);
      if (rec.findings) rec.findings = rec.findings.filter((f) => f.scenario !== s.name);
      if (rec.unexercised) rec.unexercised = rec.unexercised.filter((u) => u.scenario !== s.name);
      rec.exercised = exercised; // what the next attempt sees is judged again
    });
    info(`scenario ${s.name}: the lab could not judge it on a machine busier than it plans for (${r.machineBusy}); running it again once there is headroom (attempt ${attempt + 1} of ${SCENARIO_ATTEMPTS}; evidence of this one: ${kept})`);
    if (s.topology === "own" || !pool.opts.admit) continue; // an own lab waits for headroom in the pool
    await admit(`scenario ${s.name} again`, pool.spec.nodes.count, { own: 1 });
  }
}

/**
 * An attempt's evidence folder kept under another name (`rel` -> `as`, inside the run folder),
 * with run.json's lab rows that point into it moved along; returns where it is (or `rel` when it
 * could not be moved, said).
 */
function keepAttempt(run: Run, rel: string, as: string): string {
  try {
    if (!fs.existsSync(path.join(run.dir, rel))) return as;
    fs.renameSync(path.join(run.dir, rel), path.join(run.dir, as));
  } catch (err) {
    info(`the evidence of an attempt stays in ${rel} (could not move it to ${as}: ${(err as Error).message})`);
    return rel;
  }
  run.update((rec) => {
    for (const l of Object.values(rec.labs ?? {})) if (l.evidence === rel || l.evidence.startsWith(`${rel}/`)) l.evidence = as + l.evidence.slice(rel.length);
  });
  return as;
}

/** One scenario's run: the state its phases share and what they observed (judged once, in record()). */
class ScenarioRun {
  readonly phases = new Phases();
  readonly run: Run;
  readonly dir: string;
  readonly #t0 = performance.now();
  readonly #startedAt = new Date().toISOString();
  readonly #stallsFrom = Date.now();
  /** When its body began (after its lab came up): the window whose pace can make a fail unknown (admission's own waits are before it). */
  #bodyFrom: number | undefined;
  /** What the phases recorded (lab/judge/history.ts), judged once in record(); escapes go to `problems` until the checks are judged, then to `afterwards`. */
  readonly #hist: ScenarioHistory;
  #notes: Note[];
  lab!: Lab;
  ctx!: Omit<ScenarioContext, "signal">;
  #log: fs.WriteStream | undefined;
  /** The lab's teardown stack before the body: the drain undoes what came after it. */
  #mark: number | undefined;
  /** The tap's position before the body (the evidence checks read only what came after it), or why it could not be read. */
  #tapSince: Record<string, number> | undefined;
  #tapUnreadable: string | undefined;
  #windowStart = "";
  #windowEnd = "";
  /** The body's waits (lab/core/waits.ts): where its time went, for run.json and the bench. */
  readonly #waits = new WaitLedger();
  /** A cancelled body that had not settled: its lab is not used again. */
  #straying = false;
  /** Ends the scenario's escape scope (what escapes after its verdict is only said). */
  closeScope = () => {};

  readonly s: Scenario;
  readonly pool: LabPool;
  readonly opts: RunOptions;
  constructor(
    s: Scenario,
    pool: LabPool,
    opts: RunOptions = {},
  ) {
    this.s = s;
    this.pool = pool;
    this.opts = opts;
    this.run = pool.run;
    this.dir = path.join(this.run.dir, "scenarios", s.name);
    fs.mkdirSync(this.dir, { recursive: true });
    this.#hist = emptyHistory(s.name, pool.spec.openclawVersion, { own: s.findings ?? [], labWide: pool.opts.labFindings });
    this.#hist.declared = { checks: (s.checks ?? []).map((c) => c.id), premises: (s.premises ?? []).map((p) => p.id) };
    this.#notes = this.#hist.problems;
  }

  /** The body began (its lab's teardown mark taken): drain and lab after have something to do. */
  get began(): boolean {
    return this.#mark !== undefined;
  }

  /** Failed starts of the lab the pool just brought up for it (said with its verdict, kept in its row). */
  #startAttempts: StartAttempt[] = [];
  #takeStartAttempts(): void {
    const a = this.pool.startAttempts;
    this.pool.startAttempts = [];
    if (this.pool.admissionNote) this.#notes.push({ verdict: "pass", text: `its lab ${this.pool.admissionNote}` });
    this.pool.admissionNote = undefined;
    if (!a.length) return;
    this.#startAttempts = a;
    this.#notes.push({ verdict: "pass", text: `its lab started on attempt ${a.length + 1} of ${START_ATTEMPTS} (${a.map((x) => `attempt ${x.attempt}: ${x.reason}; evidence ${x.evidence}`).join("; ")})` });
  }

  /** It ends here, before its body, with this verdict. */
  #notRun(verdict: Verdict, why: string): typeof STOP {
    this.#hist.notRun = { verdict, why };
    return STOP;
  }

  /** What the version's CLI lacks of what the scenario needs: n/a at once, before any lab comes up. */
  async needs(): Promise<void | typeof STOP> {
    const { s, pool } = this;
    let caps: Capabilities;
    try {
      caps = await pool.opts.capabilities(pool.spec);
    } catch (err) {
      if (err instanceof LabError) throw err;
      return this.#notRun("unknown", `could not learn what openclaw@${pool.spec.openclawVersion} offers: ${(err as Error).message}`);
    }
    const lacking = (s.needs ?? []).map((n) => unmet(n, caps)).filter((m): m is string => !!m);
    if (lacking.length) return this.#notRun("n/a", `openclaw@${pool.spec.openclawVersion}: ${lacking.join("; ")}`);
  }

  /** The shared lab or one of its own; one that cannot come up is OpenClaw's fail or the lab's unknown. */
  async bringLab(): Promise<void | typeof STOP> {
    const { s, pool } = this;
    try {
      this.lab = s.topology === "shared" ? await pool.shared(s) : await pool.own(s);
      this.#hist.version = this.lab.spec.openclawVersion;
      this.#takeStartAttempts();
    } catch (err) {
      this.#takeStartAttempts();
      // The machine starved the lab's start beyond the plan (every attempt): the lab could not tell.
      const busy = machineBusyIn(err);
      if (busy && !(err instanceof LabError)) return this.#notRun("unknown", `the lab could not come up on a machine busier than it plans for: ${(err as Error).message}`);
      if (err instanceof LabError) throw err; // bad input: stop the whole run with its message
      // A dead or failing engine is the lab's, whatever it made fail (a container that "exited").
      const trouble = await pool.opts.engineTrouble();
      if (trouble || isEngineError(err)) return this.#notRun("unknown", `the lab could not come up: ${trouble ?? `the Docker engine refused: ${(err as Error).message}`}`);
      // OpenClaw not coming up (gateway or node host exited, pairing refused) is a fail; the lab's own parts, unknown.
      if (err instanceof SystemUnderTestError) return this.#notRun("fail", `OpenClaw did not come up: ${(err as Error).message}`);
      return this.#notRun("unknown", `the lab could not come up: ${(err as Error).message}`);
    }
  }

  /** What the gateway does not advertise of what the scenario needs (its hello-ok): n/a before the body; an own lab goes down. */
  async protocolNeeds(): Promise<void | typeof STOP> {
    const { s, lab } = this;
    const lacking = (s.needs ?? []).map((n) => unmet(n, lab.capabilities, lab.protocol)).filter((m): m is string => !!m);
    const ends = !lab.protocol
      ? this.#notRun("unknown", "the gateway's hello-ok (what it offers) was not seen, so the scenario's needs could not be judged")
      : lacking.length
        ? this.#notRun("n/a", `openclaw@${lab.spec.openclawVersion}: ${lacking.join("; ")}`)
        : undefined;
    if (ends && s.topology === "own") await lab.down().catch(() => {});
    return ends;
  }

  /** The body against its deadline, with its log and its checks; how it ended is noted, never thrown. */
  async body(): Promise<void> {
    const { s, pool, run, dir, lab } = this;
    const logFile = path.join(dir, "scenario.log");
    const log = (this.#log = fs.createWriteStream(logFile));
    // A full disk: the lab's own error, never a crash (lab/core/escapes.ts); a stream's error names no file.
    log.on("error", (err: NodeJS.ErrnoException) => raise(Object.assign(err, { path: err.path ?? logFile })));
    // The signal is the scenario's deadline (runBody, below).
    const ctx: Omit<ScenarioContext, "signal"> = (this.ctx = {
      lab,
      run,
      dir,
      aimOff: this.opts.aimOff,
      file: (rel) => run.file(path.join("scenarios", s.name, rel)),
      log: (msg) => {
        // A scenario that would not settle may still log after its verdict: never write after the end.
        if (!log.writableEnded) log.write(`${new Date().toISOString()} ${msg}\n`);
        info(`  [${s.name}] ${msg}`);
      },
      check: (c) => {
        // Recorded raw (judged in record(), from the history); the log says how it reads now.
        const raw = rawCheck(c);
        this.#hist.body.push(raw);
        const r = judge(s.findings ?? [], { ...raw, scenario: s.name, version: lab.spec.openclawVersion });
        ctx.log(`check ${c.id}: ${r.outcome}${r.outcome === "pass" ? "" : ` (observed ${JSON.stringify(c.observed)})`}`);
        return c.holds;
      },
      premise: (p) => {
        // Only a declared premise counts (its meaning is in the scenario's header and the docs): judgeHistory.
        const d = s.premises?.find((x) => x.id === p.id);
        this.#hist.premises.push(asRecorded({ id: p.id, met: p.met, ...(p.observed !== undefined ? { observed: p.observed } : {}) }));
        const met = !!d && p.met;
        ctx.log(`premise ${p.id}: ${met ? "met" : "NOT met"} (${d?.what ?? "not declared in the scenario's premises"}; observed ${JSON.stringify(p.observed ?? null)})`);
        return met;
      },
      observe: (name, value) => {
        this.#hist.observations[name] = asRecorded(value);
      },
      proceed: (id) => {
        // The declared check's (or premise's) own judge over the observations so far, by the same
        // deriveChecks/derivePremises the verdict is judged with: the body only learns whether to
        // go on; the verdict is judged after it, from the history (judgeHistory).
        const c = s.checks?.find((x) => x.id === id);
        const p = s.premises?.find((x) => x.id === id);
        if (!c && !(p && p.judge)) throw new LabInfraError(`scenario ${s.name}: ctx.proceed("${id}") names no declared check or premise with a judge`);
        const obs = this.#hist.observations;
        const read = c ? deriveChecks([c as CheckDef<never>], obs, false) : derivePremises([p!], obs);
        const r = "checks" in read ? read.checks[0] : read.premises[0];
        const go = !!r && ("holds" in r ? r.holds : r.met);
        if (!go) {
          this.#hist.stopped ??= id;
          ctx.log(`stopped at ${id}: it does not hold (observed ${JSON.stringify(r?.observed ?? read.notes[0]?.text ?? null)}); what comes after it needs it`);
        }
        return go;
      },
    });

    this.#windowStart = new Date().toISOString();
    this.#bodyFrom = Date.now();
    // The tap's position before the scenario: the evidence checks read only what came after it.
    try {
      this.#tapSince = {};
      if (lab.spec.tap.enabled) for (const alias of nodeAliases(lab.spec)) this.#tapSince[alias] = await lab.tap(alias).seq();
    } catch (err) {
      this.#tapSince = undefined;
      this.#tapUnreadable = (err as Error).message;
    }

    this.#mark = lab.teardown.mark();
    const body = runBodyScoped((signal) => withWaitLedger(this.#waits, () => s.run({ ...ctx, signal })), {
      timeoutMs: s.timeoutMs,
      settleMs: pool.opts.settleMs,
      message: `scenario ${s.name} did not finish within ${s.timeoutMs / 1000} s`,
      owner: `scenario ${s.name}`,
      late: (e) => this.#charge(e, "after its body ended"),
      watch: (signal) => watchEngine(pool.opts.engineTrouble, signal, pool.opts.engineWatchMs),
      monitor: pool.opts.paceMonitor(), // the pool's: the machine's, or a test's
    });
    this.closeScope = body.close;
    const end = await step(`scenario ${s.name}`, () => body.end);
    this.#hist.bodyReturned = end.kind === "returned";
    const notSettled = `the scenario had not settled ${pool.opts.settleMs / 1000} s after it was cancelled (its lab is not used again)`;
    if (end.kind === "threw") {
      const err = end.error as Error;
      if (isWriteFailure(err)) raise(err); // the disk, not the scenario: ends the run as the lab's own error
      // A failure is OpenClaw's only while the engine answers and did not refuse the call itself.
      const trouble = err instanceof LabInfraError ? undefined : ((await pool.opts.engineTrouble()) ?? (isEngineError(err) ? `the Docker engine refused a call: ${err.message}` : undefined));
      // A lab-side deadline that passed on a machine busier than planned: the lab could not tell (lab/core/pace.ts).
      const busy = machineBusyIn(err);
      const v = err instanceof LabInfraError || trouble || busy ? "unknown" : "fail";
      this.#notes.push({ verdict: v, text: trouble ? `${trouble}; the scenario's own failure cannot be told apart: ${err?.message ?? String(err)}` : busy && !(err?.message ?? "").includes(busy) ? `${err?.message ?? String(err)}; ${busy}` : (err?.message ?? String(err)) });
      ctx.log(`${v}: ${err?.stack ?? err}`);
    } else if (end.kind === "escaped") {
      // As for a step that threw: while the engine is in trouble, what escaped cannot be told apart from it.
      const trouble = end.escape.error instanceof LabInfraError ? undefined : await pool.opts.engineTrouble();
      this.#charge(end.escape, "while it ran", trouble);
      ctx.log(`the scenario was cancelled; ${end.settled ? "it settled" : `it had not settled ${pool.opts.settleMs / 1000} s later`}`);
      if (!end.settled) this.#stray(notSettled);
    } else if (end.kind === "timed-out") {
      // The body's deadline is the lab's own backstop, never an expectation (those are the
      // scenario's own bounded waits, which end first): what OpenClaw would have done is not known.
      const text = end.error.machineBusy ? end.error.message : `${end.error.message}: the lab's own deadline for the whole scenario, not an expectation of OpenClaw's (a wait in it had no bound of its own): the lab could not tell`;
      this.#notes.push({ verdict: "unknown", text });
      ctx.log(`unknown: ${end.error.message}; the signal was aborted, ${end.settled ? "and the scenario settled" : `and it had not settled ${pool.opts.settleMs / 1000} s later`}`);
      if (!end.settled) this.#stray(notSettled);
    }
    this.#windowEnd = new Date().toISOString();
  }

  /**
   * An error that escapes the body (lab/core/escapes.ts) is the scenario's, by the usual rule: the
   * lab's own (LabInfraError, or the engine refusing a call) unknown, else fail; one that escapes after the body ended but
   * before the verdict is added to it.
   */
  #charge(e: Escape, when: string, trouble?: string): void {
    // The Docker engine's refusal or broken socket (lab/engine/docker.ts isEngineError) is the lab's, like a LabInfraError.
    const v = e.error instanceof LabInfraError || isEngineError(e.error) || trouble ? "unknown" : "fail";
    this.#notes.push({ verdict: v, text: `${trouble ? `${trouble}; ` : ""}an error escaped the scenario ${when} (${e.kind}, nobody awaited it): ${describeEscape(e.error)}` });
    this.ctx.log(`${v}: an error escaped the scenario ${when} (${e.kind}): ${(e.error as Error)?.stack ?? e.error}`);
  }

  #stray(text: string): void {
    this.#straying = true;
    this.#notes.push({ verdict: "pass", text }); // said, changing no verdict
  }

  /** Everything the scenario left (faults first of all) is undone before the lab's state is judged. */
  async drain(): Promise<void> {
    const undone = await this.lab.teardown.drain(this.#mark);
    if (undone.done.length) this.ctx.log(`undone after the scenario: ${undone.done.join(", ")}`);
    if (undone.failed.length) this.#notes.push({ verdict: "unknown", text: `could not undo: ${undone.failed.map((f) => `${f.name} (${f.error})`).join("; ")}`, after: true });
  }

  /**
   * The evidence checks over the scenario's window, judged like its own checks (against its
   * records and the lab-wide ones); one that throws means the lab could not tell.
   */
  async evidenceChecks(): Promise<void> {
    const { s, pool, lab, dir, ctx } = this;
    const registry = [...(s.findings ?? []), ...pool.opts.labFindings];
    if (pool.opts.evidenceChecks.length && !this.#tapSince) {
      this.#notes.push({ verdict: "unknown", text: `the evidence checks could not run: the wire tap's position before the scenario could not be read (${this.#tapUnreadable})` });
      return;
    }
    if (!this.#tapSince) return;
    const w: ScenarioWindow = { scenario: s.name, version: lab.spec.openclawVersion, dir, lab, startedAt: this.#windowStart, endedAt: this.#windowEnd, tapSince: this.#tapSince };
    for (const check of pool.opts.evidenceChecks) {
      try {
        // fixed: not against OpenClaw: an evidence check that does not answer reads unknown, never fail
        const inputs = await raceTimer(check.run(w), pool.opts.evidenceCheckMs);
        if (!inputs) throw new Error(`no answer within ${pool.opts.evidenceCheckMs / 1000} s`);
        for (const c of inputs) {
          const raw = { check: check.name, ...rawCheck(c) };
          this.#hist.evidence.push(raw);
          const r = evidenceResult(judge(registry, { ...raw, scenario: s.name, version: lab.spec.openclawVersion }), pool.opts.labFindings);
          ctx.log(`evidence check ${check.name}, ${c.id}: ${r.outcome}${r.outcome === "pass" ? "" : ` (observed ${JSON.stringify(c.observed)})`}`);
        }
      } catch (err) {
        this.#notes.push({ verdict: "unknown", text: `evidence check ${check.name} could not tell: ${(err as Error).message}` });
        ctx.log(`evidence check ${check.name} threw: ${(err as Error).stack ?? err}`);
      }
    }
  }

  /**
   * The lab after the scenario, whatever its verdict so far: an own lab must leave nothing
   * behind; a shared lab must be healthy, and one that is not (or that a scenario that would
   * not settle may still touch) is replaced before the next scenario. Its checks are judged
   * before this (what it finds counts only for a scenario accepted so far).
   */
  async labAfter(): Promise<void> {
    const { s, pool, lab } = this;
    this.#notes = this.#hist.afterwards;
    const after = (verdict: Verdict, text: string) => this.#notes.push({ verdict, text, after: true });
    if (s.topology === "own") {
      try {
        await lab.down();
        const left = await lab.leftovers();
        // The lab's own clean-up, not OpenClaw's behaviour: said, and a pass becomes unknown.
        if (left.length) after("unknown", `teardown left resources behind: ${left.join(", ")}`);
      } catch (err) {
        after("unknown", `could not take the lab down: ${(err as Error).message}`);
      }
    } else if (this.#straying) {
      await pool.replaceShared(`scenario ${s.name} did not settle after it was cancelled`);
    } else {
      const sick = await lab.health();
      if (sick.length) {
        after("fail", `scenario declared topology "shared" but left the lab unhealthy: ${sick.join("; ")}`);
        await pool.replaceShared(`scenario ${s.name} left it unhealthy`);
      } else {
        // What the scenario left that the next one would trip on (a worker slot still held once
        // every turn is over, a node's installed bundle no longer reported: lab.residue()) is judged
        // by the scenario's own checks where it can be (gateway-restart's R-gateway-restart-slots and
        // -bundles); here it is said, and the lab replaced, so that it is not charged to the
        // scenarios after it (three read FAIL after gateway-restart in run 20261204-052751-cda8871b3d3c583c).
        const left = await lab.residue();
        if (left.length) {
          after("pass", `it left the shared lab with ${left.join(", ")} after it ended; the lab was replaced so the next scenario starts clean`);
          await pool.replaceShared(`scenario ${s.name} left ${left.join(", ")}`);
        }
      }
    }
  }

  /** Judge what the phases observed (one call) and record it: findings.json, run.json, verdict.json, the reports. */
  async record(): Promise<ScenarioResult> {
    const { s, run, dir } = this;
    if (this.#log) {
      // scenario.log complete on disk before the verdict is recorded.
      this.#log.end();
      await finished(this.#log).catch(() => {});
    }
    // What judging needs besides the phases' notes, into the history; then one call judges it
    // (lab/judge/history.ts judgeHistory), as `fleetlab judge` will judge the stored history again.
    const mon = this.pool.opts.paceMonitor();
    const from = this.#bodyFrom ?? Date.now();
    const busy = this.#bodyFrom === undefined ? undefined : mon.busierThanPlanned(from, Date.now());
    const worst = mon.worst(from, Date.now());
    const h = this.#hist;
    if (busy) h.busy = busy;
    if (this.pool.opts.interrupted()) h.interrupted = true;
    // A stall of the lab's own process inside the window is said with the verdict (lab/core/stalls.ts).
    const note = stallNote(StallWatch.get().within(this.#stallsFrom, Date.now()));
    if (note) h.stall = note;
    const judged = judgeHistory(h, s, this.pool.opts.labFindings);
    h.derived = judged.derived;
    this.closeScope();
    const checks = judged.checks;
    const detail = judged.detail;
    const phases = [...this.phases.rows];
    const premises = judged.premises.length ? judged.premises : undefined;
    const startAttempts = this.#startAttempts.length ? this.#startAttempts : undefined;
    const waits = this.#bodyFrom !== undefined && this.#windowEnd ? bodyWaits(this.#waits.intervals, this.#bodyFrom, Date.parse(this.#windowEnd)) : undefined;
    const paceRow = worst ? { worst: worst.raw, load: worst.load, ...(worst.own !== undefined ? { own: worst.own } : {}), ...(busy ? { busy } : {}) } : undefined;
    const r: ScenarioResult = { name: s.name, verdict: judged.verdict, seconds: Math.round(performance.now() - this.#t0) / 1000, detail, evidence: path.relative(run.dir, dir), checks, startedAt: this.#startedAt, endedAt: new Date().toISOString(), phases, premises, machineBusy: busy, startAttempts, stray: this.#straying || undefined, ...(judged.failedSteps.length ? { failedSteps: judged.failedSteps } : {}) };
    if (checks.length) writeJson(path.join(dir, "findings.json"), checks);
    writeJson(path.join(dir, HISTORY_FILE), h);
    run.update((rec) => {
      rec.scenarios.push({ name: r.name, verdict: r.verdict, seconds: r.seconds, detail: r.detail, startedAt: r.startedAt, endedAt: r.endedAt, evidence: r.evidence, phases, premises, startAttempts, pace: paceRow, waits });
      addJudged(rec, s.name, judged); // as `fleetlab judge` adds it again
    });
    writeJson(path.join(dir, "verdict.json"), r);
    // junit.xml only: report.html reads every transcript of the run so far (17 MB for a full run,
    // 1-1.5 s of synchronous work on a quiet machine and more on a busy one: the lab's own stalls
    // late in a run); it is written once, at the run's end (endRun, an interrupted run's too).
    writeRunReports(run, { html: false });
    info(`scenario ${s.name}: ${r.verdict.toUpperCase()} in ${r.seconds.toFixed(1)} s${detail ? ` (${detail.split("\n")[0]})` : ""}`);
    return r;
  }
}

/** Run these scenarios (already resolved and ordered) one after another and return their results. */
export async function runScenarios(chosen: Scenario[], spec: TopologySpec, run: Run, pool = new LabPool(spec, run)): Promise<ScenarioResult[]> {
  await pool.opts.start(run, spec, chosen);
  const results: ScenarioResult[] = [];
  try {
    for (const s of runOrder(chosen)) {
      if (s.topology === "own") await pool.close();
      results.push(await runScenarioAttempts(s, pool));
    }
  } finally {
    await pool.close();
    endRun(run, pool.opts.labFindings);
  }
  return results;
}

/**
 * Turns between lanes for scenarios that run alone (Scenario.alone): any number of ordinary
 * scenarios side by side, or one that runs alone and nothing beside it. A scenario waiting to run
 * alone goes first: no lane starts another scenario while it waits.
 */
export class AloneTurns {
  #beside = 0;
  #alone = false;
  #waitingAlone = 0;
  #wake: (() => void)[] = [];
  #changed(): Promise<void> {
    return new Promise((r) => this.#wake.push(r));
  }
  #notify(): void {
    for (const w of this.#wake.splice(0)) w();
  }
  /** An ordinary scenario's turn; call what it returns when it ends. */
  async beside(): Promise<() => void> {
    while (this.#alone || this.#waitingAlone) await this.#changed();
    this.#beside++;
    return () => {
      this.#beside--;
      this.#notify();
    };
  }
  /** A turn alone: once every scenario running beside has ended; `onWait` is said when it has to wait. */
  async alone(onWait?: () => void): Promise<() => void> {
    this.#waitingAlone++;
    if (this.#alone || this.#beside) onWait?.();
    while (this.#alone || this.#beside) await this.#changed();
    this.#waitingAlone--;
    this.#alone = true;
    return () => {
      this.#alone = false;
      this.#notify();
    };
  }
}

/**
 * The lanes of a run: the scenarios of each (in run order) and the estimate the split was made by.
 * How many run at once is LANES (lanesFromEnv, lab/core/settings.ts; default 2). A lane is a
 * shard inside one process (lab/run/shard.ts splits by measured cost): its scenarios run one after
 * another on its own labs (its own shared lab when it holds shared scenarios), lanes side by
 * side. The suite's long scenarios wait out OpenClaw's fixed keepalive (25 s pings, 30 s ticks:
 * not configurable in 2026.9.6), so two labs at once halve the wall time on two cores. LANES=1
 * runs everything in one sequence, as a field-bug reproduction in isolation wants.
 */
export function planLanes(chosen: Scenario[], lanes: number, costs: Costs = loadCosts()): { lanes: Scenario[][]; seconds: number[] } {
  if (lanes <= 1 || chosen.length <= 1) return { lanes: [runOrder(chosen)], seconds: [] };
  const plan = planShards(chosen, Math.min(lanes, chosen.length), costs);
  const byName = new Map(chosen.map((s) => [s.name, s]));
  const out = plan.shards.map((names) => runOrder(names.map((n) => byName.get(n)!))).filter((l) => l.length);
  return { lanes: out, seconds: plan.seconds.filter((_, i) => plan.shards[i]!.length) };
}

/**
 * Run these scenarios in lanes (see lanesFromEnv): each lane with its own pool, one start and
 * one end for the run. `onResult` hears each verdict as it comes. With one lane this is
 * runScenarios. A bad-input error (LabError) in any lane stops the run with its message.
 */
export async function runLanes(
  chosen: Scenario[],
  spec: TopologySpec,
  run: Run,
  opts: { lanes?: number; onResult?: (r: ScenarioResult) => void; pool?: (lane: number) => LabPool } = {},
): Promise<ScenarioResult[]> {
  const plan = planLanes(chosen, opts.lanes ?? lanesFromEnv());
  const pools = plan.lanes.map((_, i) => {
    const p = opts.pool?.(i) ?? new LabPool(spec, run);
    if (i > 0) p.sharedName = `shared-lab-lane${i + 1}`;
    return p;
  });
  await pools[0]!.opts.start(run, spec, chosen);
  if (plan.lanes.length > 1) {
    run.update((r) => void (r.lanes = { partition: plan.lanes.map((l) => l.map((s) => s.name)), estimatedSeconds: plan.seconds }));
    info(`${plan.lanes.length} lanes side by side (LANES=1: one after another): ${plan.lanes.map((l, i) => `lane ${i + 1} ~${Math.round(plan.seconds[i] ?? 0)} s: ${l.map((s) => s.name).join(" ")}`).join("; ")}`);
  }
  const results: ScenarioResult[] = [];
  const turns = new AloneTurns();
  const lane = async (list: Scenario[], pool: LabPool) => {
    try {
      for (const s of list) {
        if (s.topology === "own") await pool.close();
        const done = s.alone ? await turns.alone(() => info(`scenario ${s.name} runs alone: waiting for the other lanes' scenarios to end`)) : await turns.beside();
        try {
          const r = await runScenarioAttempts(s, pool);
          results.push(r);
          opts.onResult?.(r);
        } finally {
          done();
        }
      }
    } finally {
      await pool.close();
    }
  };
  try {
    const ends = await Promise.allSettled(plan.lanes.map((l, i) => lane(l, pools[i]!)));
    const failed = ends.find((e): e is PromiseRejectedResult => e.status === "rejected");
    if (failed) throw failed.reason;
  } finally {
    endRun(run, pools[0]!.opts.labFindings);
  }
  const order = new Map(runOrder(chosen).map((s, i) => [s.name, i]));
  return results.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
}

/** The start of every run (CLI and vitest alike): an engine that answers, the plan, what dead runs left removed. */
export async function startRun(run: Run, spec: TopologySpec, plan: Scenario[]): Promise<void> {
  StallWatch.get(); // from here on, stalls of this process are seen
  const engine = await requireEngine();
  // Before the pace's first reading and before any container: the pace counts the lab's own load
  // when the share is claimed, and every member is created under it.
  const share = claimCpuShare(await engineCgroups());
  info(`CPU share: ${share.how}`);
  cpuAtStart.set(run.id, { containersS: cpuSecondsOf(""), lab: process.cpuUsage(), t: Date.now() });
  // Measured before the run's own labs load the machine: what its bring-up deadlines are scaled by.
  const machinePace = pace();
  info(paceLine(machinePace));
  run.update((r) => {
    r.engine = engine;
    r.cpuShare = { claimed: share.claimed, how: share.how };
    r.topology = spec;
    r.plan = runOrder(plan).map((s) => s.name);
    r.pace = machinePace;
  });
  await pruneDeadRuns();
  await setUp(spec);
}

/**
 * The run's set-up, once, before any lane starts: every image of its OpenClaw version (built
 * once whoever asks: lab/engine/lock.ts). A set-up that fails ends the run here with its reason
 * (exit 2: bad input or set-up), never as an unknown verdict per scenario.
 */
export async function setUp(spec: TopologySpec): Promise<void> {
  try {
    await step(`set-up: images for openclaw@${spec.openclawVersion}`, () => ensureImages(spec.openclawVersion));
  } catch (err) {
    if (interruptedRun()) throw err;
    throw new LabError(`set-up failed before any scenario ran: ${(err as Error).message}`, err instanceof LabError ? err.exitCode : 2);
  }
}

/**
 * What the machine and the lab's own process did through a run, kept in run.json at its end,
 * whether it ended normally or early (a signal, an error of the lab's own): its end time, the
 * pace as sampled (every 5th sample) and the lab's own stalls. Returns the stalls' summary.
 */
export function recordRunEnd(run: Run): ReturnType<typeof stallSummary> {
  const t0 = Date.parse(run.record.startedAt);
  const cpu = cpuSpent(run);
  const trace = monitor().samples.filter((x, i) => x.t >= t0 && i % 5 === 0).map((x) => [x.t - t0, x.load, x.raw] as [number, number, number]);
  const stalls = stallSummary(StallWatch.get(), t0);
  run.update((r) => {
    r.endedAt = new Date().toISOString();
    if (trace.length) r.paceTrace = trace;
    r.stalls = stalls;
    if (cpu) r.cpu = cpu;
  });
  if (cpu) info(cpuLine(cpu));
  return stalls;
}

/** The CPU readings at a run's start (startRun), for its end. */
const cpuAtStart = new Map<string, { containersS: number | undefined; lab: NodeJS.CpuUsage; t: number }>();

/**
 * The CPU a run used: every container of the lab's cgroup (removed and restarted ones included;
 * when the share is claimed), the lab's own process, against what the machine's cores offered
 * over the same wall time; and by kind of member, as read at each lab's teardown.
 */
function cpuSpent(run: Run): NonNullable<RunRecord["cpu"]> | undefined {
  const start = cpuAtStart.get(run.id);
  if (!start) return undefined;
  cpuAtStart.delete(run.id);
  const now = cpuSecondsOf("");
  const lab = process.cpuUsage(start.lab);
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const byKind: Record<string, number> = {};
  for (const l of Object.values(run.record.labs ?? {})) for (const [k, v] of Object.entries(l.cpuS ?? {})) byKind[k] = r1((byKind[k] ?? 0) + v);
  return {
    wallS: r1((Date.now() - start.t) / 1000),
    cores: os.cpus().length,
    ...(now !== undefined && start.containersS !== undefined ? { containersS: r1(now - start.containersS) } : {}),
    labProcessS: r1((lab.user + lab.system) / 1e6),
    ...(Object.keys(byKind).length ? { byKind } : {}),
  };
}

/** "CPU: containers 2510 s and the lab's process 104 s of the 3380 s 2 cores offered over 1690 s (77%); by kind ...". */
export function cpuLine(c: NonNullable<RunRecord["cpu"]>): string {
  const offered = c.wallS * c.cores;
  const used = (c.containersS ?? 0) + c.labProcessS;
  const kinds = c.byKind ? `; by kind at teardown (a restarted container's earlier runs not counted): ${Object.entries(c.byKind).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${Math.round(v)} s`).join(", ")}` : "";
  const containers = c.containersS === undefined ? "containers not measured (no CPU share)" : `containers ${Math.round(c.containersS)} s`;
  return `CPU: ${containers} and the lab's process ${Math.round(c.labProcessS)} s of the ${Math.round(offered)} s ${c.cores} cores offered over ${Math.round(c.wallS)} s (${Math.round((100 * used) / offered)}%)${kinds} (run.json: cpu)`;
}

/**
 * One line for the end of a run: where its scenarios' time went, summed (their own labs'
 * bring-up, and in their bodies the windows run out, the waits on OpenClaw, the pauses and the
 * rest: lab/core/waits.ts). Undefined when no row says.
 */
export function timeSpent(rows: ScenarioRow[]): string | undefined {
  const told = rows.filter((r) => r.waits);
  if (!told.length) return undefined;
  const sum = (f: (r: ScenarioRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const total = sum((r) => r.seconds);
  const up = sum((r) => (r.phases?.find((p) => p.name === "lab")?.ms ?? 0) / 1000);
  const w = (k: keyof BodyWaits) => sum((r) => r.waits?.[k] ?? 0);
  const all: BodyWaits = { bodyS: w("bodyS"), windowS: w("windowS"), observedS: w("observedS"), requestS: w("requestS"), pauseS: w("pauseS") };
  const s = (x: number) => `${Math.round(x)} s`;
  return `where the scenarios' ${s(total)} went (summed over ${rows.length}; run.json: scenarios[].waits): their own labs' bring-up ${s(up)}; in their bodies, windows run out ${s(all.windowS)}, awaiting OpenClaw ${s(all.observedS)}, awaiting its answers to requests ${s(all.requestS!)}, pauses ${s(all.pauseS)}, the lab's own work ${s(ownWorkS(all))}`;
}

/**
 * The end of every run: its end time, the lab-wide finding records no scenario of the run
 * judged (said loudly and kept in run.json; the exit code stays the verdicts'), its reports.
 */
export function endRun(run: Run, lab: FindingRecord[] = labFindings): void {
  const ran = run.record.scenarios.length > 0;
  const stalls = recordRunEnd(run);
  run.update((r) => void addLabWideUnexercised(r, lab)); // as `fleetlab judge` adds them again
  for (const u of run.record.unexercised ?? []) {
    if (u.scenario) info(`unexercised finding record ${u.id} [${u.scenario}]: no check judged it in this run; retire or fix the record or its check`);
    else info(`lab-wide finding record ${u.id} was not seen in any scenario of this run: fixed? (retire the record) if the run covered what shows it`);
  }
  const spent = timeSpent(run.record.scenarios);
  if (spent) info(spent);
  if (ran) info(`the lab's own process: ${stalls.over250ms} stall(s) of 250 ms or more (${stalls.over1s} of 1 s or more; longest ${stalls.longestMs} ms); event loop delay p99 ${stalls.delayMs.p99} ms, max ${stalls.delayMs.max} ms${stalls.where ? `; through them ${causeText(stalls.where)}` : ""} (run.json: stalls)`);
  writeRunReports(run);
  sealRun(run);
}

/**
 * The final redaction pass over the run folder (lab/evidence/redact.ts sealFolder): every
 * credential the run issued or learnt, out of every file, whoever wrote it. At the end of a run
 * and of a run ended early. Says what it rewrote; a pass that fails is a write failure of the
 * lab's own (it is raised).
 */
export function sealRun(run: Run): void {
  const sealed = sealFolder(run.dir);
  info(`credentials sealed out of run folder ${run.id}: ${sealed.files} files read, ${sealed.rewritten.length} rewritten in ${sealed.ms} ms${sealed.rewritten.length ? ` (${sealed.rewritten.slice(0, 5).join(", ")}${sealed.rewritten.length > 5 ? ", ..." : ""})` : ""}`);
}

/**
 * The run's reports beside run.json, written after every scenario so a cut run has them too:
 * junit.xml, and report.html (verdicts, findings, the timeline of every lab; a few hundred ms
 * for a full run's evidence). A report.html that cannot be built is said, never a failed run.
 */
export function writeRunReports(run: Run, opts: { html?: boolean } = {}): ReportWritten | undefined {
  fs.writeFileSync(path.join(run.dir, "junit.xml"), junitXml(run.record));
  if (opts.html === false) return undefined;
  try {
    return writeReportHtml(run.dir, run.record);
  } catch (err) {
    info(`report.html of run ${run.id} could not be written: ${(err as Error).stack ?? err}`);
    return undefined;
  }
}
