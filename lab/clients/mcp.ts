// Host-side client for the MCP tool servers' control API (docker/mcp/server.mjs).
// Scenarios use it to read what the gateway asked each server (initialize, tools/list,
// tools/call with arguments, notifications/cancelled), to hold a tool call at the server until
// released, to swap the catalog (the server then sends tools/list_changed) and to slow discovery.
// Replies are checked with zod so a drifted server shows up as a clear error.

import { z } from "zod";
import { controlCall } from "./control.ts";

// ---------- catalog (see fixtures/mcp/README.md) ----------

export const CatalogToolSchema = z
  .object({
    name: z.string().min(1),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.looseObject({ type: z.literal("object") }).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    /** Result text; {{server}} {{tool}} {{args.x}} {{argsJson}} {{effect.x}} {{session}} are filled in. */
    result: z.string().optional(),
    isError: z.boolean().optional(),
    delayMs: z.number().int().min(0).optional(),
    effect: z.enum(["write-temp"]).optional(),
  })
  .strict();
export type CatalogTool = z.infer<typeof CatalogToolSchema>;

// ---------- records ----------

/** One thing the server received or did. kind "rpc": a JSON-RPC message on /mcp; "http": GET/DELETE
 * and rejected requests; "event": what the server did (session-created, call-held, ...). */
export const McpRecordSchema = z.looseObject({
  seq: z.number().int(),
  time: z.string(),
  server: z.string(),
  kind: z.enum(["rpc", "http", "event"]),
  httpMethod: z.string().nullable(),
  sessionId: z.string().nullable(),
  /** JSON-RPC method (kind "rpc"); null for a client's response to a server request. */
  rpcMethod: z.string().nullable().optional(),
  rpcId: z.union([z.string(), z.number()]).nullable().optional(),
  /** tools/call: the tool name and its arguments. */
  tool: z.string().nullable().optional(),
  args: z.unknown().optional(),
  params: z.unknown().optional(),
  /** kind "http"/"event": session-created, session-closed, session-expired, session-dropped, sse-open,
   * sse-closed, unknown-session, rejected, call-held, call-released, call-cancelled,
   * list-changed-sent, list-changed-failed, effect, initialize-delayed. */
  event: z.string().optional(),
  httpStatus: z.number().int().optional(),
  holdId: z.string().optional(),
  /** call-cancelled: "notifications/cancelled" or "connection-closed". */
  reason: z.string().optional(),
});
export type McpRecord = z.infer<typeof McpRecordSchema>;

export const HeldCallSchema = z.looseObject({
  id: z.string(),
  tool: z.string(),
  args: z.unknown(),
  sessionId: z.string().nullable(),
  rpcId: z.union([z.string(), z.number()]).nullable(),
  status: z.enum(["held", "released", "cancelled"]),
  heldAt: z.string(),
  releasedAt: z.string().nullable(),
  cancelledAt: z.string().nullable(),
  cancelReason: z.enum(["notifications/cancelled", "connection-closed"]).nullable(),
});
export type HeldCall = z.infer<typeof HeldCallSchema>;

const ArmSchema = z.object({ tool: z.string(), remaining: z.number().int() });

export const EffectSchema = z.looseObject({
  tool: z.string(),
  sessionId: z.string().nullable(),
  at: z.string(),
  /** The path the caller asked for, and where the server really wrote (inside its temp dir). */
  path: z.string(),
  writtenTo: z.string(),
  bytes: z.number().int(),
});
export type Effect = z.infer<typeof EffectSchema>;

export const McpSessionSchema = z.looseObject({ id: z.string(), createdAt: z.string(), lastSeenAt: z.string(), sseOpen: z.boolean(), clientInfo: z.unknown() });
export type McpSession = z.infer<typeof McpSessionSchema>;

const HealthReply = z.looseObject({ ok: z.literal(true), name: z.string(), tools: z.number().int(), sessions: z.number().int(), requests: z.number().int(), held: z.number().int() });
export type McpHealth = z.infer<typeof HealthReply>;

/** Predicates for waitForRequest. */
export const isToolCall = (tool?: string) => (r: McpRecord) => r.kind === "rpc" && r.rpcMethod === "tools/call" && (tool === undefined || r.tool === tool);
export const isRpc = (method: string) => (r: McpRecord) => r.kind === "rpc" && r.rpcMethod === method;
export const isEvent = (event: string) => (r: McpRecord) => r.event === event;

export class McpControlError extends Error {}

export class McpControl {
  readonly baseUrl: string;

  /** baseUrl: the server root, e.g. http://172.20.0.5:8080 (not the /mcp endpoint). */
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "").replace(/\/mcp$/, "");
  }

  /** The MCP endpoint, as a client configures it. */
  get mcpUrl(): string {
    return `${this.baseUrl}/mcp`;
  }

  async #call<T>(method: "GET" | "POST", path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    return controlCall({ name: "mcp", baseUrl: this.baseUrl, method, path, schema, body: method === "POST" ? (body ?? {}) : undefined, timeoutMs: 10_000, error: McpControlError });
  }

  async health(): Promise<McpHealth> {
    return this.#call("GET", "/healthz", HealthReply);
  }

  /** True when the server answers /healthz; never throws. */
  async healthy(): Promise<boolean> {
    return this.health().then(
      () => true,
      () => false,
    );
  }

  /** Records since the last reset, oldest first; `since` keeps only seq > since. */
  async requests(opts: { since?: number } = {}): Promise<McpRecord[]> {
    const q = opts.since ? `?since=${opts.since}` : "";
    return (await this.#call("GET", `/_control/requests${q}`, z.object({ requests: z.array(McpRecordSchema) }))).requests;
  }

  /** The highest seq seen so far (0 when none): pass it as `since` to look only at what follows. */
  async lastSeq(): Promise<number> {
    return (await this.health()).requests;
  }

  /** Clears records, effects and holds (held calls are released), turns slow discovery and slow initialize off and reloads the catalog file. */
  async reset(): Promise<{ released: string[]; tools: string[] }> {
    return this.#call("POST", "/_control/reset", z.object({ ok: z.literal(true), released: z.array(z.string()), tools: z.array(z.string()) }));
  }

  async catalog(): Promise<CatalogTool[]> {
    return (await this.#call("GET", "/_control/catalog", z.object({ tools: z.array(CatalogToolSchema) }))).tools;
  }

  /** Replaces the catalog; the server sends notifications/tools/list_changed to every session. */
  async setCatalog(tools: CatalogTool[]): Promise<{ tools: string[]; notified: string[] }> {
    const checked = z.array(CatalogToolSchema).parse(tools);
    return this.#call("POST", "/_control/catalog", z.object({ ok: z.literal(true), tools: z.array(z.string()), notified: z.array(z.string()) }), { tools: checked });
  }

  /** Every new session's initialize answer waits `ms` first (0 turns it off): up, but slow to accept a client. */
  async slowInitialize(ms: number): Promise<void> {
    await this.#call("POST", "/_control/slow-initialize", z.object({ ok: z.literal(true), ms: z.number() }), { ms });
  }

  /** Every tools/list answer waits `ms` first (0 turns it off). */
  async slowDiscovery(ms: number): Promise<void> {
    await this.#call("POST", "/_control/slow-discovery", z.object({ ok: z.literal(true), ms: z.number() }), { ms });
  }

  /** The next `count` calls of `tool` are held at the server until released (or cancelled by the client). */
  async hold(tool: string, count = 1): Promise<{ tool: string; remaining: number }> {
    return (await this.#call("POST", "/_control/hold", z.object({ ok: z.literal(true), armed: ArmSchema }), { tool, count })).armed;
  }

  /** Releases one held call (by hold id) or all; returns the ids released. */
  async release(id?: string): Promise<string[]> {
    return (await this.#call("POST", "/_control/release", z.object({ ok: z.literal(true), released: z.array(z.string()) }), id ? { id } : {})).released;
  }

  /** Calls held now; with all, also those released or cancelled since the last reset. */
  async held(opts: { all?: boolean } = {}): Promise<HeldCall[]> {
    return (await this.#call("GET", `/_control/held${opts.all ? "?all=1" : ""}`, z.object({ held: z.array(HeldCallSchema), armed: z.array(ArmSchema) }))).held;
  }

  async effects(): Promise<Effect[]> {
    return (await this.#call("GET", "/_control/effects", z.object({ effects: z.array(EffectSchema), dir: z.string() }))).effects;
  }

  async sessions(): Promise<McpSession[]> {
    return (await this.#call("GET", "/_control/sessions", z.object({ sessions: z.array(McpSessionSchema) }))).sessions;
  }

  /** Forgets every session, as a restarted server would: their next request is answered 404. */
  async dropSessions(): Promise<string[]> {
    return (await this.#call("POST", "/_control/drop-sessions", z.object({ ok: z.literal(true), dropped: z.array(z.string()) }))).dropped;
  }

  /** Polls until a record satisfies `predicate`; throws with what was seen on timeout. */
  async waitForRequest(predicate: (r: McpRecord) => boolean, timeoutMs = 30_000, opts: { since?: number; intervalMs?: number } = {}): Promise<McpRecord> {
    const deadline = Date.now() + timeoutMs;
    let seen: McpRecord[] = [];
    for (;;) {
      seen = await this.requests({ since: opts.since });
      const hit = seen.find(predicate);
      if (hit) return hit;
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
    }
    const summary = seen
      .slice(-6)
      .map((r) => `${r.seq} ${r.kind} ${r.rpcMethod ?? r.event ?? r.httpMethod}${r.tool ? ` ${r.tool}` : ""}`)
      .join("; ");
    throw new McpControlError(`no MCP record matched within ${timeoutMs} ms (${seen.length} seen; last: ${summary || "none"})`);
  }

  /** Waits until a call is held at the server; returns it. */
  async waitForHeld(timeoutMs = 30_000, predicate: (h: HeldCall) => boolean = () => true): Promise<HeldCall> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = (await this.held()).find(predicate);
      if (hit) return hit;
      if (Date.now() >= deadline) throw new McpControlError(`no MCP call was held within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
