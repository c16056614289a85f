// The machine's pace: how much slower than the machines the lab's deadlines were measured on
// this one runs right now. Every deadline of the lab's own (a member's readiness, pairing, an
// RPC's answer, a kit's wait, a scenario's whole body) is a figure measured on the reference
// machine, spent at the pace the machine has while it runs: a second of wall time on a machine
// running three times slower spends a third of a second of the budget. So the same lab comes up
// on a laptop or a busy CI runner, and a member that really broke still ends its wait at once
// (a container that exits stops the wait, whatever the deadline).
//
// The pace follows the machine while the run goes on (a monitor samples it every SAMPLE_MS; one
// reading at the start is not enough: a loaded machine was seen going from load 3.5 to 16 and
// back within one run). Each sample is the larger of:
// - a calibration: a fixed piece of CPU work (SHA-256 over 8 MiB) timed in this process, against
//   what it takes on an idle machine of the kind the deadlines were measured on; the median of
//   the last CALIBRATIONS samples (one sample is a single time slice: too noisy alone);
// - the load: 1 + the 1-minute load average per core (an idle machine: 1; two busy loops on two
//   cores: about 2), since every member of a lab competes for the same cores. When the lab holds
//   its CPU share (lab/core/cpu-share.ts: its process and containers weighted before the work
//   beside them), the load is the lab's own: the same damped average over its cgroup's tasks
//   alone, since the work beside it no longer slows it (`own` in a sample; `load` stays the
//   machine's, for the record).
// The factor a deadline is spent at is clamped to [1, MAX_FACTOR]: never shorter than measured,
// never so long that a hang takes ages. MAX_FACTOR is also the plan: a deadline that passes while
// the machine was slower than that (busierThanPlanned) is not OpenClaw's failure but the lab's
// "could not tell", naming the load (MachineBusy; lab/run/runner.ts judges it unknown).
//
// A bound that IS the expectation (OpenClaw's documented limit, "answered within 90 s", "no
// close for 60 s") is not paced: waitFor's `bound: "expectation"`, pollUntil (which only judges
// expectations) and an RPC's `expectation` option keep it fixed, and say so where they are used.
// FLEETLAB_PACE=<factor> fixes the factor (a machine known to be slow; 1 to switch scaling off).
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { labRunnable, OwnLoad } from "./cpu-share.ts";
import { LabError } from "./log.ts";
import { environment } from "./settings.ts";

/** The calibration's median round (64 MiB) on an idle 2-core machine of the kind the figures come from (measured 2026-12-01). */
export const REFERENCE_MS = 52;
/** The slowest pace the lab plans for: deadlines stretch up to this, and a deadline passed beyond it is the machine's, not OpenClaw's. */
// Not 12 (tried 2026-12-03): with deadlines stretched to 12x under CPU busy loops at twice the
// cores and a disk job (pace 7-11), abort-lost-ack read FAIL at pace 8.67x on OpenClaw's own
// timer ("Timed out waiting for session ... turn claim release"), which the lab cannot stretch:
// beyond 6x a fail cannot be told from starvation, so 6x stays the plan a verdict is judged in.
export const MAX_FACTOR = 6;
const ROUNDS = 5;
/** How often the monitor samples the machine while the lab runs, and how many samples it keeps (an hour). */
export const SAMPLE_MS = 2_000;
const KEEP = 1_800;
/** Calibration samples the factor takes the median of (10 s). */
const CALIBRATIONS = 5;
/** The per-sample calibration: SHA-256 over this many MiB (about 6.5 ms on the reference machine). */
const SAMPLE_MIB = 8;

export interface Pace {
  /** What every lab-side deadline is spent at now. */
  factor: number;
  /** The calibration's median round here, and the reference it is compared with. */
  calibrationMs: number;
  referenceMs: number;
  /** 1-minute load average and cores when measured. */
  load: number;
  cores: number;
  /** The lab's own load when it holds its CPU share (lab/core/cpu-share.ts): what the factor counted. */
  own?: number;
  /** Where the factor came from: "measured" or "FLEETLAB_PACE". */
  source: "measured" | "FLEETLAB_PACE";
}

/** One reading of the machine: when, the 1-minute load, the calibration as a ratio to the reference (median of the last few), the unclamped factor. */
export interface PaceSample {
  t: number;
  load: number;
  cpu: number;
  raw: number;
  /** The lab's own load (its cgroup's tasks, damped like the load average) when it holds its CPU share: the factor counts this, not `load`. */
  own?: number;
}

let first: Pace | undefined;

/** Time the calibration: the median of ROUNDS rounds of SHA-256 over 64 MiB (about a quarter of a second in all). */
export function calibrate(): number {
  const chunk = Buffer.alloc(16 * 2 ** 20, 7);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    const h = crypto.createHash("sha256");
    for (let k = 0; k < 4; k++) h.update(chunk);
    h.digest();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(ROUNDS / 2)]!;
}

/** The unclamped factor from the two measurements (pure). */
export function rawFactor(calibrationMs: number, load: number, cores: number, referenceMs = REFERENCE_MS): number {
  return Math.max(1, calibrationMs / referenceMs, 1 + load / Math.max(1, cores));
}

/** The factor from the two measurements, clamped (pure: unit-tested). */
export function paceFactor(calibrationMs: number, load: number, cores: number, referenceMs = REFERENCE_MS): number {
  return Math.round(Math.min(MAX_FACTOR, rawFactor(calibrationMs, load, cores, referenceMs)) * 100) / 100;
}

/** Read FLEETLAB_PACE: a number from 1 to MAX_FACTOR, or undefined. A bad value is an error naming it. */
export function paceFromEnv(env: NodeJS.ProcessEnv = environment()): number | undefined {
  const v = env.FLEETLAB_PACE?.trim();
  if (!v) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1 || n > MAX_FACTOR) throw new LabError(`FLEETLAB_PACE=${v} is not a factor from 1 to ${MAX_FACTOR} (how much slower this machine is than the reference; unset it to measure)`);
  return n;
}

/**
 * The machine's pace over time: samples kept in order, the factor now, the budget a wait has
 * spent since it began, and whether the machine was busier than planned in a window. Pure given
 * its samples (unit-tested with samples written in); the process's own monitor (monitor()) takes
 * a sample every SAMPLE_MS on an unref'd timer.
 */
export class PaceMonitor {
  readonly samples: PaceSample[] = [];
  #calibrations: number[] = [];

  readonly cores: number;
  /** FLEETLAB_PACE: the factor deadlines are spent at, whatever is measured. */
  readonly fixed?: number;
  constructor(
    cores = os.cpus().length,
    fixed?: number,
  ) {
    this.cores = cores;
    this.fixed = fixed;
  }

  /** Add a reading: the 1-minute load, one calibration's ratio to the reference (undefined: keep the last ones), and the lab's own load when it holds its CPU share. */
  record(t: number, load: number, cpuRatio?: number, own?: number): PaceSample {
    if (cpuRatio !== undefined) {
      this.#calibrations.push(cpuRatio);
      if (this.#calibrations.length > CALIBRATIONS) this.#calibrations.shift();
    }
    const sorted = [...this.#calibrations].sort((a, b) => a - b);
    const cpu = sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 1;
    const counted = own ?? load;
    const s: PaceSample = { t, load, cpu: round2(cpu), raw: round2(Math.max(1, cpu, 1 + counted / Math.max(1, this.cores))) };
    if (own !== undefined) s.own = own;
    this.samples.push(s);
    if (this.samples.length > KEEP) this.samples.shift();
    return s;
  }

  /** The factor at time t (the last sample at or before it, else the first): clamped to [1, MAX_FACTOR], or FLEETLAB_PACE. */
  factorAt(t: number): number {
    if (this.fixed) return this.fixed;
    return this.#clamp(this.#sampleAt(t));
  }

  #clamp(s: PaceSample | undefined): number {
    return this.fixed ?? Math.min(MAX_FACTOR, s?.raw ?? 1);
  }

  /** Index of the last sample at or before t (binary search: samples are in time order), or -1. */
  #indexAt(t: number): number {
    let lo = 0;
    let hi = this.samples.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.samples[mid]!.t <= t) (found = mid), (lo = mid + 1);
      else hi = mid - 1;
    }
    return found;
  }

  #sampleAt(t: number): PaceSample | undefined {
    const i = this.#indexAt(t);
    return i >= 0 ? this.samples[i] : this.samples[0];
  }

  /**
   * The reference-machine milliseconds spent between `from` and `to` (Date.now() values): each
   * stretch of wall time divided by the factor of its sample. A wait whose deadline is D
   * reference ms is over when spent(from, now) >= D. One pass over the samples in the window.
   */
  spent(from: number, to: number): number {
    if (to <= from) return 0;
    let i = this.#indexAt(from);
    let factor = this.#clamp(i >= 0 ? this.samples[i] : this.samples[0]);
    let at = from;
    let spent = 0;
    for (i += 1; i < this.samples.length; i++) {
      const s = this.samples[i]!;
      if (s.t >= to) break;
      if (s.t <= at) continue;
      spent += (s.t - at) / factor;
      at = s.t;
      factor = this.#clamp(s);
    }
    return spent + (to - at) / factor;
  }

  /**
   * Why the machine was busier than the lab plans for between `from` and `to`: a sample in the
   * window (or the one in force at its start) slower than MAX_FACTOR. Undefined when it was not.
   */
  busierThanPlanned(from: number, to: number): string | undefined {
    const seen = this.#window(from, to);
    const worst = this.worst(from, to);
    if (!worst || worst.raw <= MAX_FACTOR) return undefined;
    const over = seen.filter((s) => s.raw > MAX_FACTOR).length;
    const load = worst.own !== undefined ? `the lab's own load ${worst.own} with its CPU share, the machine's ${worst.load},` : `load ${worst.load}`;
    return `the machine was busier than the lab plans for: pace ${worst.raw.toFixed(2)}x at worst (${load} on ${this.cores} cores, CPU ${worst.cpu.toFixed(2)}x slower than the reference) against the ${MAX_FACTOR}x the lab's deadlines stretch to, in ${over} of ${seen.length} reading(s) over ${fmtS(to - from)}`;
  }

  /** The readings from `from` to `to`, with the one in force at `from`. */
  #window(from: number, to: number): PaceSample[] {
    const inWindow = this.samples.filter((s) => s.t >= from && s.t <= to);
    const atStart = this.#sampleAt(from);
    return atStart && !inWindow.includes(atStart) ? [atStart, ...inWindow] : inWindow;
  }

  /** The worst reading between from and to, for reports. */
  worst(from: number, to: number): PaceSample | undefined {
    return this.#window(from, to).reduce<PaceSample | undefined>((w, s) => (!w || s.raw > w.raw ? s : w), undefined);
  }
}

let live: PaceMonitor | undefined;
let timer: NodeJS.Timeout | undefined;

/** One reading of this machine now, into the monitor. */
function sampleNow(m: PaceMonitor): PaceSample {
  const chunk = sampleChunk();
  const t0 = performance.now();
  crypto.createHash("sha256").update(chunk).digest();
  const ms = performance.now() - t0;
  return m.record(Date.now(), Math.round(os.loadavg()[0]! * 100) / 100, ms / ((REFERENCE_MS * SAMPLE_MIB) / 64), ownLoadAdd(labRunnable()));
}
let ownLoad: OwnLoad | undefined;
/** The lab's own load with this count added, or undefined when the lab holds no CPU share. */
function ownLoadAdd(runnable: number | undefined): number | undefined {
  return runnable === undefined ? undefined : (ownLoad ??= new OwnLoad(SAMPLE_MS)).add(runnable);
}
let chunkBuf: Buffer | undefined;
function sampleChunk(): Buffer {
  return (chunkBuf ??= Buffer.alloc(SAMPLE_MIB * 2 ** 20, 7));
}

/** This process's monitor, started at the first call (its first sample is the full calibration). */
export function monitor(): PaceMonitor {
  if (live) return live;
  const m = (live = new PaceMonitor(os.cpus().length, paceFromEnv()));
  // The lab's tasks counted before the calibration, which would count itself.
  const runnable = labRunnable();
  const cal = calibrate();
  const load = Math.round(os.loadavg()[0]! * 100) / 100;
  const own = ownLoadAdd(runnable);
  // The full calibration counts as several samples' worth, so the first minutes are not one time slice.
  for (let i = 0; i < CALIBRATIONS; i++) m.record(Date.now(), load, cal / REFERENCE_MS, own);
  first = { factor: m.factorAt(Date.now()), calibrationMs: Math.round(cal * 10) / 10, referenceMs: REFERENCE_MS, load, cores: m.cores, source: m.fixed ? "FLEETLAB_PACE" : "measured" };
  if (own !== undefined) first.own = own;
  timer = setInterval(() => sampleNow(m), SAMPLE_MS);
  timer.unref();
  return m;
}

/** The pace as measured at the start of this process (the run header). */
export function pace(): Pace {
  monitor();
  return first!;
}

/** The factor lab-side deadlines are spent at right now. */
export function factorNow(): number {
  return monitor().factorAt(Date.now());
}

/**
 * A deadline measured on the reference machine, in wall milliseconds at today's pace: for a
 * bound handed to something that counts wall time itself (Testcontainers, a child process). The
 * lab's own waits spend a PacedBudget instead, which follows the pace while they run.
 */
export function deadline(ms: number): number {
  return Math.round(ms * factorNow());
}

/**
 * A lab-side deadline being spent: `ms` reference-machine milliseconds, spent at the machine's
 * pace from now on (expired() once spent), or at wall-clock speed for a bound that is the
 * expectation itself (fixed). busy() says why the machine was busier than planned meanwhile.
 */
export class PacedBudget {
  readonly from = Date.now();
  readonly #m: PaceMonitor;

  readonly ms: number;
  readonly fixed: boolean;
  constructor(
    ms: number,
    fixed = false,
    m?: PaceMonitor,
  ) {
    this.ms = ms;
    this.fixed = fixed;
    this.#m = m ?? monitor();
  }

  /** Reference ms spent so far. */
  spent(now = Date.now()): number {
    return this.fixed ? now - this.from : this.#m.spent(this.from, now);
  }
  expired(now = Date.now()): boolean {
    // A wait with no deadline (Infinity: a trigger armed until its fault is healed) never walks the samples.
    return Number.isFinite(this.ms) && this.spent(now) >= this.ms;
  }
  /** Wall ms left at today's pace (at least 0). */
  leftWallMs(now = Date.now()): number {
    if (!Number.isFinite(this.ms)) return Infinity;
    const left = this.ms - this.spent(now);
    return Math.max(0, Math.ceil(left * (this.fixed ? 1 : this.#m.factorAt(now))));
  }
  /** Wall ms since it began. */
  elapsed(now = Date.now()): number {
    return now - this.from;
  }
  /** Why the machine was busier than planned while it ran (a lab-side deadline only), else undefined. */
  busy(now = Date.now()): string | undefined {
    return this.fixed ? undefined : this.#m.busierThanPlanned(this.from, now);
  }
  /** "120 s (paced: 1.0x-3.2x, 210 s of wall time)" for messages. */
  describe(now = Date.now()): string {
    if (this.fixed) return `${fmtS(this.ms)} (a fixed bound: the expectation)`;
    return `${fmtS(this.ms)} at the reference pace (${fmtS(this.elapsed(now))} of wall time at this machine's pace, now ${this.#m.factorAt(now).toFixed(2)}x)`;
  }
}

/**
 * A timer on a lab-side deadline: `fn` runs once `ms` reference ms are spent at the machine's
 * pace (checked every second at most; `m` the machine's monitor unless given). Returns what clears
 * it. For a fixed bound use setTimeout.
 */
export function pacedTimer(ms: number, fn: (budget: PacedBudget) => void, m?: PaceMonitor): { clear: () => void; budget: PacedBudget } {
  const budget = new PacedBudget(ms, false, m);
  let t: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = budget.leftWallMs();
    t = setTimeout(() => (budget.expired() ? fn(budget) : arm()), Math.max(1, Math.min(left, 1_000)));
  };
  arm();
  return { clear: () => clearTimeout(t), budget };
}

/**
 * A lab-side deadline passed while the machine was busier than the lab plans for: the lab could
 * not tell whether OpenClaw was slow or starved. The runner judges it unknown (never a fail); it
 * names the load. An error that carries `machineBusy` (WaitTimeout, DeadlineExceeded, a
 * GatewayError TIMEOUT) anywhere in its cause chain counts the same (machineBusyIn).
 */
export class MachineBusy extends Error {
  readonly machineBusy: string;
  constructor(
    message: string,
    machineBusy: string,
    options?: { cause?: unknown },
  ) {
    super(`${message}; ${machineBusy}`, options);
    this.machineBusy = machineBusy;
    this.name = "MachineBusy";
  }
}

/** Why a lab-side deadline in an error's cause chain passed on a machine busier than planned, if one did. */
export function machineBusyIn(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    const why = (e as { machineBusy?: unknown }).machineBusy;
    if (typeof why === "string" && why) return why;
  }
  return undefined;
}

/** For the run header: "pace 1.00x (calibration 53 ms against 52 ms; load 0.3 on 2 cores) ...". */
export function paceLine(p: Pace = pace()): string {
  return `pace ${p.factor.toFixed(2)}x (${p.source === "FLEETLAB_PACE" ? "FLEETLAB_PACE; " : ""}calibration ${p.calibrationMs} ms against ${p.referenceMs} ms; ${p.own !== undefined ? `the lab's own load ${p.own} with its CPU share, the machine's ${p.load},` : `load ${p.load}`} on ${p.cores} cores): lab-side deadlines x${p.factor.toFixed(2)} now, following the machine (sampled every ${SAMPLE_MS / 1000} s, up to ${MAX_FACTOR}x)`;
}

/** The load per core now, to say when a wait ran out on a machine busier than planned. */
export function loadNow(): { load: number; perCore: number } {
  const load = Math.round(os.loadavg()[0]! * 100) / 100;
  return { load, perCore: Math.round((load / Math.max(1, os.cpus().length)) * 100) / 100 };
}

/** MemAvailable from /proc/meminfo in bytes (os.freemem() counts the page cache as used), or os.freemem(). */
export function memAvailable(): number {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(fs.readFileSync("/proc/meminfo", "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return os.freemem();
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
function fmtS(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
}
