// Tap records: what the wire tap saw between a node host and the gateway (WebSocket frames, HTTP
// exchanges, connection and rule events), one global seq per tap.
// Written by the tap itself (docker/faultproxy/recorder.ts, to its stdout and its control API;
// the types are docker/faultproxy/wire.ts, as the image cannot import from lab/), and saved as
// transcripts/tap-<node>.jsonl by lab/clients/tap.ts (credentials redacted). The schema below is
// checked against wire.ts at compile time (SameShape: a field added on one side fails
// typecheck), and lab/clients/tap.test.ts parses every record the real tap wrote in its tests.
import { z } from "zod";
import type * as wire from "../../../docker/faultproxy/wire.ts";
import type { SameShape } from "./format.ts";

const Dir = z.enum(["node->gw", "gw->node"]);
const PerDir = z.object({ "node->gw": z.number(), "gw->node": z.number() });
const CloseSide = z.enum(["node", "gw", "both"]);
const ActionType = z.enum(["delay", "drop", "close", "respond", "notify", "halfOpen", "withholdPong", "freeze", "inject"]);

/** A rule's match as the tap stores it (docker/faultproxy/rules.ts RuleMatch). */
const RuleMatch = z.object({
  kind: z.enum(["ws", "http"]).optional(),
  dir: Dir.optional(),
  path: z.string().optional(),
  conn: z.string().optional(),
  opcode: z.number().optional(),
  method: z.string().optional(),
  event: z.string().optional(),
  command: z.string().optional(),
  textIncludes: z.string().optional(),
});

/** A rule's action as the tap stores it, defaults filled in (docker/faultproxy/rules.ts RuleAction). */
const RuleAction = z.discriminatedUnion("type", [
  z.object({ type: z.literal("delay"), ms: z.number() }),
  z.object({ type: z.literal("drop"), count: z.number() }),
  z.object({ type: z.literal("close"), code: z.number().int(), side: CloseSide, after: z.boolean() }),
  z.object({ type: z.literal("respond"), status: z.number() }),
  z.object({ type: z.literal("notify"), url: z.string() }),
  z.object({ type: z.literal("halfOpen") }),
  z.object({ type: z.literal("withholdPong") }),
  z.object({ type: z.literal("freeze") }),
  z.object({ type: z.literal("inject"), to: z.enum(["node", "gw"]), text: z.string(), before: z.boolean() }),
]);

/** One WebSocket frame. Text and the gateway fields sit on the last frame of a message. */
export const TapFrame = z.object({
  kind: z.literal("frame"),
  seq: z.number(),
  t: z.number(),
  conn: z.string(),
  path: z.string().nullable(),
  dir: Dir,
  opcode: z.number(),
  fin: z.boolean(),
  len: z.number(),
  masked: z.boolean(),
  compressed: z.boolean().optional(),
  fragments: z.number().optional(),
  messageLen: z.number().optional(),
  text: z.string().optional(),
  truncated: z.boolean().optional(),
  decodeError: z.string().optional(),
  close: z.object({ code: z.number(), reason: z.string() }).optional(),
  action: z.enum(["forward", "delay", "drop", "close", "hold", "discard", "inject"]),
  rule: z.string().optional(),
  // The gateway frame's fields, when the text is one (wire.ts GatewayFields).
  type: z.string().optional(),
  method: z.string().optional(),
  event: z.string().optional(),
  id: z.string().optional(),
  ok: z.boolean().optional(),
  eventSeq: z.number().optional(),
  errorCode: z.string().optional(),
  errorDetailsCode: z.string().optional(),
  command: z.string().optional(),
  invokeId: z.string().optional(),
  json: z.literal(false).optional(),
  replyTo: z.string().optional(),
});
export type TapFrame = z.infer<typeof TapFrame>;

export const TapHttp = z.object({
  kind: z.literal("http"),
  seq: z.number(),
  t: z.number(),
  conn: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().nullable(),
  reqBytes: z.number(),
  resBytes: z.number(),
  durationMs: z.number(),
  upgrade: z.string().optional(),
  rule: z.string().optional(),
  incomplete: z.boolean().optional(),
});
export type TapHttp = z.infer<typeof TapHttp>;

const conn = { kind: z.literal("conn"), seq: z.number(), t: z.number(), conn: z.string() };
export const TapConnEvent = z.discriminatedUnion("event", [
  z.object({ ...conn, event: z.literal("open"), remote: z.string() }),
  z.object({ ...conn, event: z.literal("upgrade"), path: z.string().nullable(), remote: z.string(), offeredExtensions: z.string().nullable(), extensions: z.string().nullable() }),
  z.object({ ...conn, event: z.literal("tunnel"), path: z.string().nullable(), upgrade: z.string().nullable() }),
  z.object({ ...conn, event: z.literal("parse-error"), dir: Dir, message: z.string() }),
  z.object({ ...conn, event: z.literal("error"), side: z.enum(["node", "gw"]), code: z.string().nullable(), message: z.string() }),
  z.object({ ...conn, event: z.literal("fault"), rule: z.string(), code: z.number(), side: CloseSide, path: z.string().nullable(), after: z.boolean().optional() }),
  z.object({ ...conn, event: z.literal("close"), remote: z.string(), path: z.string().nullable(), durationMs: z.number(), frames: PerDir, bytes: PerDir }),
]);
export type TapConnEvent = z.infer<typeof TapConnEvent>;

const rule = { kind: z.literal("rule"), seq: z.number(), t: z.number() };
export const TapRuleEvent = z.discriminatedUnion("event", [
  z.object({ ...rule, event: z.literal("added"), id: z.string(), match: RuleMatch, action: RuleAction, once: z.boolean() }),
  z.object({
    ...rule,
    event: z.literal("fired"),
    id: z.string(),
    action: ActionType,
    conn: z.string().nullable(),
    trigger: z.union([z.number(), z.literal("added"), z.object({ kind: z.literal("http"), method: z.string(), path: z.string() })]),
  }),
  z.object({ ...rule, event: z.literal("removed"), id: z.string(), resumed: z.number(), unfrozen: z.boolean() }),
  z.object({ ...rule, event: z.literal("healed"), removed: z.array(z.string()), unfrozen: z.boolean(), resumed: z.number(), flushedFrames: z.number(), ended: z.number() }),
  z.object({ ...rule, event: z.enum(["notified", "notify-failed"]), id: z.string(), action: z.literal("notify"), conn: z.string().nullable(), trigger: z.number(), status: z.number().optional(), error: z.string().optional() }),
]);
export type TapRuleEvent = z.infer<typeof TapRuleEvent>;

/** One line of a tap transcript. */
export const TapRecord = z.discriminatedUnion("kind", [TapFrame, TapHttp, TapConnEvent, TapRuleEvent]);
export type TapRecord = z.infer<typeof TapRecord>;

// The writer's types and these are the same (tsc fails here when they part).
true satisfies SameShape<TapRecord, wire.TapRecord>;
