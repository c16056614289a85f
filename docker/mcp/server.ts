// fleetlab MCP tool server: the official TypeScript MCP SDK over Streamable HTTP, its tools read
// from a JSON catalog, every request recorded, and a control API for scenarios.
//
// One image runs several servers (north, south, ...), each with its own catalog.
// Run: node server.ts    env MCP_PORT (8080; 0 = any free port), MCP_HOST (0.0.0.0),
//      MCP_NAME (server name, e.g. "north"; used in results and serverInfo),
//      MCP_CATALOG (path of the JSON catalog, see fixtures/mcp/README.md),
//      MCP_ALLOWED_HOSTS (comma list of Host names accepted on /mcp, e.g. the service alias;
//        default MCP_NAME; localhost/127.0.0.1/[::1] are always accepted; "*" turns the check off),
//      MCP_SESSION_IDLE_MS (600000: a session with no HTTP activity for that long is closed),
//      MCP_WRITE_DIR (where "write-temp" tools write; default a fresh temp dir),
//      MCP_MAX_RECORDS (5000).
//
// MCP endpoint: POST/GET/DELETE /mcp. One transport (and one SDK Server) per mcp-session-id.
// An unknown session id is answered 404 (the client then starts a new session, as the spec
// asks); a request without a session id that is not initialize is answered 400.
// The Host check (the SDK's own hostHeaderValidation, as createMcpExpressApp applies it) guards
// /mcp only: the control API is reached by the lab from the host by container IP.
//
// Records: every JSON-RPC message received on /mcp (kind "rpc": rpcMethod, rpcId, tool + args for
// tools/call, params otherwise), GET/DELETE and rejected requests (kind "http"), and what the
// server did (kind "event": session-created, session-closed, session-expired, sse-open,
// sse-closed, call-held, call-released, call-cancelled, list-changed-sent, effect,
// initialize-delayed, list-delayed). Each
// carries seq, time, httpMethod, sessionId. Kept in memory and printed to stdout as JSONL.
//
// Control API (JSON):
//   GET  /healthz
//   GET  /_control/requests[?since=seq]   records, oldest first
//   POST /_control/reset                  clear records/effects/holds (held calls are released),
//                                         slow discovery and slow initialize off, catalog reloaded
//                                         from MCP_CATALOG
//                                         (seq keeps counting, so ?since= stays meaningful)
//   GET  /_control/catalog                the tools now served
//   POST /_control/catalog {tools:[...]}  replace the catalog; notifications/tools/list_changed
//                                         goes to every session
//   POST /_control/slow-discovery {ms}    delay every tools/list answer by ms (0 = off); each delayed
//                                         answer is recorded (event list-delayed: ms, rpcId, reason
//                                         answered, or cancelled when the client gave up first)
//   POST /_control/slow-initialize {ms}   delay every new session's initialize answer by ms (0 = off),
//                                         as a server that is up but slow to accept a client
//   POST /_control/hold {tool, count=1}   the next `count` calls of that tool are held until released
//   POST /_control/release {id?}          release one held call, or all
//   GET  /_control/held[?all=1]           held calls (all=1: also released and cancelled ones);
//                                         a cancelled one says why: notifications/cancelled or
//                                         connection-closed
//   GET  /_control/effects                side effects of tools with an effect (write-temp)
//   GET  /_control/sessions               live sessions
//   POST /_control/drop-sessions          forget every session (as a restarted server would)
// Routes, bodies and replies are defined in wire.ts (shared with lab/clients/mcp.ts), the
// catalog format in catalog.ts.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { hostHeaderValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, isInitializeRequest, type CallToolRequest, type CallToolResult, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CatalogError, loadCatalogFile, parseCatalog, render, type Catalog } from "./catalog.ts";
import type { Arm, CancelReason, Effect, HeldCall, McpControlApi, McpRecord } from "./wire.ts";

const PORT = Number(process.env.MCP_PORT ?? 8080);
const HOST = process.env.MCP_HOST ?? "0.0.0.0";
const NAME = process.env.MCP_NAME ?? "mcp";
const CATALOG_PATH = process.env.MCP_CATALOG ?? "";
const ALLOWED = (process.env.MCP_ALLOWED_HOSTS ?? NAME)
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const IDLE_MS = Number(process.env.MCP_SESSION_IDLE_MS ?? 600_000);
const MAX_RECORDS = Number(process.env.MCP_MAX_RECORDS ?? 5000);
const OWN_WRITE_DIR = !process.env.MCP_WRITE_DIR; // made here, so removed at shutdown
const WRITE_DIR = process.env.MCP_WRITE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), `fleetlab-mcp-${NAME}-`));
const VERSION = "0.1.0";

// ---------- catalog ----------

let catalog: Catalog = parseCatalog(loadCatalogFile(CATALOG_PATH));

// ---------- state ----------

type Outcome = "released" | "cancelled";
interface Session {
  id: string | null;
  transport: StreamableHTTPServerTransport;
  server: Server;
  createdAt: string;
  lastSeenAt: number;
  sseOpen: boolean;
  clientInfo: unknown;
}
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

let records: McpRecord[] = [];
let seq = 0;
let slowDiscoveryMs = 0;
let slowInitializeMs = 0;
let holdArms: Arm[] = [];
let holds: HeldCall[] = []; // every held call since reset
let holdSeq = 0;
let effects: Effect[] = [];
const holdWaiters = new Map<string, (outcome: Outcome) => void>(); // hold id -> settle(outcome)
const openCalls = new Map<string, Set<() => void>>(); // `${sessionId} ${rpcId}` -> callbacks run when the POST carrying that call closes early
const sessions = new Map<string, Session>(); // session id -> its transport and SDK server

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** A record as handed to record(): seq, time and server are stamped there; kind defaults to "event". */
type RecordFields = Partial<Omit<McpRecord, "seq" | "time" | "server">>;

function record(fields: RecordFields): McpRecord {
  const r: McpRecord = { seq: ++seq, time: new Date().toISOString(), server: NAME, kind: "event", httpMethod: null, sessionId: null, ...fields };
  records.push(r);
  if (records.length > MAX_RECORDS) records = records.slice(-MAX_RECORDS);
  process.stdout.write(`${JSON.stringify(r)}\n`);
  return r;
}

const log = (msg: string, extra: Record<string, unknown> = {}) => process.stdout.write(`${JSON.stringify({ kind: "log", time: new Date().toISOString(), server: NAME, msg, ...extra })}\n`);

/** A JSON-RPC message as received (anything, until the SDK checks it). */
type Message = { method?: unknown; id?: string | number; params?: { name?: string; arguments?: unknown }; result?: unknown; error?: unknown } | null;

function recordMessage(msg: Message, httpMethod: string, sessionId: string | null): McpRecord {
  const isObj = !!msg && typeof msg === "object";
  const method = isObj && typeof msg.method === "string" ? msg.method : null;
  const fields: RecordFields = { kind: "rpc", httpMethod, sessionId: sessionId ?? null, rpcMethod: method, rpcId: isObj && "id" in msg ? msg.id : null };
  if (method === "tools/call") {
    fields.tool = msg!.params?.name ?? null;
    fields.args = msg!.params?.arguments ?? {};
  } else if (method) {
    if (msg!.params !== undefined) fields.params = msg!.params;
  } else {
    fields.response = true; // a client's answer to a server request
    fields.params = isObj ? (msg.result ?? msg.error ?? null) : msg;
  }
  return record(fields);
}

// ---------- tools ----------

function writeTemp(args: { path?: unknown; content?: unknown } | undefined): Pick<Effect, "path" | "writtenTo" | "bytes"> {
  const requested = String(args?.path ?? "");
  // Resolve under WRITE_DIR whatever the path says: "/etc/x" and "../../x" land inside it.
  const rel = path.posix.normalize(`/${requested.replaceAll("\\", "/")}`).replace(/^\/+/, "") || "unnamed";
  const target = path.join(WRITE_DIR, rel);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const content = typeof args?.content === "string" ? args.content : JSON.stringify(args?.content ?? "");
  fs.writeFileSync(target, content);
  return { path: requested, writtenTo: target, bytes: Buffer.byteLength(content) };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/** Parks a tools/call until released, or until the client cancels it. Resolves "released" | "cancelled". */
function holdCall({ tool, args, sessionId, rpcId, signal }: { tool: string; args: unknown; sessionId: string | null; rpcId: string | number; signal?: AbortSignal }): Promise<Outcome> {
  const h: HeldCall = { id: `hold-${++holdSeq}`, tool, args, sessionId, rpcId, status: "held", heldAt: new Date().toISOString(), releasedAt: null, cancelledAt: null, cancelReason: null };
  holds.push(h);
  record({ kind: "event", event: "call-held", sessionId, rpcId, tool, holdId: h.id });
  return new Promise<Outcome>((resolve) => {
    const key = `${sessionId} ${rpcId}`;
    const onClose = () => settle("cancelled", "connection-closed");
    const onAbort = () => settle("cancelled", "notifications/cancelled");
    function settle(outcome: Outcome, reason?: CancelReason) {
      if (h.status !== "held") return;
      holdWaiters.delete(h.id);
      signal?.removeEventListener("abort", onAbort);
      openCalls.get(key)?.delete(onClose);
      if (outcome === "released") {
        h.status = "released";
        h.releasedAt = new Date().toISOString();
        record({ kind: "event", event: "call-released", sessionId, rpcId, tool, holdId: h.id });
      } else {
        h.status = "cancelled";
        h.cancelledAt = new Date().toISOString();
        h.cancelReason = reason ?? null;
        record({ kind: "event", event: "call-cancelled", sessionId, rpcId, tool, holdId: h.id, reason });
      }
      resolve(outcome);
    }
    holdWaiters.set(h.id, settle);
    // The SDK aborts the handler's signal when notifications/cancelled names this request.
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const set = openCalls.get(key);
    if (set) set.add(onClose);
    else onClose(); // the POST that carried it is already gone
  });
}

async function callTool(params: CallToolRequest["params"], extra: Extra): Promise<CallToolResult> {
  const name = params.name;
  const args = params.arguments ?? {};
  const sessionId = extra.sessionId ?? null;
  const arm = holdArms.find((a) => a.tool === name && a.remaining > 0);
  if (arm) {
    arm.remaining -= 1;
    holdArms = holdArms.filter((a) => a.remaining > 0);
    const outcome = await holdCall({ tool: name, args, sessionId, rpcId: extra.requestId, signal: extra.signal });
    // After a cancel the SDK sends nothing back; this only ends the handler.
    if (outcome === "cancelled") return { isError: true, content: [{ type: "text", text: `${NAME}: call of ${name} was cancelled` }] };
  }
  // Looked up after a hold on purpose: a tool removed meanwhile is "not found", as on a real server.
  const tool = catalog.tools.find((t) => t.name === name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
  if (tool.delayMs) await sleep(tool.delayMs, extra.signal);
  let effect: Effect | null = null;
  if (tool.effect === "write-temp") {
    effect = { tool: name, sessionId, rpcId: extra.requestId, at: new Date().toISOString(), ...writeTemp(args as { path?: unknown; content?: unknown }) };
    effects.push(effect);
    record({ kind: "event", event: "effect", sessionId, rpcId: extra.requestId, tool: name, effect });
  }
  const text = render(tool.result, { server: NAME, tool: name, args, argsJson: JSON.stringify(args), effect, session: sessionId });
  return { isError: tool.isError, content: [{ type: "text", text }] };
}

function listTools() {
  return catalog.tools.map((t) => ({
    name: t.name,
    ...(t.title ? { title: t.title } : {}),
    description: t.description,
    inputSchema: t.inputSchema,
    ...(t.annotations ? { annotations: t.annotations } : {}),
  }));
}

function makeServer() {
  const server = new Server({ name: `fleetlab-${NAME}`, version: VERSION }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async (_req, extra) => {
    if (slowDiscoveryMs > 0) {
      const ms = slowDiscoveryMs;
      await sleep(ms, extra.signal);
      // Recorded when the delay ends, so the log says this answer really waited (its time minus
      // the tools/list record's is how long), and whether the client cancelled it first.
      record({ kind: "event", event: "list-delayed", ms, sessionId: extra.sessionId ?? null, rpcId: extra.requestId, reason: extra.signal.aborted ? "cancelled" : "answered" });
    }
    return { tools: listTools() };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => callTool(req.params, extra));
  return server;
}

// ---------- sessions ----------

async function closeSession(id: string, event: "session-closed" | "session-expired" | "session-dropped"): Promise<void> {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  record({ kind: "event", event, sessionId: id });
  // transport.close() ends the session's open streams; the server's onclose follows.
  await s.transport.close().catch(() => {});
}

const sweeper = setInterval(
  () => {
    const now = Date.now();
    for (const s of sessions.values()) if (now - s.lastSeenAt > IDLE_MS) void closeSession(s.id!, "session-expired");
  },
  Math.max(50, Math.min(30_000, Math.floor(IDLE_MS / 2))),
);
sweeper.unref();

async function newSession(req: Request, res: Response): Promise<void> {
  const server = makeServer();
  // The callbacks run once the request is handled, after s is complete.
  const s: Session = { id: null, transport: new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      s.id = id;
      sessions.set(id, s);
      const init = (Array.isArray(req.body) ? req.body : [req.body]).find((m: unknown) => isInitializeRequest(m));
      s.clientInfo = init?.params?.clientInfo ?? null;
      record({ kind: "event", event: "session-created", sessionId: id, clientInfo: s.clientInfo, protocolVersion: init?.params?.protocolVersion ?? null });
    },
    onsessionclosed: (id) => {
      if (sessions.delete(id)) record({ kind: "event", event: "session-closed", sessionId: id });
    },
  }), server, createdAt: new Date().toISOString(), lastSeenAt: Date.now(), sseOpen: false, clientInfo: null };
  await s.server.connect(s.transport);
  await s.transport.handleRequest(req, res, req.body);
}

// ---------- HTTP ----------

const app = express();
app.disable("x-powered-by");

const mcpHostCheck: RequestHandler = ALLOWED.includes("*") ? (_req, _res, next) => next() : hostHeaderValidation([...new Set([...ALLOWED, "localhost", "127.0.0.1", "[::1]"])]);

const sessionHeader = (req: Request): string | undefined => req.get("mcp-session-id");

// Rejections by the Host check happen before the body is read: record them here.
app.use("/mcp", (req, res, next) => {
  res.on("finish", () => {
    if (res.statusCode === 403) record({ kind: "http", event: "rejected", httpMethod: req.method, httpStatus: 403, host: req.headers.host ?? null, sessionId: sessionHeader(req) ?? null });
  });
  next();
});
app.use("/mcp", mcpHostCheck);
app.use(express.json({ limit: "4mb" }));

const notFound = (res: Response, sessionId: string | null, httpMethod: string) => {
  record({ kind: "http", event: "unknown-session", httpMethod, httpStatus: 404, sessionId });
  res.status(404).json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
};

app.post("/mcp", async (req, res, next) => {
  try {
    const sid = sessionHeader(req);
    const messages: Message[] = Array.isArray(req.body) ? req.body : [req.body];
    for (const m of messages) recordMessage(m, "POST", sid ?? null);
    if (sid) {
      const s = sessions.get(sid);
      if (!s) return notFound(res, sid, "POST");
      s.lastSeenAt = Date.now();
      // Held calls learn from this when their POST goes away before the answer (client gone).
      const keys = messages.filter((m) => m?.method === "tools/call" && "id" in m).map((m) => `${sid} ${m!.id}`);
      for (const k of keys) openCalls.set(k, new Set());
      if (keys.length)
        res.on("close", () => {
          for (const k of keys) {
            const cbs = openCalls.get(k);
            openCalls.delete(k);
            if (!res.writableFinished) for (const cb of cbs ?? []) cb();
          }
        });
      return await s.transport.handleRequest(req, res, req.body);
    }
    if (messages.some((m) => isInitializeRequest(m))) {
      if (slowInitializeMs > 0) {
        record({ kind: "event", event: "initialize-delayed", ms: slowInitializeMs });
        await sleep(slowInitializeMs);
      }
      return await newSession(req, res);
    }
    record({ kind: "http", event: "rejected", httpMethod: "POST", httpStatus: 400, reason: "no session id" });
    res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" }, id: null });
  } catch (e) {
    next(e);
  }
});

app.get("/mcp", async (req, res, next) => {
  try {
    const sid = sessionHeader(req);
    if (!sid) {
      record({ kind: "http", event: "rejected", httpMethod: "GET", httpStatus: 400, reason: "no session id" });
      return res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: Mcp-Session-Id header is required" }, id: null });
    }
    const s = sessions.get(sid);
    if (!s) return notFound(res, sid, "GET");
    s.lastSeenAt = Date.now();
    record({ kind: "http", event: "sse-open", httpMethod: "GET", sessionId: sid });
    s.sseOpen = true;
    res.on("close", () => {
      s.sseOpen = false;
      s.lastSeenAt = Date.now();
      record({ kind: "http", event: "sse-closed", httpMethod: "GET", sessionId: sid });
    });
    await s.transport.handleRequest(req, res);
  } catch (e) {
    next(e);
  }
});

app.delete("/mcp", async (req, res, next) => {
  try {
    const sid = sessionHeader(req);
    record({ kind: "http", httpMethod: "DELETE", sessionId: sid ?? null });
    const s = sid ? sessions.get(sid) : undefined;
    if (!s) return notFound(res, sid ?? null, "DELETE");
    await s.transport.handleRequest(req, res);
  } catch (e) {
    next(e);
  }
});

// ---------- control API ----------

const heldNow = () => holds.filter((h) => h.status === "held");

function releaseHolds(id: string | undefined): string[] {
  const targets = heldNow().filter((h) => id === undefined || h.id === id);
  for (const h of targets) holdWaiters.get(h.id)?.("released");
  return targets.map((h) => h.id);
}

async function setCatalog(next: Catalog): Promise<string[]> {
  catalog = next;
  const notified: string[] = [];
  for (const s of sessions.values()) {
    try {
      await s.server.sendToolListChanged();
      notified.push(s.id!);
      record({ kind: "event", event: "list-changed-sent", sessionId: s.id, sseOpen: s.sseOpen });
    } catch (e) {
      record({ kind: "event", event: "list-changed-failed", sessionId: s.id, error: String((e as Error)?.message ?? e) });
    }
  }
  return notified;
}

type Reply<K extends keyof McpControlApi> = McpControlApi[K]["reply"];
/** One handler per route of McpControlApi: a route missing here, or a reply of the wrong shape, does not compile. */
type Handlers = { [K in keyof McpControlApi]: (req: Request) => Reply<K> | Promise<Reply<K>> };

const control: Handlers = {
  "GET /healthz": () => ({ ok: true, name: NAME, tools: catalog.tools.length, sessions: sessions.size, requests: seq, held: heldNow().length }),

  "GET /_control/requests": (req) => {
    const since = Number(req.query.since ?? 0) || 0;
    return { requests: records.filter((r) => r.seq > since) };
  },

  "POST /_control/reset": async () => {
    const released = releaseHolds(undefined);
    const fresh = parseCatalog(loadCatalogFile(CATALOG_PATH));
    const changed = JSON.stringify(fresh) !== JSON.stringify(catalog);
    records = [];
    effects = [];
    holds = [];
    holdArms = [];
    slowDiscoveryMs = 0;
    slowInitializeMs = 0;
    if (changed) await setCatalog(fresh);
    return { ok: true, released, tools: catalog.tools.map((t) => t.name) };
  },

  "GET /_control/catalog": () => ({ tools: catalog.tools }),

  "POST /_control/catalog": async (req) => {
    const next = parseCatalog(req.body);
    const notified = await setCatalog(next);
    return { ok: true, tools: catalog.tools.map((t) => t.name), notified };
  },

  "POST /_control/slow-discovery": (req) => {
    const ms = Number(req.body?.ms);
    if (!Number.isInteger(ms) || ms < 0) throw new HttpError(400, "ms must be a non-negative integer");
    slowDiscoveryMs = ms;
    return { ok: true, ms };
  },

  "POST /_control/slow-initialize": (req) => {
    const ms = Number(req.body?.ms);
    if (!Number.isInteger(ms) || ms < 0) throw new HttpError(400, "ms must be a non-negative integer");
    slowInitializeMs = ms;
    return { ok: true, ms };
  },

  "POST /_control/hold": (req) => {
    const tool = req.body?.tool;
    const count = req.body?.count ?? 1;
    if (typeof tool !== "string" || !tool) throw new HttpError(400, "tool (string) is required");
    if (!Number.isInteger(count) || count < 1) throw new HttpError(400, "count must be a positive integer");
    const arm = { tool, remaining: count };
    holdArms.push(arm);
    return { ok: true, armed: arm };
  },

  "POST /_control/release": (req) => {
    const id = req.body?.id;
    return { ok: true, released: releaseHolds(typeof id === "string" ? id : undefined) };
  },

  "GET /_control/held": (req) => {
    const all = req.query.all === "1" || req.query.all === "true";
    return { held: all ? holds : heldNow(), armed: holdArms };
  },

  "GET /_control/effects": () => ({ effects, dir: WRITE_DIR }),

  "GET /_control/sessions": () => ({
    sessions: [...sessions.values()].map((s) => ({ id: s.id!, createdAt: s.createdAt, lastSeenAt: new Date(s.lastSeenAt).toISOString(), sseOpen: s.sseOpen, clientInfo: s.clientInfo })),
  }),

  "POST /_control/drop-sessions": async () => {
    const ids = [...sessions.keys()];
    for (const id of ids) await closeSession(id, "session-dropped");
    return { ok: true, dropped: ids };
  },
};

for (const [route, handle] of Object.entries(control) as [string, (req: Request) => unknown][]) {
  const [method, path] = route.split(" ") as ["GET" | "POST", string];
  // Express 5 passes a rejected promise (a throw in an async handler) to the error handler below.
  app[method === "GET" ? "get" : "post"](path, async (req, res) => {
    res.json(await handle(req));
  });
}

app.use((req, res) => res.status(404).json({ error: `no route ${req.method} ${req.path}` }));

// eslint-disable-next-line no-unused-vars
app.use((err: Error & { status?: number; statusCode?: number }, _req: Request, res: Response, _next: NextFunction) => {
  const status = err instanceof HttpError ? err.status : err instanceof CatalogError ? 400 : (err?.status ?? err?.statusCode ?? 500);
  if (status >= 500) log("error", { error: String(err?.stack ?? err) });
  if (!res.headersSent) res.status(status).json({ error: String(err?.message ?? err) });
});

const httpServer = app.listen(PORT, HOST, () => {
  const addr = httpServer.address() as AddressInfo;
  log("listening", { host: HOST, port: addr.port, allowedHosts: ALLOWED, tools: catalog.tools.map((t) => t.name), writeDir: WRITE_DIR });
});

async function shutdown(signal: string): Promise<void> {
  log("shutdown", { signal });
  for (const id of [...sessions.keys()]) await closeSession(id, "session-closed");
  if (OWN_WRITE_DIR) fs.rmSync(WRITE_DIR, { recursive: true, force: true });
  httpServer.close();
  httpServer.closeAllConnections?.();
  setTimeout(() => process.exit(0), 200).unref();
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
