// Gateway events as a scenario recorded them (events.json, approval-events.json): what the
// operator received, with the host time it arrived. Written by lab/kits/events.ts (EventLog,
// whose Recorded is this shape) through the MCP kit and scenarios; read by the report
// (lab/evidence/timeline/) for a lab whose operator transcript is missing.
import { z } from "zod";

export const RecordedEvent = z.object({ t: z.number(), event: z.string(), payload: z.unknown() });
export type RecordedEvent = z.infer<typeof RecordedEvent>;

export const RecordedEvents = z.array(RecordedEvent);
