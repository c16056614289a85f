// What an MCP tool server recorded: every JSON-RPC message and HTTP request it received and what
// it did (sessions, held calls, effects). Written by the server itself (docker/mcp/server.ts,
// answering its control API; the types are docker/mcp/wire.ts, as the image cannot import from
// lab/), and saved per scenario as mcp-servers.json by lab/kits/mcp.ts (mcpEvidence: per server
// its requests, held calls, effects and sessions, or why it was unreachable). Read by the report
// (lab/evidence/timeline/) and the at-most-once check (lab/checks/at-most-once.ts). The schemas
// are checked against wire.ts at compile time (SameShape), and lab/clients/mcp.test.ts parses
// what the real server answered in its tests.
import { z } from "zod";
import type * as wire from "../../../docker/mcp/wire.ts";
import type { SameShape } from "./format.ts";

const McpEventName = z.enum([
  "session-created",
  "session-closed",
  "session-expired",
  "session-dropped",
  "sse-open",
  "sse-closed",
  "unknown-session",
  "rejected",
  "call-held",
  "call-released",
  "call-cancelled",
  "list-changed-sent",
  "list-changed-failed",
  "effect",
  "initialize-delayed",
  "list-delayed",
]);
const RpcId = z.union([z.string(), z.number()]);

/** What a tool with an effect did (write-temp). */
export const McpEffect = z.object({
  tool: z.string(),
  sessionId: z.string().nullable(),
  rpcId: RpcId,
  at: z.string(),
  path: z.string(),
  writtenTo: z.string(),
  bytes: z.number(),
});
export type McpEffect = z.infer<typeof McpEffect>;

/** One thing the server received (kind "rpc": a JSON-RPC message on /mcp; "http": GET, DELETE and rejected requests) or did ("event"). */
export const McpRecord = z.object({
  seq: z.number(),
  time: z.string(),
  server: z.string(),
  kind: z.enum(["rpc", "http", "event"]),
  httpMethod: z.string().nullable(),
  sessionId: z.string().nullable(),
  rpcMethod: z.string().nullish(),
  rpcId: RpcId.nullish(),
  tool: z.string().nullish(),
  args: z.unknown().optional(),
  params: z.unknown().optional(),
  response: z.literal(true).optional(),
  event: McpEventName.optional(),
  httpStatus: z.number().optional(),
  holdId: z.string().optional(),
  reason: z.string().optional(),
  host: z.string().nullish(),
  clientInfo: z.unknown().optional(),
  protocolVersion: z.unknown().optional(),
  ms: z.number().optional(),
  sseOpen: z.boolean().optional(),
  error: z.string().optional(),
  effect: McpEffect.optional(),
});
export type McpRecord = z.infer<typeof McpRecord>;

/** A tool call held at the server (and, once let go, released or cancelled). */
export const McpHeldCall = z.object({
  id: z.string(),
  tool: z.string(),
  args: z.unknown(),
  sessionId: z.string().nullable(),
  rpcId: RpcId.nullable(),
  status: z.enum(["held", "released", "cancelled"]),
  heldAt: z.string(),
  releasedAt: z.string().nullable(),
  cancelledAt: z.string().nullable(),
  cancelReason: z.enum(["notifications/cancelled", "connection-closed"]).nullable(),
});
export type McpHeldCall = z.infer<typeof McpHeldCall>;

export const McpSession = z.object({ id: z.string(), createdAt: z.string(), lastSeenAt: z.string(), sseOpen: z.boolean(), clientInfo: z.unknown() });
export type McpSession = z.infer<typeof McpSession>;

/** mcp-servers.json: per server what it recorded, or why it could not be read. */
export const SavedMcpServers = z.record(
  z.string(),
  z.object({
    requests: z.array(McpRecord).optional(),
    held: z.array(McpHeldCall).optional(),
    effects: z.array(McpEffect).optional(),
    sessions: z.array(McpSession).optional(),
    unreachable: z.string().optional(),
  }),
);
export type SavedMcpServers = z.infer<typeof SavedMcpServers>;

// The writer's types and these are the same (tsc fails here when they part).
true satisfies SameShape<McpRecord, wire.McpRecord>;
true satisfies SameShape<McpHeldCall, wire.HeldCall>;
true satisfies SameShape<McpEffect, wire.Effect>;
true satisfies SameShape<McpSession, wire.McpSession>;
