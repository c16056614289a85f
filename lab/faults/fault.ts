// One life cycle for every fault (after roachtest's failure injection):
//   prepare -> inject -> wait until observably in effect -> heal -> wait until healed -> clean up
// with each step timed into the run's fault timeline. A prepared fault registers its heal on
// its lab's teardown stack at once: the runner drains it after the scenario, Lab.down() and
// the interrupt handler (Ctrl-C, SIGTERM) drain it; `prune` removes what a killed run left.
import type { TeardownStack } from "../topology/teardown.ts";
import { waitFor, WaitTimeout } from "../core/wait.ts";
import { FaultTimeline, nowMs, timelineOf, type FaultStep, type RunLike } from "./timeline.ts";

/** What faults need of a lab. Lab (lab/topology/lab.ts) has this shape. */
export interface FaultLab {
  id: string;
  run: RunLike;
  /** Where a fault registers its heal: the lab drains it after the scenario, in down() and on interrupt. */
  teardown: TeardownStack;
  network: { name: string; id: string };
  images: { base: { tag: string } };
  member(alias: string): { alias: string; id: string; ip: string };
}

export type Detail = Record<string, unknown>;

export interface FaultOptions {
  /** Where the heal is registered (default: the lab's teardown stack; none for a bare tap). */
  teardown?: TeardownStack;
  /** Where steps are recorded; default: the lab's run timeline (faults.jsonl in the run folder). */
  timeline?: FaultTimeline;
  /** Longest wait for "in effect" and for "healed" (default per kind). */
  timeoutMs?: number;
  /** Poll interval of those waits (default 20 ms). */
  intervalMs?: number;
  /** An extra observation that must hold too before the fault counts as in effect
   * (e.g. "node.list shows the node disconnected"). */
  inEffectWhen?: () => Promise<boolean>;
  /** Likewise for healed (e.g. "the node is connected again"). */
  healedWhen?: () => Promise<boolean>;
}

export type FaultState = "new" | "prepared" | "injecting" | "in-effect" | "healing" | "healed" | "cleaned";

export interface InjectTimings {
  /** Time spent preparing, when inject() had to prepare first (not part of inject -> in effect). */
  prepareMs?: number;
  injectMs: number;
  /** From the end of inject to the first observation that the fault is in effect. */
  inEffectMs: number;
  /** inject call start -> in effect observed. */
  totalMs: number;
  detail: Detail;
}

export interface HealTimings {
  healMs: number;
  healedMs: number;
  cleanupMs: number;
  /** heal call start -> healed observed. */
  totalMs: number;
  detail: Detail;
}

export class FaultAborted extends Error {}

let counter = 0;

export abstract class Fault {
  abstract readonly kind: string;
  readonly id = `f${++counter}`;
  state: FaultState = "new";
  /** Milliseconds per step, as recorded in the timeline. */
  readonly timings: Partial<Record<FaultStep, number>> = {};
  /** When inject was called and when the fault was first seen in effect (epoch ms). */
  injectedAt?: number;
  inEffectAt?: number;
  readonly timeline: FaultTimeline;
  /** Aborted when healing starts: pending waits and triggers stop. */
  protected readonly life = new AbortController();
  #chain: Promise<unknown> = Promise.resolve();
  #unregister?: () => void;
  #injectAttempted = false;
  #teardown?: TeardownStack;

  /** Who it acts on, as written in the timeline. */
  readonly target: string;
  protected readonly opts: FaultOptions & { run?: RunLike };
  constructor(
    target: string,
    opts: FaultOptions & { run?: RunLike },
    /** The teardown stack of the lab it belongs to (opts.teardown wins). */
    teardown?: TeardownStack,
  ) {
    this.target = target;
    this.opts = opts;
    this.timeline = opts.timeline ?? (opts.run ? timelineOf(opts.run) : defaultTimeline);
    this.#teardown = opts.teardown ?? teardown;
  }

  // ---- what each kind does ----
  /** Get ready so that inject is quick (e.g. start the helper container). */
  protected async doPrepare(): Promise<Detail | void> {}
  protected abstract doInject(): Promise<Detail | void>;
  /** A detail when the fault is observably in effect; undefined while it is not yet. */
  protected abstract inEffect(): Promise<Detail | undefined>;
  /** Undo it. Must be safe to run twice and after a half-done inject. */
  protected abstract doHeal(): Promise<Detail | void>;
  protected abstract isHealed(): Promise<Detail | undefined>;
  protected async doCleanup(): Promise<Detail | void> {}
  protected defaultTimeoutMs(): number {
    return 10_000;
  }

  /** Longer description for messages. */
  toString(): string {
    return `${this.kind} ${this.target} (${this.id})`;
  }

  /** Prepare (idempotent); returns the time it took. */
  prepare(): Promise<number> {
    return this.#serial(async () => {
      if (this.state !== "new") return 0;
      this.#register();
      const t0 = performance.now();
      try {
        await this.#step("prepare", () => this.doPrepare());
      } catch (err) {
        // Undo a half-done prepare (e.g. a helper started before a later check failed).
        await this.doCleanup().catch(() => {});
        this.state = "cleaned";
        this.#deregister();
        throw err;
      }
      this.state = "prepared";
      return performance.now() - t0;
    });
  }

  /** Inject and wait until the fault is observably in effect (prepares first if needed). */
  async inject(): Promise<InjectTimings> {
    const prepareMs = this.state === "new" ? await this.prepare() : undefined;
    return this.#serial(async () => {
      if (this.state !== "prepared") throw new Error(`${this}: cannot inject in state ${this.state} (a fault is injected once; make a new one)`);
      this.state = "injecting";
      this.#injectAttempted = true;
      const t0 = performance.now();
      this.injectedAt = nowMs();
      const injected = await this.#step("inject", () => this.doInject());
      const t1 = performance.now();
      const seen = await this.#step("in-effect", () => this.#waitFor("in effect", () => this.inEffect(), this.opts.inEffectWhen));
      const t2 = performance.now();
      this.inEffectAt = this.injectedAt + (t2 - t0);
      this.state = "in-effect";
      return { prepareMs, injectMs: t1 - t0, inEffectMs: t2 - t1, totalMs: t2 - t0, detail: { ...injected, ...seen } };
    });
  }

  /**
   * Heal, wait until healed, clean up. Safe at any point of the life cycle: a prepared fault
   * is only cleaned up; a healed one is left alone. Aborts a wait for "in effect" in progress.
   */
  heal(): Promise<HealTimings> {
    this.life.abort(new FaultAborted(`${this} is being healed`));
    return this.#serial(async () => {
      const none = { healMs: 0, healedMs: 0, cleanupMs: 0, totalMs: 0, detail: {} };
      if (this.state === "cleaned") return none;
      const t0 = performance.now();
      let healed: Detail = {};
      try {
        if (this.#injectAttempted && this.state !== "healed") {
          this.state = "healing";
          healed = { ...(await this.#step("heal", () => this.doHeal())) };
          const t1 = performance.now();
          Object.assign(healed, await this.#step("healed", () => this.#waitFor("healed", () => this.isHealed(), this.opts.healedWhen, false)));
          this.state = "healed";
          const t2 = performance.now();
          await this.#step("cleanup", () => this.doCleanup());
          return { healMs: t1 - t0, healedMs: t2 - t1, cleanupMs: performance.now() - t2, totalMs: t2 - t0, detail: healed };
        }
        if (this.state !== "new") await this.#step("cleanup", () => this.doCleanup());
        return { ...none, cleanupMs: performance.now() - t0 };
      } finally {
        // A fault whose healing failed stays registered: the lab's teardown tries again
        // (down(), interrupt), and prune (helper labels) is the last resort.
        if (this.state === "healed" || this.state === "prepared" || this.state === "new") {
          this.state = "cleaned";
          this.#deregister();
        }
      }
    });
  }

  /** True once the fault is gone (healed and cleaned up, or never injected and cleaned up). */
  get done(): boolean {
    return this.state === "cleaned";
  }

  /** Record a step that happened outside the life-cycle methods (trigger, fired, ...). */
  record(step: FaultStep, t: number, ms: number, detail?: Detail): void {
    this.timings[step] = ms;
    this.timeline.add({ id: this.id, fault: this.kind, target: this.target, step, t, ms, ...(detail && Object.keys(detail).length ? { detail } : {}) });
  }

  /** The signal that ends when healing starts (for triggers armed on this fault). */
  get lifetime(): AbortSignal {
    return this.life.signal;
  }

  async #step<T extends Detail | void>(step: FaultStep, fn: () => Promise<T>): Promise<T> {
    const t = nowMs();
    const t0 = performance.now();
    try {
      const out = await fn();
      this.record(step, t, performance.now() - t0, out ? (out as Detail) : undefined);
      return out;
    } catch (err) {
      const ms = performance.now() - t0;
      this.timeline.add({ id: this.id, fault: this.kind, target: this.target, step: "failed", t, ms, detail: { during: step }, error: (err as Error).message });
      throw err;
    }
  }

  async #waitFor(what: string, probe: () => Promise<Detail | undefined>, also: (() => Promise<boolean>) | undefined, abortable = true): Promise<Detail> {
    const timeoutMs = this.opts.timeoutMs ?? this.defaultTimeoutMs();
    let last: string | undefined;
    let polls = 0;
    try {
      return await waitFor(
        `${this} ${what}`,
        async () => {
          polls++;
          try {
            const d = await probe();
            if (d !== undefined && (!also || (await also()))) return { ...d, polls };
            last = d ? "the extra condition (inEffectWhen/healedWhen) did not hold" : undefined;
          } catch (err) {
            last = (err as Error).message;
            throw err;
          }
        },
        // Healing aborts a wait for "in effect"; the wait for "healed" runs to its end.
        { timeoutMs, intervalMs: this.opts.intervalMs ?? 20, signal: abortable ? this.life.signal : undefined, lastState: () => last ?? "" },
      );
    } catch (err) {
      // Healing started: say so, whatever the probe in flight threw.
      if (abortable && this.life.signal.aborted) throw this.life.signal.reason;
      // The message node-loss summaries and findings quote: "<fault>: not in effect within N ms (...)".
      if (err instanceof WaitTimeout) throw new Error(`${this}: not ${what} within ${timeoutMs} ms${last ? ` (${last})` : ""}`, { cause: err });
      throw err;
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  #register(): void {
    if (this.#unregister) return;
    this.#unregister = this.#teardown?.defer(`heal ${this}`, () => this.heal()) ?? (() => {});
  }

  #deregister(): void {
    this.#unregister?.();
    this.#unregister = undefined;
  }
}

/** The timeline faults without a run record to (memory only). */
export const defaultTimeline = new FaultTimeline();
