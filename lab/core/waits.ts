// Where a scenario's body spends its time waiting. The one wait primitive (lab/core/wait.ts)
// records each wait into the ledger of the scenario it runs in (an async context, like the
// escape scopes of lab/core/escapes.ts), as one of three kinds:
// - "observed": a wait that ended because what it waited for happened (OpenClaw connected,
//   answered, restarted): time OpenClaw took, the lab waiting on it;
// - "window": a wait that ran its whole window out (a bound polled to its end: "X stays absent
//   for 30 s", or an expectation that did not hold): time an expectation imposes whatever
//   OpenClaw does, and the floor a known finding costs each run;
// - "request": a request to the gateway awaiting its answer (an RPC; agent.wait holds it for a
//   whole turn): OpenClaw at work, or holding the answer;
// - "pause": a sleep of the scenario's own (positioning a send, pacing attempts).
// Waits overlap (a wait inside another's probe, two side by side): the breakdown counts each
// millisecond once, as window before observed before request before pause. What no wait covers
// is the lab's own work in the body: faults, commands in containers, reading evidence.
import { AsyncLocalStorage } from "node:async_hooks";

export type WaitKind = "window" | "observed" | "request" | "pause";
const RANK: Record<WaitKind, number> = { window: 4, observed: 3, request: 2, pause: 1 };

export interface WaitInterval {
  kind: WaitKind;
  from: number;
  to: number;
}

/** The waits of one scenario body. */
export class WaitLedger {
  readonly intervals: WaitInterval[] = [];
  add(kind: WaitKind, from: number, to: number): void {
    if (to > from) this.intervals.push({ kind, from, to });
  }
}

const ledgers = new AsyncLocalStorage<WaitLedger>();

/** Run `fn` with `ledger` collecting the waits made inside it (and in whatever it starts). */
export function withWaitLedger<T>(ledger: WaitLedger, fn: () => T): T {
  return ledgers.run(ledger, fn);
}

/** Record a wait of the current scenario (none outside one). */
export function recordWait(kind: WaitKind, from: number, to = Date.now()): void {
  ledgers.getStore()?.add(kind, from, to);
}

export interface WaitBreakdown {
  windowMs: number;
  observedMs: number;
  requestMs: number;
  pauseMs: number;
}

/** The ledger's waits within [from, to], each millisecond counted once, in the kind that ranks highest. */
export function waitBreakdown(intervals: WaitInterval[], from: number, to: number): WaitBreakdown {
  const cuts = new Set<number>([from, to]);
  for (const i of intervals) {
    if (i.to <= from || i.from >= to) continue;
    cuts.add(Math.max(i.from, from));
    cuts.add(Math.min(i.to, to));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out: WaitBreakdown = { windowMs: 0, observedMs: 0, requestMs: 0, pauseMs: 0 };
  for (let k = 0; k + 1 < points.length; k++) {
    const a = points[k]!;
    const b = points[k + 1]!;
    let best: WaitKind | undefined;
    for (const i of intervals) if (i.from <= a && i.to >= b && (!best || RANK[i.kind] > RANK[best])) best = i.kind;
    if (best) out[`${best}Ms`] += b - a;
  }
  return out;
}

/** A body's time and its waits in seconds, as run.json keeps them (scenarios[].waits). */
export interface BodyWaits {
  bodyS: number;
  windowS: number;
  observedS: number;
  requestS?: number;
  pauseS: number;
}

/** The waits of a body that ran over [from, to], in seconds. */
export function bodyWaits(intervals: WaitInterval[], from: number, to: number): BodyWaits {
  const b = waitBreakdown(intervals, from, to);
  return { bodyS: (to - from) / 1000, windowS: b.windowMs / 1000, observedS: b.observedMs / 1000, requestS: b.requestMs / 1000, pauseS: b.pauseMs / 1000 };
}

/** What no wait covers: the lab's own work in the body (s). */
export function ownWorkS(w: BodyWaits): number {
  return Math.max(0, w.bodyS - w.windowS - w.observedS - (w.requestS ?? 0) - w.pauseS);
}
