// Host-side client for the wire tap's control API (docker/faultproxy/control.mjs): read the
// WebSocket frames and HTTP exchanges that passed between node hosts and the gateway, wait for a
// protocol point, add and remove fault rules, heal, and save the transcript as evidence.
// Replies are checked with zod so a drifted tap shows up as a clear error.

import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { controlCall } from "./control.ts";

export const DirSchema = z.enum(["node->gw", "gw->node"]);
export type Dir = z.infer<typeof DirSchema>;

/** WebSocket opcodes as recorded in Frame.opcode. */
export const WS_OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** What the tap did with a frame: forwarded, delayed, dropped, replaced by a close, held
 * (half-open / freeze: delivered on heal), or discarded (its connection was closed by a rule). */
export const FrameActionSchema = z.enum(["forward", "delay", "drop", "close", "hold", "discard"]);

/** One WebSocket frame as the tap saw it. Text and gateway fields sit on the last frame of a
 * message (fragments > 1 when the message came in several frames). */
export const FrameSchema = z.looseObject({
  kind: z.literal("frame"),
  seq: z.number().int(),
  t: z.number(),
  conn: z.string(),
  path: z.string().nullable(),
  dir: DirSchema,
  opcode: z.number().int(),
  fin: z.boolean(),
  len: z.number().int(),
  masked: z.boolean(),
  action: FrameActionSchema,
  rule: z.string().optional(),
  compressed: z.boolean().optional(),
  fragments: z.number().int().optional(),
  messageLen: z.number().int().optional(),
  text: z.string().optional(),
  truncated: z.boolean().optional(),
  decodeError: z.string().optional(),
  // Gateway JSON frame fields ({type:"req",id,method} / {type:"res",id,ok} / {type:"event",event}).
  type: z.string().optional(),
  method: z.string().optional(),
  event: z.string().optional(),
  id: z.string().optional(),
  ok: z.boolean().optional(),
  eventSeq: z.number().optional(),
  errorCode: z.string().optional(),
  errorDetailsCode: z.string().optional(),
  /** node.invoke.request payload.command (worker.launch.v1, ...) or node.invoke params.command. */
  command: z.string().optional(),
  /** The invoke id of node.invoke.request (payload.id) and node.invoke.result (params.id). */
  invokeId: z.string().optional(),
  /** For a res frame: the method of the request it answers (same connection). */
  replyTo: z.string().optional(),
  close: z.object({ code: z.number().int(), reason: z.string() }).optional(),
});
export type Frame = z.infer<typeof FrameSchema>;

export const HttpExchangeSchema = z.looseObject({
  kind: z.literal("http"),
  seq: z.number().int(),
  t: z.number(),
  conn: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int().nullable(),
  /** Body bytes (chunk framing not counted). */
  reqBytes: z.number().int(),
  resBytes: z.number().int(),
  durationMs: z.number(),
  upgrade: z.string().optional(),
  rule: z.string().optional(),
  /** The connection ended before the response did. */
  incomplete: z.boolean().optional(),
});
export type HttpExchange = z.infer<typeof HttpExchangeSchema>;

/** Connection events (open, upgrade, close, error, fault, ...) and rule events (added, fired, ...). */
export const TapEventSchema = z.looseObject({ kind: z.enum(["conn", "rule"]), seq: z.number().int(), t: z.number(), event: z.string() });
export type TapEvent = z.infer<typeof TapEventSchema>;

export const RecordSchema = z.union([FrameSchema, HttpExchangeSchema, TapEventSchema]);
export type TapRecord = z.infer<typeof RecordSchema>;

export const ConnectionSchema = z.looseObject({
  conn: z.string(),
  remote: z.string(),
  upstreamLocal: z.string().nullable(),
  state: z.enum(["open", "held", "faulted", "closed"]),
  mode: z.enum(["http", "ws", "raw"]),
  path: z.string().nullable(),
  deflate: z.boolean(),
  openedAt: z.number(),
  closedAt: z.number().nullable(),
  halfOpenBy: z.array(z.string()),
  fault: z.looseObject({ rule: z.string(), code: z.number().int(), side: z.string() }).nullable(),
  requests: z.number().int(),
  frames: z.record(DirSchema, z.number().int()),
  bytes: z.record(DirSchema, z.number().int()),
});
export type TapConnection = z.infer<typeof ConnectionSchema>;

// ---------- rules ----------

export const TapMatchSchema = z
  .object({
    kind: z.enum(["ws", "http"]).optional(),
    dir: DirSchema.optional(),
    /** Exact path, or a prefix when it ends with "*". */
    path: z.string().optional(),
    conn: z.string().optional(),
    opcode: z.union([z.enum(["text", "binary", "close", "ping", "pong", "continuation"]), z.number().int()]).optional(),
    method: z.string().optional(),
    event: z.string().optional(),
    command: z.string().optional(),
    textIncludes: z.string().optional(),
  })
  .strict();
export type TapMatch = z.infer<typeof TapMatchSchema>;

export const TapActionSchema = z.union([
  z.object({ delay: z.object({ ms: z.number().min(0) }).strict() }).strict(),
  z.object({ drop: z.object({ count: z.number().int().min(1).optional() }).strict() }).strict(),
  z.object({ close: z.object({ code: z.union([z.literal(1001), z.literal(1006), z.literal(1011)]), side: z.enum(["node", "gw", "both"]) }).strict() }).strict(),
  z.object({ halfOpen: z.object({}).strict() }).strict(),
  z.object({ withholdPong: z.object({}).strict() }).strict(),
  z.object({ freeze: z.object({}).strict() }).strict(),
]);
export type TapAction = z.infer<typeof TapActionSchema>;

export const TapRuleSpecSchema = z.object({ id: z.string().min(1).optional(), match: TapMatchSchema.optional(), action: TapActionSchema, once: z.boolean().optional() }).strict();
export type TapRuleSpec = z.infer<typeof TapRuleSpecSchema>;

const FiringSchema = z.object({ seq: z.number().int(), t: z.number(), conn: z.string().nullable() });
export const TapRuleSchema = z.looseObject({
  id: z.string(),
  match: z.record(z.string(), z.unknown()),
  action: z.looseObject({ type: z.enum(["delay", "drop", "close", "halfOpen", "withholdPong", "freeze"]) }),
  once: z.boolean(),
  active: z.boolean(),
  createdAt: z.number(),
  hits: z.number().int(),
  /** The first firing: seq of the trigger frame (or rule event for HTTP/immediate rules) and its time. */
  firstFired: FiringSchema.nullable(),
  lastFired: FiringSchema.nullable(),
});
export type TapRule = z.infer<typeof TapRuleSchema>;

const HealedSchema = z.looseObject({ unfrozen: z.boolean(), resumed: z.number().int(), flushedFrames: z.number().int(), ended: z.number().int() });
export type Healed = z.infer<typeof HealedSchema>;

const HealthSchema = z.looseObject({ ok: z.literal(true), listen: z.string(), upstream: z.string(), seq: z.number().int(), connections: z.number().int(), rules: z.number().int(), frozen: z.boolean() });
export type TapHealth = z.infer<typeof HealthSchema>;

/** Frame filter with the same meaning as a rule's match (kind is ignored). */
export function frameMatches(m: TapMatch, f: Frame): boolean {
  if (m.dir && f.dir !== m.dir) return false;
  if (m.conn && f.conn !== m.conn) return false;
  if (m.path && !(m.path.endsWith("*") ? (f.path ?? "").startsWith(m.path.slice(0, -1)) : f.path === m.path)) return false;
  if (m.opcode !== undefined && f.opcode !== (typeof m.opcode === "number" ? m.opcode : WS_OPCODE[m.opcode])) return false;
  if (m.method && f.method !== m.method) return false;
  if (m.event && f.event !== m.event) return false;
  if (m.command && f.command !== m.command) return false;
  if (m.textIncludes && !(f.text ?? "").includes(m.textIncludes)) return false;
  return true;
}

/** One line per frame for error messages and logs. */
export function describeFrame(f: Frame): string {
  const what = f.method ?? f.event ?? (f.type === "res" ? `res${f.replyTo ? `(${f.replyTo})` : ""} ${f.ok === false ? `error ${f.errorCode ?? ""}` : "ok"}` : undefined);
  const extra = f.command ? ` ${f.command}` : f.close ? ` close ${f.close.code}` : "";
  return `#${f.seq} ${f.conn} ${f.path ?? "?"} ${f.dir} op${f.opcode} ${what ?? (f.text !== undefined ? JSON.stringify(f.text.slice(0, 60)) : `${f.len} B`)}${extra} [${f.action}]`;
}

export class TapControlError extends Error {}

export class TapControl {
  readonly baseUrl: string;

  /** baseUrl: the control API root, e.g. http://172.20.0.5:9099 */
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  async #call<T>(method: "GET" | "POST" | "DELETE", path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    return controlCall({ name: "tap", baseUrl: this.baseUrl, method, path, schema, body, timeoutMs: 15_000, error: TapControlError });
  }

  async health(): Promise<TapHealth> {
    return this.#call("GET", "/healthz", HealthSchema);
  }

  /** True when the tap answers /healthz; never throws. */
  async healthy(): Promise<boolean> {
    return this.health().then(
      () => true,
      () => false,
    );
  }

  /** Recorded WebSocket frames with seq > since, oldest first. */
  async frames(opts: { since?: number; conn?: string; match?: string; limit?: number } = {}): Promise<Frame[]> {
    const q = new URLSearchParams();
    if (opts.since) q.set("since", String(opts.since));
    if (opts.conn) q.set("conn", opts.conn);
    if (opts.match) q.set("match", opts.match);
    if (opts.limit) q.set("limit", String(opts.limit));
    const qs = q.size ? `?${q}` : "";
    return (await this.#call("GET", `/frames${qs}`, z.object({ frames: z.array(FrameSchema) }))).frames;
  }

  async http(opts: { since?: number; conn?: string } = {}): Promise<HttpExchange[]> {
    const q = new URLSearchParams();
    if (opts.since) q.set("since", String(opts.since));
    if (opts.conn) q.set("conn", opts.conn);
    const qs = q.size ? `?${q}` : "";
    return (await this.#call("GET", `/http${qs}`, z.object({ http: z.array(HttpExchangeSchema) }))).http;
  }

  /** Everything recorded (frames, HTTP exchanges, connection and rule events) in seq order. */
  async events(opts: { since?: number } = {}): Promise<TapRecord[]> {
    const qs = opts.since ? `?since=${opts.since}` : "";
    return (await this.#call("GET", `/events${qs}`, z.object({ events: z.array(RecordSchema) }))).events;
  }

  async connections(): Promise<TapConnection[]> {
    return (await this.#call("GET", "/connections", z.object({ connections: z.array(ConnectionSchema) }))).connections;
  }

  /** The current seq: pass it as `since` to see only what happens from now on. */
  async seq(): Promise<number> {
    return (await this.health()).seq;
  }

  /**
   * Polls (every ~50 ms) until a frame with seq > since satisfies `predicate` (a function, or a
   * match with the rules' meaning); returns it. On timeout the error names what it waited for
   * and the last frames seen.
   */
  async waitForFrame(predicate: TapMatch | ((f: Frame) => boolean), opts: { timeoutMs?: number; since?: number; intervalMs?: number; what?: string } = {}): Promise<Frame> {
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const test = typeof predicate === "function" ? predicate : (f: Frame) => frameMatches(predicate, f);
    const what = opts.what ?? (typeof predicate === "function" ? predicate.toString().replace(/\s+/g, " ").slice(0, 200) : JSON.stringify(predicate));
    const deadline = Date.now() + timeoutMs;
    let cursor = opts.since ?? 0;
    let recent: Frame[] = [];
    let seen = 0;
    for (;;) {
      const batch = await this.frames({ since: cursor });
      for (const f of batch) {
        if (test(f)) return f;
        cursor = f.seq;
      }
      seen += batch.length;
      recent = [...recent, ...batch].slice(-8);
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
    }
    const last = recent.map(describeFrame).join("\n  ");
    throw new TapControlError(`no tap frame matched ${what} within ${timeoutMs} ms (${seen} frames seen since seq ${opts.since ?? 0}); last frames:\n  ${last || "none"}`);
  }

  async rules(): Promise<TapRule[]> {
    return (await this.#call("GET", "/rules", z.object({ rules: z.array(TapRuleSchema) }))).rules;
  }

  async rule(id: string): Promise<TapRule | undefined> {
    return (await this.rules()).find((r) => r.id === id);
  }

  /** Adds a fault rule (checked here first); it acts on the next matching frame. */
  async addRule(spec: TapRuleSpec): Promise<TapRule> {
    const checked = TapRuleSpecSchema.parse(spec);
    return (await this.#call("POST", "/rules", z.object({ ok: z.literal(true), rule: TapRuleSchema }), checked)).rule;
  }

  /** Removes one rule and undoes its half-open connections / freeze. */
  async removeRule(id: string): Promise<void> {
    await this.#call("DELETE", `/rules/${encodeURIComponent(id)}`, z.object({ ok: z.literal(true) }));
  }

  /** Heals everything: removes all rules, resumes held connections, delivers delayed frames. */
  async heal(): Promise<{ removed: string[]; healed: Healed }> {
    return this.#call("DELETE", "/rules", z.object({ ok: z.literal(true), removed: z.array(z.string()), healed: HealedSchema }));
  }

  /** Heals and forgets all records (seq keeps counting). */
  async reset(): Promise<void> {
    await this.#call("POST", "/reset", z.object({ ok: z.literal(true) }));
  }

  /** Writes every record the tap holds (frames, HTTP exchanges, connection and rule events) as
   * JSON lines; returns how many. */
  async saveTranscript(file: string): Promise<number> {
    const all = await this.events();
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, all.map((r) => JSON.stringify(r)).join("\n") + (all.length ? "\n" : ""));
    return all.length;
  }
}
