// Fault timeline entries: one per life-cycle step of every fault (prepare, inject, in-effect,
// heal, healed, cleanup, plus trigger/fired/landed/failed), in the order they happened. Written as
// they happen by lab/faults/timeline.ts (FaultTimeline: the run folder's faults.jsonl, and each
// scenario's own through lab/kits/timeline.ts); read by the report (lab/evidence/timeline/) and
// rewritten with shard-prefixed ids by lab/evidence/merge.ts.
import { z } from "zod";

export const FaultStep = z.enum(["prepare", "inject", "in-effect", "heal", "healed", "cleanup", "trigger", "fired", "landed", "failed"]);
export type FaultStep = z.infer<typeof FaultStep>;

export const TimelineEntry = z.object({
  /** Fault id, unique in this process (e.g. "f3"; "s2-f3" in a merged run). */
  id: z.string(),
  /** Fault kind, e.g. "partition", "kill", "wire.close". */
  fault: z.string(),
  /** Who it acts on (member alias, or "tap" for wire faults), with peers where they matter. */
  target: z.string(),
  step: FaultStep,
  /** When the step started, epoch milliseconds (sub-millisecond precision). */
  t: z.number(),
  /** How long the step took. */
  ms: z.number(),
  detail: z.record(z.string(), z.unknown()).optional(),
  error: z.string().optional(),
});
export type TimelineEntry = z.infer<typeof TimelineEntry>;
