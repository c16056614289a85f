// Stalls of the lab's own process: times its event loop did not run for a while (a long
// synchronous step, the machine starved). While it stalls the lab reads no socket and fires no
// timer, so a timing it measures across a stall is partly its own: a scenario whose window
// holds one says so in its verdict detail and in run.json, and `make bench` counts them.
// Sampled every TICK_MS: a tick that comes more than STALL_MS late is a stall of that length.
import { monitorEventLoopDelay } from "node:perf_hooks";

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
  readonly #timer: NodeJS.Timeout;
  readonly #histogram = monitorEventLoopDelay({ resolution: 20 });

  private constructor() {
    this.#histogram.enable();
    this.#timer = setInterval(() => {
      const t = Date.now();
      const late = t - this.#last - TICK_MS;
      if (late >= COUNTED_MS) this.counted.push({ endedAt: t, ms: late });
      if (late >= STALL_MS) this.stalls.push({ endedAt: t, ms: late });
      this.#last = t;
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

/** The run's summary of its own process's stalls since `from` (ms since the epoch), for run.json and its last lines. */
export function stallSummary(w: StallWatch, from: number): { over250ms: number; over1s: number; longestMs: number; delayMs: { p50: number; p99: number; max: number } } {
  const c = w.counted.filter((s) => s.endedAt >= from);
  return { over250ms: c.length, over1s: c.filter((s) => s.ms >= STALL_MS).length, longestMs: c.reduce((a, s) => Math.max(a, s.ms), 0), delayMs: w.delay() };
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
  return `the lab's own process stalled ${(total / 1000).toFixed(1)} s in ${stalls.length} stall(s) during this scenario (longest ${(worst.ms / 1000).toFixed(1)} s, from ${new Date(worst.endedAt - worst.ms).toISOString().slice(11, 23)}Z): timings measured across a stall are partly the lab's`;
}
