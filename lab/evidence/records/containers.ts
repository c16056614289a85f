// Container events: the life of a lab's containers as the engine saw it (create, start, kill
// with its signal, die with its exit code, stop, restart, pause, destroy ...). Written as they
// arrive by lab/evidence/containers.ts (a lab's containers.jsonl); read by the report
// (lab/evidence/timeline/), which draws them on each member's lane.
import { z } from "zod";

export const ContainerEventLine = z.object({
  /** Epoch milliseconds (from the engine's nanoseconds). */
  t: z.number(),
  time: z.string(),
  alias: z.string(),
  kind: z.string().optional(),
  container: z.string(),
  action: z.string(),
  exitCode: z.number().optional(),
  /** kill: the signal's name (SIGKILL), or its number when unknown. */
  signal: z.string().optional(),
});
export type ContainerEventLine = z.infer<typeof ContainerEventLine>;
