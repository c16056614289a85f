// What the MCP tool server's control API takes and answers, defined once: the records, held
// calls, effects, sessions, and every route with its body and reply. The server builds these;
// lab/clients/mcp.ts reads them through `import type`. The catalog format is in catalog.ts.

import type { CatalogTool, CatalogToolSpec } from "./catalog.ts";

export type McpEventName =
  | "session-created"
  | "session-closed"
  | "session-expired"
  | "session-dropped"
  | "sse-open"
  | "sse-closed"
  | "unknown-session"
  | "rejected"
  | "call-held"
  | "call-released"
  | "call-cancelled"
  | "list-changed-sent"
  | "list-changed-failed"
  | "effect"
  | "initialize-delayed"
  | "list-delayed";

/** One thing the server received or did. kind "rpc": a JSON-RPC message on /mcp; "http": GET/DELETE
 * and rejected requests; "event": what the server did (session-created, call-held, ...). */
export interface McpRecord {
  seq: number;
  time: string;
  server: string;
  kind: "rpc" | "http" | "event";
  httpMethod: string | null;
  sessionId: string | null;
  /** JSON-RPC method (kind "rpc"); null for a client's response to a server request. */
  rpcMethod?: string | null;
  rpcId?: string | number | null;
  /** tools/call: the tool name and its arguments. */
  tool?: string | null;
  args?: unknown;
  /** Other requests' params; a client's response: its result or error. */
  params?: unknown;
  /** A client's answer to a server request. */
  response?: true;
  event?: McpEventName;
  httpStatus?: number;
  holdId?: string;
  /** rejected: why ("no session id"); call-cancelled: "notifications/cancelled" or "connection-closed";
   * list-delayed: "answered", or "cancelled" (the client cancelled or went away before the delay ran out). */
  reason?: string;
  /** rejected by the Host check: the Host header. */
  host?: string | null;
  /** session-created. */
  clientInfo?: unknown;
  protocolVersion?: unknown;
  /** initialize-delayed, list-delayed: the delay set by the control API. */
  ms?: number;
  /** list-changed-sent: whether the session had its GET stream open. */
  sseOpen?: boolean;
  /** list-changed-failed. */
  error?: string;
  /** effect. */
  effect?: Effect;
}

export type CancelReason = "notifications/cancelled" | "connection-closed";

export interface HeldCall {
  /** hold-N */
  id: string;
  tool: string;
  args: unknown;
  sessionId: string | null;
  rpcId: string | number | null;
  status: "held" | "released" | "cancelled";
  heldAt: string;
  releasedAt: string | null;
  cancelledAt: string | null;
  cancelReason: CancelReason | null;
}

/** Armed by POST /_control/hold. */
export interface Arm {
  tool: string;
  remaining: number;
}

/** What a tool with an effect did (write-temp). */
export interface Effect {
  tool: string;
  sessionId: string | null;
  rpcId: string | number;
  at: string;
  /** The path the caller asked for, and where the server really wrote (inside its temp dir). */
  path: string;
  writtenTo: string;
  bytes: number;
}

export interface McpSession {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  sseOpen: boolean;
  clientInfo: unknown;
}

export interface McpHealth {
  ok: true;
  name: string;
  tools: number;
  sessions: number;
  /** The highest record seq so far. */
  requests: number;
  held: number;
}

/** Every control route: "METHOD /path" -> query, body and reply. */
export interface McpControlApi {
  "GET /healthz": { reply: McpHealth };
  /** Records with seq > since, oldest first. */
  "GET /_control/requests": { query: { since?: number }; reply: { requests: McpRecord[] } };
  /** Clear records/effects/holds (held calls are released), slow discovery and slow initialize
   * off, catalog reloaded from MCP_CATALOG (seq keeps counting, so ?since= stays meaningful). */
  "POST /_control/reset": { reply: { ok: true; released: string[]; tools: string[] } };
  /** The tools now served. */
  "GET /_control/catalog": { reply: { tools: CatalogTool[] } };
  /** Replace the catalog; notifications/tools/list_changed goes to every session. */
  "POST /_control/catalog": { body: { tools: CatalogToolSpec[] }; reply: { ok: true; tools: string[]; notified: string[] } };
  /** Delay every tools/list answer by ms (0 = off); each delayed answer is recorded (list-delayed). */
  "POST /_control/slow-discovery": { body: { ms: number }; reply: { ok: true; ms: number } };
  /** Delay every new session's initialize answer by ms (0 = off), as a server that is up but
   * slow to accept a client. */
  "POST /_control/slow-initialize": { body: { ms: number }; reply: { ok: true; ms: number } };
  /** The next `count` (1) calls of that tool are held until released. */
  "POST /_control/hold": { body: { tool: string; count?: number }; reply: { ok: true; armed: Arm } };
  /** Release one held call, or all. */
  "POST /_control/release": { body: { id?: string }; reply: { ok: true; released: string[] } };
  /** Held calls (all: also released and cancelled ones; a cancelled one says why). */
  "GET /_control/held": { query: { all?: boolean }; reply: { held: HeldCall[]; armed: Arm[] } };
  /** Side effects of tools with an effect (write-temp). */
  "GET /_control/effects": { reply: { effects: Effect[]; dir: string } };
  /** Live sessions. */
  "GET /_control/sessions": { reply: { sessions: McpSession[] } };
  /** Forget every session (as a restarted server would). */
  "POST /_control/drop-sessions": { reply: { ok: true; dropped: string[] } };
}
