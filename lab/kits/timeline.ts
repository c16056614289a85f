// A scenario's own fault timeline: every step of its faults written to
// <scenario>/faults.jsonl as it happens (and to the run's timeline), a per-fault summary of
// how long each step took, and withFaults(), which undoes whatever the scenario left on the
// lab's teardown stack when it ends.
import fs from "node:fs";
import { FaultTimeline, timelineOf, type TimelineEntry } from "../faults/index.ts";
import type { ScenarioContext } from "../scenario.ts";

/**
 * A timeline that writes this scenario's fault steps to `<scenario>/faults.jsonl` as they
 * happen (a run killed mid-fault still leaves them) and also adds them to the run's timeline
 * (the run folder's faults.jsonl, named in run.json).
 */
export class ScenarioTimeline extends FaultTimeline {
  readonly #run: FaultTimeline;
  constructor(ctx: ScenarioContext) {
    const file = ctx.file("faults.jsonl");
    fs.writeFileSync(file, "");
    super(file);
    this.#run = timelineOf(ctx.lab.run);
  }
  override add(e: TimelineEntry): TimelineEntry {
    this.#run.add(e);
    return super.add(e);
  }
}

/** Per fault: how long inject -> in effect and heal -> healed took, and when its trigger fired. */
export interface FaultSummary {
  id: string;
  fault: string;
  target: string;
  injectMs?: number;
  inEffectMs?: number;
  healMs?: number;
  healedMs?: number;
  /** Trigger armed -> met (injectWhen), or inject -> rule fired (wire faults). */
  triggerMs?: number;
  firedMs?: number;
  /** in effect -> heal started: how long the fault was in force. */
  heldMs?: number;
  failed?: string[];
}

export function summarizeFaults(entries: readonly TimelineEntry[]): FaultSummary[] {
  const byId = new Map<string, FaultSummary>();
  const inEffectEnd = new Map<string, number>();
  for (const e of entries) {
    const s = byId.get(e.id) ?? { id: e.id, fault: e.fault, target: e.target };
    byId.set(e.id, s);
    if (e.step === "inject") s.injectMs = e.ms;
    if (e.step === "in-effect") {
      s.inEffectMs = e.ms;
      inEffectEnd.set(e.id, e.t + e.ms);
    }
    if (e.step === "heal") {
      s.healMs = e.ms;
      const end = inEffectEnd.get(e.id);
      if (end !== undefined) s.heldMs = Math.round(e.t - end);
    }
    if (e.step === "healed") s.healedMs = e.ms;
    if (e.step === "trigger") s.triggerMs = e.ms;
    if (e.step === "fired") s.firedMs = e.ms;
    if (e.step === "failed") (s.failed ??= []).push(`${String(e.detail?.during)}: ${e.error}`);
  }
  return [...byId.values()];
}

/**
 * Run a scenario body with its own fault timeline: every fault made with `tl` records there;
 * at the end (pass or throw) whatever fault of this lab is still active is healed, and the
 * timeline summary is logged. Returns the body's result.
 */
export async function withFaults<T>(ctx: ScenarioContext, body: (tl: ScenarioTimeline) => Promise<T>): Promise<T> {
  const tl = new ScenarioTimeline(ctx);
  const mark = ctx.lab.teardown.mark();
  try {
    return await body(tl);
  } finally {
    const left = await ctx.lab.teardown.drain(mark);
    if (left.done.length || left.failed.length) ctx.log(`undone at the end of the scenario: ${JSON.stringify(left)}`);
    for (const s of summarizeFaults(tl.entries)) ctx.log(`fault ${s.id} ${s.fault} ${s.target}: ${JSON.stringify(s)}`);
  }
}
