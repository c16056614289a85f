// The gateway's frame envelopes (lab/clients/gateway.ts speaks them): zod shapes for the lab's own
// typing and rules, checked after @openclaw/gateway-protocol's published schemas (TypeBox, the
// validators it compiles its own with).
import { z } from "zod";
import {
  EventFrameSchema as PublishedEventFrame,
  HelloOkSchema as PublishedHelloOk,
  RequestFrameSchema as PublishedRequestFrame,
  ResponseFrameSchema as PublishedResponseFrame,
} from "@openclaw/gateway-protocol/schema";
import { Compile } from "typebox/compile";
// ---------------------------------------------------------------------------------------
// Frame envelope schemas. Two layers: the published schemas (TypeBox, closed objects, checked
// first, see checkEnvelope) and these zod shapes for the lab's own typing plus the rules the
// lab adds on top (a response with ok:false must carry error). Loose here, because the
// published check already names every unknown field.

export const ErrorShapeSchema = z.looseObject({
  code: z.string().min(1),
  message: z.string(),
  details: z.unknown().optional(),
  retryable: z.boolean().optional(),
  retryAfterMs: z.number().optional(),
});
export type ErrorShape = z.infer<typeof ErrorShapeSchema>;

export const RequestFrameSchema = z.looseObject({
  type: z.literal("req"),
  id: z.string().min(1),
  method: z.string().min(1),
  params: z.unknown().optional(),
});
export const ResponseFrameSchema = z
  .looseObject({
    type: z.literal("res"),
    id: z.string().min(1),
    ok: z.boolean(),
    payload: z.unknown().optional(),
    error: ErrorShapeSchema.optional(),
  })
  .refine((f) => f.ok || f.error !== undefined, { message: "a response with ok:false must carry error" });
export const EventFrameSchema = z.looseObject({
  type: z.literal("event"),
  event: z.string().min(1),
  payload: z.unknown().optional(),
  seq: z.number().int().nonnegative().optional(),
  stateVersion: z.unknown().optional(),
});
export const FrameSchema = z.discriminatedUnion("type", [RequestFrameSchema, ResponseFrameSchema, EventFrameSchema]);
export type RequestFrame = z.infer<typeof RequestFrameSchema>;
export type ResponseFrame = z.infer<typeof ResponseFrameSchema>;
export type EventFrame = z.infer<typeof EventFrameSchema>;

export const ConnectChallengeSchema = z.looseObject({
  nonce: z.string().min(1),
  ts: z.number().int().nonnegative(),
});

export const HelloOkSchema = z.looseObject({
  type: z.literal("hello-ok"),
  protocol: z.number().int(),
  server: z.looseObject({ version: z.string(), connId: z.string() }),
  features: z.looseObject({ methods: z.array(z.string()), events: z.array(z.string()) }),
  snapshot: z.unknown(),
  policy: z.looseObject({ maxPayload: z.number(), maxBufferedBytes: z.number(), tickIntervalMs: z.number() }),
  auth: z.looseObject({ role: z.string(), scopes: z.array(z.string()), deviceToken: z.string().optional() }),
});
export type HelloOk = z.infer<typeof HelloOkSchema>;

const published = {
  event: Compile(PublishedEventFrame),
  res: Compile(PublishedResponseFrame),
  req: Compile(PublishedRequestFrame),
  helloOk: Compile(PublishedHelloOk),
};
type PublishedValidator = (typeof published)[keyof typeof published];

export interface SchemaIssue {
  path: string;
  message: string;
}

function issuesOf(v: PublishedValidator, value: unknown): SchemaIssue[] {
  return [...v.Errors(value)].map((e) => {
    // Name the fields a closed object does not allow: that is what tells schema drift apart.
    const extra = (e.params as { additionalProperties?: unknown } | undefined)?.additionalProperties;
    return { path: e.instancePath || "/", message: Array.isArray(extra) ? `${e.message}: ${extra.join(", ")}` : e.message };
  });
}

/**
 * Check one parsed frame against @openclaw/gateway-protocol's envelope schema for its type,
 * then the lab's own rules. Returns the problems (empty when the frame is clean).
 */
export function checkEnvelope(frame: unknown): { schema: string; issues: SchemaIssue[] } {
  const type = frame && typeof frame === "object" ? (frame as { type?: unknown }).type : undefined;
  const v = type === "event" ? published.event : type === "res" ? published.res : type === "req" ? published.req : undefined;
  if (!v) return { schema: "GatewayFrame", issues: [{ path: "/type", message: `unknown frame type ${JSON.stringify(type)}` }] };
  const schema = type === "event" ? "EventFrame" : type === "res" ? "ResponseFrame" : "RequestFrame";
  const issues = issuesOf(v, frame);
  // The lab's rule on top of the published schema: a failed response says why.
  if (type === "res" && (frame as { ok?: unknown }).ok === false && (frame as { error?: unknown }).error === undefined) {
    issues.push({ path: "/error", message: "a response with ok:false must carry error (lab rule)" });
  }
  return { schema, issues };
}

/** hello-ok against the published HelloOk schema (closed: a field the 2026.9.1 schema does not know is named). */
export function checkHelloOk(payload: unknown): SchemaIssue[] {
  return issuesOf(published.helloOk, payload);
}

