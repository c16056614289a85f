// Host-side client for the MCP tool servers' control API (docker/mcp/server.ts).
// Scenarios use it to read what the gateway asked each server (initialize, tools/list,
// tools/call with arguments, notifications/cancelled), to hold a tool call at the server until
// released, to swap the catalog (the server then sends tools/list_changed) and to slow discovery.
// The catalog format (docker/mcp/catalog.ts, see fixtures/mcp/README.md) and every route with its
// body and reply (docker/mcp/wire.ts) are defined once, by the server; this client imports them.

import type { CatalogTool, CatalogToolSpec } from "../../docker/mcp/catalog.ts";
import type { Arm, Effect, HeldCall, McpControlApi, McpHealth, McpRecord, McpSession } from "../../docker/mcp/wire.ts";
import { ControlClient } from "./control.ts";
import { WaitTimeout, waitFor } from "../core/wait.ts";

export type { CatalogTool, CatalogToolSpec } from "../../docker/mcp/catalog.ts";
export type { Arm, CancelReason, Effect, HeldCall, McpControlApi, McpEventName, McpHealth, McpRecord, McpSession } from "../../docker/mcp/wire.ts";

/** Predicates for waitForRequest. */
export const isToolCall = (tool?: string) => (r: McpRecord) => r.kind === "rpc" && r.rpcMethod === "tools/call" && (tool === undefined || r.tool === tool);
export const isRpc = (method: string) => (r: McpRecord) => r.kind === "rpc" && r.rpcMethod === method;
export const isEvent = (event: string) => (r: McpRecord) => r.event === event;

export class McpControlError extends Error {}

export class McpControl extends ControlClient<McpControlApi> {
  /** baseUrl: the server root, e.g. http://172.20.0.5:8080 (not the /mcp endpoint). */
  constructor(baseUrl: string) {
    super(baseUrl.replace(/\/+$/, "").replace(/\/mcp$/, ""), { name: "mcp", timeoutMs: 10_000, error: McpControlError, emptyPostBody: true });
  }

  /** The MCP endpoint, as a client configures it. */
  get mcpUrl(): string {
    return `${this.baseUrl}/mcp`;
  }

  async health(): Promise<McpHealth> {
    return this.call("GET /healthz");
  }

  /** Records since the last reset, oldest first; `since` keeps only seq > since. */
  async requests(opts: { since?: number } = {}): Promise<McpRecord[]> {
    return (await this.call("GET /_control/requests", { query: { since: opts.since } })).requests;
  }

  /** The highest seq seen so far (0 when none): pass it as `since` to look only at what follows. */
  async lastSeq(): Promise<number> {
    return (await this.health()).requests;
  }

  /** Clears records, effects and holds (held calls are released), turns slow discovery and slow initialize off and reloads the catalog file. */
  async reset(): Promise<{ released: string[]; tools: string[] }> {
    const { released, tools } = await this.call("POST /_control/reset");
    return { released, tools };
  }

  async catalog(): Promise<CatalogTool[]> {
    return (await this.call("GET /_control/catalog")).tools;
  }

  /** Replaces the catalog (the server checks it: a bad one is refused with the reason); the
   * server sends notifications/tools/list_changed to every session. */
  async setCatalog(tools: CatalogToolSpec[]): Promise<{ tools: string[]; notified: string[] }> {
    const reply = await this.call("POST /_control/catalog", { body: { tools } });
    return { tools: reply.tools, notified: reply.notified };
  }

  /** Every new session's initialize answer waits `ms` first (0 turns it off): up, but slow to accept a client. */
  async slowInitialize(ms: number): Promise<void> {
    await this.call("POST /_control/slow-initialize", { body: { ms } });
  }

  /** Every tools/list answer waits `ms` first (0 turns it off). */
  async slowDiscovery(ms: number): Promise<void> {
    await this.call("POST /_control/slow-discovery", { body: { ms } });
  }

  /** The next `count` calls of `tool` are held at the server until released (or cancelled by the client). */
  async hold(tool: string, count = 1): Promise<Arm> {
    return (await this.call("POST /_control/hold", { body: { tool, count } })).armed;
  }

  /** Releases one held call (by hold id) or all; returns the ids released. */
  async release(id?: string): Promise<string[]> {
    return (await this.call("POST /_control/release", { body: id ? { id } : {} })).released;
  }

  /** Calls held now; with all, also those released or cancelled since the last reset. */
  async held(opts: { all?: boolean } = {}): Promise<HeldCall[]> {
    return (await this.call("GET /_control/held", { query: { all: opts.all } })).held;
  }

  async effects(): Promise<Effect[]> {
    return (await this.call("GET /_control/effects")).effects;
  }

  async sessions(): Promise<McpSession[]> {
    return (await this.call("GET /_control/sessions")).sessions;
  }

  /** Forgets every session, as a restarted server would: their next request is answered 404. */
  async dropSessions(): Promise<string[]> {
    return (await this.call("POST /_control/drop-sessions")).dropped;
  }

  /** Polls until a record satisfies `predicate`; throws with what was seen on timeout. */
  async waitForRequest(predicate: (r: McpRecord) => boolean, timeoutMs = 30_000, opts: { since?: number; intervalMs?: number; signal?: AbortSignal } = {}): Promise<McpRecord> {
    let seen: McpRecord[] = [];
    return waitFor("an MCP record", async () => (seen = await this.requests({ since: opts.since })).find(predicate), { timeoutMs, intervalMs: opts.intervalMs ?? 100, signal: opts.signal }).catch((err: unknown) => {
      if (!(err instanceof WaitTimeout)) throw err;
      const summary = seen
        .slice(-6)
        .map((r) => `${r.seq} ${r.kind} ${r.rpcMethod ?? r.event ?? r.httpMethod}${r.tool ? ` ${r.tool}` : ""}`)
        .join("; ");
      throw new McpControlError(`no MCP record matched within ${timeoutMs} ms (${seen.length} seen; last: ${summary || "none"})`);
    });
  }

  /** Waits until a call is held at the server; returns it. */
  async waitForHeld(timeoutMs = 30_000, predicate: (h: HeldCall) => boolean = () => true, signal?: AbortSignal): Promise<HeldCall> {
    return waitFor("a held MCP call", async () => (await this.held()).find(predicate), { timeoutMs, intervalMs: 100, signal }).catch((err: unknown) => {
      throw err instanceof WaitTimeout ? new McpControlError(`no MCP call was held within ${timeoutMs} ms`) : err;
    });
  }
}
