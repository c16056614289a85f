// Stalls of the lab's own process: times its event loop did not run for a while (a long
// synchronous step, the machine starved). While it stalls the lab reads no socket and fires no
// timer, so a timing it measures across a stall is partly its own: a scenario whose window
// holds one says so in its verdict detail and in run.json, and `make bench` counts them.
// Sampled every TICK_MS: a tick that comes more than STALL_MS late is a stall of that length.
//
// Each counted stall says where the main thread was meanwhile, from the kernel's own account of it
// (/proc/self/task/<pid>/schedstat: time on a CPU, time waiting for one): running (synchronous
// work, garbage collection: `cpuMs`, of it `gcMs`), waiting for a CPU (the machine starved it:
// `queuedMs`) or neither (blocked in a system call, a synchronous read or write: `blockedMs`).
// What to remove follows from which.
import fs from "node:fs";
import { PerformanceObserver, monitorEventLoopDelay } from "node:perf_hooks";

export const TICK_MS = 100;
/** A late tick shorter than this is ordinary jitter, not reported in a verdict. */
export const STALL_MS = 1_000;
/** A late tick this long or longer is counted in the run's summary (the goal: none). */
export const COUNTED_MS = 250;

export interface Stall {
  /** When the loop ran again (ms since the epoch). */
  endedAt: number;
  /** How long it did not run (ms, beyond the tick). */
  ms: number;
  /** Where the main thread was across the tick (its whole interval): see the header. Absent where the kernel keeps no schedstat. */
  where?: StallCause;
}

export interface StallCause {
  /** On a CPU (synchronous work, garbage collection). */
  cpuMs: number;
  /** Of cpuMs, garbage collection (perf_hooks' gc entries that ended in the interval). */
  gcMs: number;
  /** Runnable, waiting for a CPU: the machine starved it. */
  queuedMs: number;
  /** Neither: blocked in a system call (a synchronous read, write or wait). */
  blockedMs: number;
}

/** The main thread's time on a CPU and waiting for one (ms), from the kernel; undefined without schedstat. */
export function mainThreadSched(file = `/proc/self/task/${process.pid}/schedstat`): { cpuMs: number; queuedMs: number } | undefined {
  try {
    const [run, wait] = fs.readFileSync(file, "utf8").trim().split(/\s+/).map(Number);
    if (!Number.isFinite(run) || !Number.isFinite(wait)) return undefined;
    return { cpuMs: run! / 1e6, queuedMs: wait! / 1e6 };
  } catch {
    return undefined;
  }
}

/** Where an interval of `elapsedMs` went, from two schedstat readings and the GC time in it. */
export function stallCause(before: { cpuMs: number; queuedMs: number }, after: { cpuMs: number; queuedMs: number }, elapsedMs: number, gcMs: number): StallCause {
  const cpuMs = Math.max(0, after.cpuMs - before.cpuMs);
  const queuedMs = Math.max(0, after.queuedMs - before.queuedMs);
  const r = (x: number) => Math.round(x);
  return { cpuMs: r(cpuMs), gcMs: r(Math.min(gcMs, cpuMs)), queuedMs: r(queuedMs), blockedMs: r(Math.max(0, elapsedMs - cpuMs - queuedMs)) };
}

/** Watches this process's event loop from the first call on; one watcher per process. */
export class StallWatch {
  static #one: StallWatch | undefined;
  static get(): StallWatch {
    return (StallWatch.#one ??= new StallWatch());
  }

  readonly stalls: Stall[] = [];
  /** Every late tick of COUNTED_MS or more (the stalls above included). */
  readonly counted: Stall[] = [];
  #last = Date.now();
  #sched = mainThreadSched();
  /** GC time (ms) of entries that ended since the last tick. */
  #gcMs = 0;
  readonly #timer: NodeJS.Timeout;
  readonly #histogram = monitorEventLoopDelay({ resolution: 20 });

  private constructor() {
    this.#histogram.enable();
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.#gcMs += e.duration;
    });
    gc.observe({ entryTypes: ["gc"] });
    this.#timer = setInterval(() => {
      const t = Date.now();
      const late = t - this.#last - TICK_MS;
      const sched = mainThreadSched();
      if (late >= COUNTED_MS) {
        const stall: Stall = { endedAt: t, ms: late };
        if (this.#sched && sched) stall.where = stallCause(this.#sched, sched, t - this.#last, this.#gcMs);
        this.counted.push(stall);
        if (late >= STALL_MS) this.stalls.push(stall);
      }
      this.#last = t;
      this.#sched = sched;
      this.#gcMs = 0;
    }, TICK_MS);
    this.#timer.unref();
  }

  /** Stalls that overlap [from, to] (ms since the epoch). */
  within(from: number, to: number): Stall[] {
    return overlapping(this.stalls, from, to);
  }

  /** The event loop's delay percentiles so far (ms). */
  delay(): { p50: number; p99: number; max: number } {
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    return { p50: ms(this.#histogram.percentile(50)), p99: ms(this.#histogram.percentile(99)), max: ms(this.#histogram.max) };
  }
}

export interface StallSummary {
  over250ms: number;
  over1s: number;
  longestMs: number;
  delayMs: { p50: number; p99: number; max: number };
  /** The counted stalls' intervals summed by where the main thread was (ms), when the kernel said. */
  where?: StallCause;
  /** The longest counted stalls (up to 10): when each began, how long, where the thread was. */
  longest?: { from: string; ms: number; where?: StallCause }[];
}

/** The run's summary of its own process's stalls since `from` (ms since the epoch), for run.json and its last lines. */
export function stallSummary(w: StallWatch, from: number): StallSummary {
  const c = w.counted.filter((s) => s.endedAt >= from);
  const out: StallSummary = { over250ms: c.length, over1s: c.filter((s) => s.ms >= STALL_MS).length, longestMs: c.reduce((a, s) => Math.max(a, s.ms), 0), delayMs: w.delay() };
  const told = c.flatMap((s) => (s.where ? [s.where] : []));
  if (told.length) out.where = told.reduce((a, x) => ({ cpuMs: a.cpuMs + x.cpuMs, gcMs: a.gcMs + x.gcMs, queuedMs: a.queuedMs + x.queuedMs, blockedMs: a.blockedMs + x.blockedMs }));
  if (c.length) out.longest = [...c].sort((a, b) => b.ms - a.ms).slice(0, 10).map((s) => ({ from: new Date(s.endedAt - s.ms).toISOString(), ms: s.ms, ...(s.where ? { where: s.where } : {}) }));
  return out;
}

/** "on a CPU 1.2 s (GC 0.1 s), waiting for a CPU 0.3 s, blocked 2.0 s" for a summary line. */
export function causeText(w: StallCause): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return `on a CPU ${s(w.cpuMs)} (GC ${s(w.gcMs)}), waiting for a CPU ${s(w.queuedMs)}, blocked in a system call ${s(w.blockedMs)}`;
}

/** The stalls of `list` that overlap [from, to]. */
export function overlapping(list: Stall[], from: number, to: number): Stall[] {
  return list.filter((s) => s.endedAt >= from && s.endedAt - s.ms <= to);
}

/** One line for a verdict's detail: "the lab's own process stalled 24.4 s (at 14:30:28Z) ...". */
export function stallNote(stalls: Stall[]): string | undefined {
  if (!stalls.length) return undefined;
  const total = stalls.reduce((a, s) => a + s.ms, 0);
  const worst = stalls.reduce((a, s) => (s.ms > a.ms ? s : a));
  const where = worst.where ? `; the longest ${causeText(worst.where)}` : "";
  return `the lab's own process stalled ${(total / 1000).toFixed(1)} s in ${stalls.length} stall(s) during this scenario (longest ${(worst.ms / 1000).toFixed(1)} s, from ${new Date(worst.endedAt - worst.ms).toISOString().slice(11, 23)}Z${where}): timings measured across a stall are partly the lab's`;
}
