// Faults at protocol points, not only at times: a trigger watches a stream of observations
// (a polled function, an async iterator of tap frames, the model's request log) and
// injectWhen() injects a prepared fault the moment the trigger's condition holds, recording
// the trigger time and the inject time in the timeline.
//
// Precision: a polled trigger sees the point up to one interval late, plus the inject itself
// (SIGKILL lands ~85-100 ms after the trigger frame here). For an exact cut at a frame, use a
// wire fault (the tap acts on the matching frame itself) rather than a triggered kill.
import type { Frame, TapControl, TapMatch } from "../clients/tap.ts";
import { frameMatches } from "../clients/tap.ts";
import type { HeldRequest, ModelControl, ModelRequest } from "../clients/model.ts";
import { sleep, StopWaiting, waitFor } from "../core/wait.ts";
import type { Fault, InjectTimings } from "./fault.ts";
import { nowMs } from "./timeline.ts";
import { deadline } from "../core/pace.ts";

export interface Trigger<T = unknown> {
  /** What it waits for (timeline, errors). */
  what: string;
  /** Start watching now; resolve with the observation that met the condition. Must stop
   * (reject) when `signal` aborts. */
  wait(signal: AbortSignal): Promise<T>;
}

/**
 * Poll `check` every intervalMs until it returns something other than undefined/null/false.
 * No deadline of its own (injectWhen's timeoutMs, cancel and heal end it); a check that throws
 * ends the watch with its error.
 */
export function poll<T>(what: string, check: () => Promise<T | undefined | null | false> | T | undefined | null | false, opts: { intervalMs?: number } = {}): Trigger<T> {
  return {
    what,
    async wait(signal) {
      const probe = async () => {
        try {
          return await check();
        } catch (err) {
          throw new StopWaiting((err as Error).message, { cause: err });
        }
      };
      return waitFor(what, probe, { timeoutMs: Infinity, intervalMs: opts.intervalMs ?? 25, signal });
    },
  };
}

/** The first item of an async stream that satisfies `predicate` (the stream is consumed). */
export function stream<T>(what: string, source: AsyncIterable<T> | ((signal: AbortSignal) => AsyncIterable<T>), predicate: (item: T, index: number) => boolean): Trigger<T> {
  return {
    what,
    async wait(signal) {
      const it = typeof source === "function" ? source(signal) : source;
      let i = 0;
      const aborted = new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      aborted.catch(() => {});
      const iter = it[Symbol.asyncIterator]();
      try {
        for (;;) {
          const r = await Promise.race([iter.next(), aborted]);
          if (r.done) throw new Error(`stream ended before ${what}`);
          if (predicate(r.value, i++)) return r.value;
        }
      } finally {
        void iter.return?.();
      }
    },
  };
}

/** Tap frames recorded after `since` (default: from now), as they arrive (polled). */
export async function* tapFrames(tap: TapControl, opts: { since?: number; intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<Frame> {
  let cursor = opts.since ?? (await tap.seq());
  const signal = opts.signal ?? new AbortController().signal;
  for (;;) {
    const batch = await tap.frames({ since: cursor });
    for (const f of batch) {
      cursor = f.seq;
      yield f;
    }
    await sleep(opts.intervalMs ?? 20, signal);
  }
}

/** A tap frame (from now on) that matches: a rule-style match or a predicate. */
export function tapFrame(tap: TapControl, match: TapMatch | ((f: Frame) => boolean), opts: { intervalMs?: number; what?: string } = {}): Trigger<Frame> {
  const test = typeof match === "function" ? match : (f: Frame) => frameMatches(match, f);
  const what = opts.what ?? `tap frame ${typeof match === "function" ? "(predicate)" : JSON.stringify(match)}`;
  return {
    what,
    async wait(signal) {
      // The cursor is taken before watching starts: frames after this call count.
      const since = await tap.seq();
      return stream(what, (s) => tapFrames(tap, { since, intervalMs: opts.intervalMs, signal: s }), test).wait(signal);
    },
  };
}

/** Tool calls the model has finished streaming (in requests recorded from now on) reach `n`. */
export function modelToolCalls(model: ModelControl, n: number, opts: { tool?: string; intervalMs?: number } = {}): Trigger<{ toolCalls: number; requests: ModelRequest[] }> {
  const what = `model streamed ${n} tool call(s)${opts.tool ? ` of ${opts.tool}` : ""}`;
  return {
    what,
    async wait(signal) {
      const since = (await model.requests()).reduce((m, r) => Math.max(m, r.seq), 0);
      return poll(
        what,
        async () => {
          const requests = await model.requests({ since });
          const toolCalls = requests.flatMap((r) => r.output).filter((o) => o.type === "function_call" && (!opts.tool || o.name === opts.tool)).length;
          return toolCalls >= n ? { toolCalls, requests } : undefined;
        },
        { intervalMs: opts.intervalMs ?? 50 },
      ).wait(signal);
    },
  };
}

/** A model request is held (after model.hold(...)): the model is mid-stream. */
export function modelHeld(model: ModelControl, predicate: (h: HeldRequest) => boolean = () => true, opts: { intervalMs?: number } = {}): Trigger<HeldRequest> {
  return poll("model request held", async () => (await model.held()).find(predicate), { intervalMs: opts.intervalMs ?? 50 });
}

/** Plain time: `ms` after arming. */
export function after(ms: number): Trigger<number> {
  return {
    what: `${ms} ms`,
    async wait(signal) {
      await sleep(ms, signal);
      return ms;
    },
  };
}

/** `trigger`, then `then(value)` before the fault is injected (e.g. a snapshot of what the user sees just before). */
export function thenBeforeInject<T>(trigger: Trigger<T>, then: (value: T) => Promise<void>): Trigger<T> {
  return {
    what: trigger.what,
    async wait(signal) {
      const value = await trigger.wait(signal);
      await then(value);
      return value;
    },
  };
}

export interface Triggered<T> {
  /** The observation that met the condition. */
  value: T;
  /** When the trigger was armed / met (epoch ms). */
  armedAt: number;
  triggeredAt: number;
  /** Trigger met -> fault in effect. */
  reactionMs: number;
  inject: InjectTimings;
}

export interface ArmedFault<T> {
  fault: Fault;
  trigger: Trigger<T>;
  /** Settles when the fault has been injected (or the trigger failed, timed out or was cancelled). */
  injected: Promise<Triggered<T>>;
  /** Stop watching; the fault stays prepared (heal() or the lab's teardown cleans it up). */
  cancel(): void;
}

/**
 * Prepare `fault` (so that the inject itself is quick), then watch `trigger` and inject the
 * moment it holds. Resolves once armed. The fault is registered on its lab's teardown from the
 * start: healing it (or draining the teardown) before the trigger fires cancels the watch.
 */
export async function injectWhen<T>(trigger: Trigger<T>, fault: Fault, opts: { timeoutMs?: number } = {}): Promise<ArmedFault<T>> {
  await fault.prepare();
  const cancel = new AbortController();
  const signals = [cancel.signal, fault.lifetime];
  // The lab's own wait for its trigger (it never fired: the scenario cannot go on), at the machine's pace.
  if (opts.timeoutMs) signals.push(AbortSignal.timeout(deadline(opts.timeoutMs))); // paced
  const signal = AbortSignal.any(signals);
  const armedAt = nowMs();
  const t0 = performance.now();
  const injected = (async (): Promise<Triggered<T>> => {
    let value: T;
    try {
      value = await trigger.wait(signal);
    } catch (err) {
      const why = signal.aborted ? (cancel.signal.aborted ? "cancelled" : fault.lifetime.aborted ? "fault healed first" : "timed out") : (err as Error).message;
      fault.record("trigger", armedAt, performance.now() - t0, { what: trigger.what, met: false, why });
      throw new Error(`${fault}: trigger '${trigger.what}' never fired (${why})`, { cause: err });
    }
    const waited = performance.now() - t0;
    const triggeredAt = armedAt + waited;
    fault.record("trigger", armedAt, waited, { what: trigger.what, met: true });
    const inject = await fault.inject();
    return { value, armedAt, triggeredAt, reactionMs: performance.now() - t0 - waited, inject };
  })();
  injected.catch(() => {}); // the caller may never look; the timeline has it
  return { fault, trigger, injected, cancel: () => cancel.abort(new Error("cancelled")) };
}
