// The one wait primitive of the lab: poll a probe until it yields a value, with a deadline,
// a description of what is awaited, and an AbortSignal that ends the wait at once (a
// scenario that timed out, a fault being healed). Every wait in the lab goes through here;
// a wait that ends with nothing observed throws: it is never a pass.
import { step } from "./log.ts";
import { PacedBudget, pacedTimer } from "./pace.ts";
import { recordWait } from "./waits.ts";

export interface WaitOptions {
  /**
   * The deadline in reference-machine ms, spent at the machine's pace (lab/core/pace.ts): a wait of
   * the lab's own. With `bound: "expectation"` it is wall time, fixed: the bound is what is judged.
   */
  timeoutMs: number;
  /** "expectation": timeoutMs is the expectation itself (OpenClaw's documented limit), not paced. */
  bound?: "lab" | "expectation";
  /** Poll interval (default 200 ms). */
  intervalMs?: number;
  /** Ends the wait at once, throwing the signal's reason. */
  signal?: AbortSignal;
  /** What was last seen, for the time-out message (default: the probe's last error). */
  lastState?: () => string;
  /**
   * Show the wait as a step of the lab's progress output (what it waits for and for how long),
   * for waits that can take tens of seconds; one over within a second shows nothing.
   * true: "waiting for <what>"; a string: that label.
   */
  progress?: boolean | string;
}

/** A probe throws this to end the wait at once (e.g. the container it waits on exited). */
export class StopWaiting extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StopWaiting";
  }
}

/** The wait ran out of time with nothing observed. */
export class WaitTimeout extends Error {
  readonly what: string;
  readonly timeoutMs: number;
  readonly lastState: string;
  /** A lab-side deadline that passed on a machine busier than planned: why (lab/core/pace.ts machineBusyIn). */
  readonly machineBusy?: string;
  /** Wall ms it took, when paced. */
  readonly wallMs?: number;
  constructor(
    what: string,
    timeoutMs: number,
    lastState: string,
    machineBusy?: string,
    wallMs?: number,
  ) {
    super(
      `timed out after ${fmtMs(timeoutMs)}${wallMs !== undefined && Math.abs(wallMs - timeoutMs) > 1_000 ? ` at the machine's pace (${fmtMs(wallMs)} of wall time)` : ""} waiting for ${what}${lastState ? ` (${lastState})` : ""}${machineBusy ? `; ${machineBusy}` : ""}`,
    );
    this.what = what;
    this.timeoutMs = timeoutMs;
    this.lastState = lastState;
    this.machineBusy = machineBusy;
    this.wallMs = wallMs;
    this.name = "WaitTimeout";
  }
}

/**
 * Poll `probe` until it returns something other than undefined (or null/false), and return it.
 * A probe that throws is retried (its message is kept for the time-out), except StopWaiting,
 * which ends the wait at once.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, opts: WaitOptions): Promise<T> {
  if (opts.progress) {
    const label = typeof opts.progress === "string" ? opts.progress : `waiting for ${what}`;
    return step(label, () => waitFor(what, probe, { ...opts, progress: undefined }), { showAfterMs: 1_000 });
  }
  const budget = new PacedBudget(opts.timeoutMs, opts.bound === "expectation");
  const began = Date.now();
  let lastErr: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) {
        recordWait("observed", began);
        return v as T;
      }
    } catch (err) {
      if (err instanceof StopWaiting || opts.signal?.aborted) throw err;
      lastErr = err;
    }
    if (budget.expired()) {
      recordWait("window", began);
      const state = opts.lastState?.() ?? (lastErr ? `last error: ${(lastErr as Error).message}` : "");
      throw new WaitTimeout(what, opts.timeoutMs, state, budget.busy(), budget.fixed ? undefined : budget.elapsed());
    }
    await pause(Math.min(opts.intervalMs ?? 200, budget.leftWallMs()), opts.signal);
  }
}

/**
 * A sleep that an AbortSignal ends early (throwing its reason). For pacing, never for deciding
 * outcomes. Counted as a pause of the scenario it runs in (lab/core/waits.ts).
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  const began = Date.now();
  try {
    await pause(ms, signal);
  } finally {
    recordWait("pause", began);
  }
}

/** sleep, not recorded: the interval between a wait's polls (the wait itself is). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Race a promise against a lab-side deadline (`ms` reference ms, spent at the machine's pace; see
 * lab/core/pace.ts); the controller is aborted when the deadline passes.
 */
export async function withDeadline<T>(fn: (signal: AbortSignal) => Promise<T>, ms: number, message: string, parent?: AbortSignal): Promise<T> {
  const ctl = new AbortController();
  const onParent = () => ctl.abort(parent!.reason);
  parent?.addEventListener("abort", onParent, { once: true });
  let timer: { clear: () => void } | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = pacedTimer(ms, (b) => {
      const err = new DeadlineExceeded(message, b.busy());
      ctl.abort(err);
      reject(err);
    });
  });
  try {
    return await Promise.race([fn(ctl.signal), expired]);
  } finally {
    timer?.clear();
    parent?.removeEventListener("abort", onParent);
  }
}

export class DeadlineExceeded extends Error {
  /** The deadline passed on a machine busier than planned: why (lab/core/pace.ts machineBusyIn). */
  readonly machineBusy?: string;
  constructor(
    message: string,
    machineBusy?: string,
  ) {
    super(machineBusy ? `${message}; ${machineBusy}` : message);
    this.machineBusy = machineBusy;
    this.name = "DeadlineExceeded";
  }
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${ms} ms`;
}

export interface PollOptions {
  /** How long the expected state is polled for, counted from `from`. */
  deadlineMs: number;
  /** Date.now() of the event the deadline counts from (the kill, the abort); default: when called. */
  from?: number;
  /** Poll interval (default 200 ms). */
  intervalMs?: number;
  /** Ends the poll at once, throwing the signal's reason. */
  signal?: AbortSignal;
}

export interface Polled<T> {
  /** `holds` was true of an observation before the deadline. */
  held: boolean;
  /** The observation that held, or else the last one: the state at the deadline. */
  last: T;
  /** From `from` to when `last` was observed. */
  ms: number;
  polls: number;
}

/**
 * Poll `probe` until `holds` is true of what it observes, or until the deadline; return the
 * observation either way. For judging an expectation with a bound ("within 20 s"): a fix that
 * lands a little slower than today's behaviour is still seen as a fix, and what does not hold
 * is the state at the deadline, not a snapshot taken after some sleep. For "X stays absent for
 * T", pass a `holds` that says X appeared: held false is then the positive observation that it
 * did not within T.
 * The probe runs at least once and once more at the deadline. A probe that throws is retried,
 * except StopWaiting (ends the poll at once); a deadline with no observation at all throws
 * WaitTimeout (nothing observed is never an outcome). When only the last probes failed, `last`
 * is the latest observation and `ms` says when it was made.
 */
export async function pollUntil<T>(what: string, probe: () => Promise<T> | T, holds: (v: T) => boolean, opts: PollOptions): Promise<Polled<T>> {
  const began = Date.now();
  const from = opts.from ?? began;
  const deadline = from + opts.deadlineMs;
  let seen: { v: T; at: number } | undefined;
  let lastErr: unknown;
  let polls = 0;
  for (;;) {
    opts.signal?.throwIfAborted();
    polls += 1;
    try {
      const v = await probe();
      seen = { v, at: Date.now() };
      if (holds(v)) {
        recordWait("observed", began);
        return { held: true, last: v, ms: seen.at - from, polls };
      }
    } catch (err) {
      if (err instanceof StopWaiting || opts.signal?.aborted) throw err;
      lastErr = err;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      recordWait("window", began);
      if (!seen) throw new WaitTimeout(what, opts.deadlineMs, `nothing observed${lastErr ? `; last error: ${(lastErr as Error).message}` : ""}`);
      return { held: false, last: seen.v, ms: seen.at - from, polls };
    }
    await pause(Math.min(opts.intervalMs ?? 200, left), opts.signal);
  }
}
