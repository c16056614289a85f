// The one wait primitive of the lab: poll a probe until it yields a value, with a deadline,
// a description of what is awaited, and an AbortSignal that ends the wait at once (a
// scenario that timed out, a fault being healed). Every wait in the lab goes through here;
// a wait that ends with nothing observed throws: it is never a pass.
import { step } from "./log.ts";

export interface WaitOptions {
  timeoutMs: number;
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
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly lastState: string,
  ) {
    super(`timed out after ${fmtMs(timeoutMs)} waiting for ${what}${lastState ? ` (${lastState})` : ""}`);
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
  const deadline = performance.now() + opts.timeoutMs;
  let lastErr: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v as T;
    } catch (err) {
      if (err instanceof StopWaiting || opts.signal?.aborted) throw err;
      lastErr = err;
    }
    if (performance.now() >= deadline) {
      const state = opts.lastState?.() ?? (lastErr ? `last error: ${(lastErr as Error).message}` : "");
      throw new WaitTimeout(what, opts.timeoutMs, state);
    }
    await sleep(Math.min(opts.intervalMs ?? 200, Math.max(0, deadline - performance.now())), opts.signal);
  }
}

/** A sleep that an AbortSignal ends early (throwing its reason). For pacing, never for deciding outcomes. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/** Race a promise against a deadline; the controller is aborted when the deadline passes. */
export async function withDeadline<T>(fn: (signal: AbortSignal) => Promise<T>, ms: number, message: string, parent?: AbortSignal): Promise<T> {
  const ctl = new AbortController();
  const onParent = () => ctl.abort(parent!.reason);
  parent?.addEventListener("abort", onParent, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new DeadlineExceeded(message);
      ctl.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([fn(ctl.signal), expired]);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", onParent);
  }
}

export class DeadlineExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeadlineExceeded";
  }
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${ms} ms`;
}
