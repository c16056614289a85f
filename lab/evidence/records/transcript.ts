// Transcript entries: every gateway frame an operator client sent and received, with its
// connection's open, close, errors and anomalies, in order. Written by lab/clients/gateway.ts
// (GatewayClient.saveTranscript: a lab's transcripts/operator.jsonl through lab/topology/operator.ts,
// and any other file a scenario or the bench saves); read by the report (lab/evidence/timeline/),
// the evidence checks (from the live client) and the findings' excerpts.
import { z } from "zod";
import { TapRecord } from "./tap.ts";

export const Direction = z.enum(["in", "out", "meta"]);
export type Direction = z.infer<typeof Direction>;

export const TranscriptEntry = z.object({
  /** Position in this client's transcript. */
  n: z.number(),
  /** Wall-clock time, ISO 8601 with milliseconds. */
  ts: z.string(),
  /** Milliseconds since the epoch (for arithmetic). */
  t: z.number(),
  /** Connection label: `<client name>#<connection number>`. */
  conn: z.string(),
  dir: Direction,
  kind: z.enum(["req", "res", "event", "open", "close", "error", "anomaly"]),
  id: z.string().optional(),
  method: z.string().optional(),
  event: z.string().optional(),
  ok: z.boolean().optional(),
  /** The frame as sent or received (credentials redacted). */
  frame: z.unknown().optional(),
  /** The raw text, only when it could not be parsed as JSON. */
  raw: z.string().optional(),
  bytes: z.number().optional(),
  anomaly: z.object({ reason: z.string(), issues: z.unknown().optional(), delivered: z.boolean().optional() }).optional(),
  /** A sequence gap on this connection's events (kind "anomaly"). */
  gap: z.object({ expected: z.number(), received: z.number() }).optional(),
  note: z.string().optional(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntry>;

/** A line of any file in a lab's transcripts/ folder: an operator's entry, or a wire tap's record (tap.ts). */
export const TranscriptsLine = z.union([TranscriptEntry, TapRecord]);
export type TranscriptsLine = z.infer<typeof TranscriptsLine>;
