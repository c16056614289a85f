// The lab's client for an OpenClaw gateway WebSocket (protocol 4).
//
// Handshake: the gateway sends event `connect.challenge {nonce, ts}`; the first request is
// `connect` (device block signed over the challenge, see device-identity.ts); the answer
// is `hello-ok`. Every frame in and out lands in a transcript; frames that do not match
// the envelope schemas are recorded as anomalies (findings), never thrown.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import WebSocket from "ws";
import { z } from "zod";
import type { DeviceIdentity } from "./device-identity.ts";
import { DeadlineExceeded, sleep, withDeadline } from "../wait.ts";

export const PROTOCOL_VERSION = 4;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

// ---------------------------------------------------------------------------------------
// Frame envelope schemas (docs/gateway/protocol/transport.md "Frame shapes").
// Loose objects: fields the lab does not know yet are kept, not rejected.

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

// ---------------------------------------------------------------------------------------
// Errors

/** Error codes the client itself produces (the gateway's own codes pass through as-is). */
export type LocalErrorCode = "TIMEOUT" | "CONNECTION_CLOSED" | "NOT_CONNECTED" | "HANDSHAKE_FAILED" | "BAD_RESPONSE";

export class GatewayError extends Error {
  /** The gateway's error.message (or the client's own reason for local codes). */
  readonly gatewayMessage: string;
  readonly retryable: boolean | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly method: string,
    readonly code: string,
    gatewayMessage: string,
    readonly details?: unknown,
    extra: { retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(GatewayError.#describe(method, code, gatewayMessage, details), extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "GatewayError";
    this.gatewayMessage = gatewayMessage;
    this.retryable = extra.retryable;
    this.retryAfterMs = extra.retryAfterMs;
  }

  static fromShape(method: string, error: ErrorShape): GatewayError {
    return new GatewayError(method, error.code, error.message, error.details, {
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
    });
  }

  /** error.details.code, e.g. "PAIRING_REQUIRED", "MISSING_SCOPE", "AUTH_TOKEN_MISMATCH". */
  get detailsCode(): string | undefined {
    return detailString(this.details, "code");
  }
  /** error.details.reason, e.g. "not-paired", "scope-upgrade", "startup-sidecars". */
  get reason(): string | undefined {
    return detailString(this.details, "reason");
  }
  /** The pending pairing request to approve (`openclaw devices approve <requestId>`). */
  get requestId(): string | undefined {
    return detailString(this.details, "requestId");
  }
  get isPairingRequired(): boolean {
    return this.detailsCode === "PAIRING_REQUIRED";
  }

  static #describe(method: string, code: string, message: string, details: unknown): string {
    const dc = detailString(details, "code");
    const reason = detailString(details, "reason");
    const requestId = detailString(details, "requestId");
    const bits = [dc, reason && `reason ${reason}`, requestId && `requestId ${requestId}`].filter(Boolean);
    return `gateway ${method} failed: ${code}: ${message}${bits.length ? ` (${bits.join(", ")})` : ""}`;
  }
}

function detailString(details: unknown, key: string): string | undefined {
  if (details && typeof details === "object" && key in details) {
    const v = (details as Record<string, unknown>)[key];
    return typeof v === "string" && v.length > 0 ? v : undefined;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Transcript

export type Direction = "in" | "out" | "meta";

export interface TranscriptEntry {
  /** Position in this client's transcript. */
  n: number;
  /** Wall-clock time, ISO 8601 with milliseconds. */
  ts: string;
  /** Milliseconds since the epoch (for arithmetic). */
  t: number;
  /** Connection label: `<client name>#<connection number>`. */
  conn: string;
  dir: Direction;
  kind: "req" | "res" | "event" | "open" | "close" | "error" | "anomaly";
  id?: string;
  method?: string;
  event?: string;
  ok?: boolean;
  /** The frame as sent or received (credentials redacted). */
  frame?: unknown;
  /** The raw text, only when it could not be parsed as JSON. */
  raw?: string;
  bytes?: number;
  anomaly?: { reason: string; issues?: unknown };
  note?: string;
}

const SECRET_KEYS = new Set(["token", "deviceToken", "password", "bootstrapToken", "approvalRuntimeToken", "agentRuntimeIdentityToken"]);

/** Deep copy with credential strings replaced; keeps evidence shareable. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEYS.has(k) && typeof v === "string" ? "[redacted]" : redactSecrets(v);
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------
// Client

export interface ClientInfo {
  /** One of OpenClaw's known client ids ("cli", "gateway-client", "test", ...). */
  id: string;
  version: string;
  platform: string;
  /** One of OpenClaw's client modes ("cli", "backend", "ui", "node", "test", ...). */
  mode: string;
  displayName?: string;
  deviceFamily?: string;
  instanceId?: string;
}

export interface ConnectOptions {
  /** Shared gateway secret (gateway.auth.token). */
  token?: string;
  password?: string;
  /** Device identity; without it the gateway clears the requested scopes for most clients. */
  identity?: DeviceIdentity;
  /**
   * How to use a device token the gateway issued earlier (stored beside the identity):
   * "auto" (default) sends it when present and falls back to the shared token if the
   * gateway rejects it; "never" always sends the shared token; "only" never falls back.
   */
  deviceToken?: "auto" | "never" | "only";
  role?: string;
  scopes?: string[];
  caps?: string[];
  commands?: string[];
  permissions?: Record<string, boolean>;
  client?: Partial<ClientInfo>;
  locale?: string;
  userAgent?: string;
  /** Extra HTTP headers on the WebSocket upgrade. */
  headers?: Record<string, string>;
  /** Budget for the whole connect, including retries while the gateway finishes startup. */
  timeoutMs?: number;
  minProtocol?: number;
  maxProtocol?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
  /**
   * Some methods (`agent`) answer twice under one id: first `{status:"accepted"}`, then
   * the final result. With expectFinal the promise resolves with the final one.
   */
  expectFinal?: boolean;
  /** Called with the interim "accepted" payload when expectFinal is set. */
  onAccepted?: (payload: unknown) => void;
}

interface Pending {
  method: string;
  expectFinal: boolean;
  onAccepted?: (payload: unknown) => void;
  resolve: (payload: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

type EventListener = (payload: unknown, frame: EventFrame) => void;

export interface GatewayClientOptions {
  /** Label for transcripts and error messages. */
  name?: string;
  /** Keep credentials out of the transcript (default true). */
  redact?: boolean;
}

export const DEFAULT_CLIENT: ClientInfo = { id: "cli", version: "fleetlab", platform: "linux", mode: "cli" };

export class GatewayClient {
  readonly name: string;
  readonly #redact: boolean;
  #ws: WebSocket | undefined;
  #connCount = 0;
  #conn = "";
  #hello: HelloOk | undefined;
  readonly #pending = new Map<string, Pending>();
  /** Ids of requests that timed out, so a late answer is labelled, not called unsolicited. */
  readonly #timedOut = new Set<string>();
  readonly #listeners = new Map<string, Set<EventListener>>();
  readonly #closeListeners = new Set<(code: number, reason: string) => void>();
  readonly #transcript: TranscriptEntry[] = [];

  constructor(opts: GatewayClientOptions = {}) {
    this.name = opts.name ?? "operator";
    this.#redact = opts.redact ?? true;
  }

  /** Convenience: new client + connect. */
  static async connect(url: string, opts: ConnectOptions & GatewayClientOptions = {}): Promise<GatewayClient> {
    const client = new GatewayClient(opts);
    await client.connect(url, opts);
    return client;
  }

  get connected(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN && this.#hello !== undefined;
  }
  get hello(): HelloOk | undefined {
    return this.#hello;
  }

  /**
   * Open the socket, answer the challenge, send `connect`, return `hello-ok`.
   * A refused connect throws a GatewayError with method "connect" (see .requestId for
   * PAIRING_REQUIRED). Retries while the gateway answers UNAVAILABLE startup-sidecars.
   */
  async connect(url: string, opts: ConnectOptions = {}): Promise<HelloOk> {
    if (this.#ws) throw new Error(`${this.name}: already connected or connecting; close() first`);
    const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    const role = opts.role ?? "operator";
    const mode = opts.deviceToken ?? "auto";
    let useStored = mode !== "never" && opts.identity?.deviceToken(role) !== undefined;
    for (;;) {
      try {
        return await this.#connectOnce(url, opts, role, useStored, deadline);
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        const left = deadline - Date.now();
        if (err.code === "UNAVAILABLE" && err.reason === "startup-sidecars" && left > 0) {
          await sleep(Math.min(left, Math.max(100, err.retryAfterMs ?? 500)));
          continue;
        }
        const authRejected = err.detailsCode?.startsWith("AUTH_") ?? false;
        if (useStored && authRejected && mode === "auto" && (opts.token || opts.password) && left > 0) {
          if (err.detailsCode === "AUTH_DEVICE_TOKEN_MISMATCH") opts.identity?.clearDeviceToken(role);
          this.#meta("error", `stored device token refused (${err.detailsCode}); retrying with the shared secret`);
          useStored = false;
          continue;
        }
        throw err;
      }
    }
  }

  async #connectOnce(url: string, opts: ConnectOptions, role: string, useStored: boolean, deadline: number): Promise<HelloOk> {
    this.#connCount += 1;
    this.#conn = `${this.name}#${this.#connCount}`;
    const ws = new WebSocket(url, { headers: opts.headers, handshakeTimeout: Math.max(1, deadline - Date.now()) });
    this.#ws = ws;
    const challenge = this.#attach(ws, url);
    try {
      const noChallenge = `no connect.challenge from ${url} within the connect budget`;
      const { nonce, ts } = await withDeadline(() => challenge, Math.max(0, deadline - Date.now()), noChallenge).catch((err: unknown) => {
        throw err instanceof DeadlineExceeded ? new GatewayError("connect", "HANDSHAKE_FAILED", noChallenge) : err;
      });
      const client: ClientInfo = { ...DEFAULT_CLIENT, ...opts.client };
      const scopes = opts.scopes ?? [];
      const stored = useStored ? opts.identity?.deviceToken(role) : undefined;
      const auth = stored
        ? { deviceToken: stored.token }
        : opts.token || opts.password
          ? { token: opts.token, password: opts.password }
          : undefined;
      // The gateway verifies the signature over auth.token ?? auth.deviceToken ?? auth.bootstrapToken.
      const signatureToken = stored ? stored.token : (opts.token ?? null);
      const device = opts.identity?.signConnect({
        clientId: client.id,
        clientMode: client.mode,
        role,
        scopes,
        signedAtMs: ts,
        token: signatureToken,
        nonce,
        platform: client.platform,
        deviceFamily: client.deviceFamily,
      });
      const params = {
        minProtocol: opts.minProtocol ?? PROTOCOL_VERSION,
        maxProtocol: opts.maxProtocol ?? PROTOCOL_VERSION,
        client,
        role,
        scopes,
        caps: opts.caps ?? [],
        commands: opts.commands,
        permissions: opts.permissions,
        auth,
        locale: opts.locale,
        userAgent: opts.userAgent ?? "fleetlab",
        device,
      };
      const payload = await this.#send("connect", params, {
        timeoutMs: Math.max(1, deadline - Date.now()),
      });
      const parsed = HelloOkSchema.safeParse(payload);
      if (!parsed.success) {
        this.#record({ dir: "in", kind: "anomaly", method: "connect", anomaly: { reason: "hello-ok does not match HelloOkSchema", issues: parsed.error.issues } });
        throw new GatewayError("connect", "BAD_RESPONSE", `hello-ok does not match the schema: ${z.prettifyError(parsed.error)}`);
      }
      this.#hello = parsed.data;
      const issued = parsed.data.auth.deviceToken;
      if (opts.identity && issued && parsed.data.auth.role === role && issued !== stored?.token) {
        opts.identity.saveDeviceToken(role, issued, parsed.data.auth.scopes);
      }
      return parsed.data;
    } catch (err) {
      await this.#drop(ws);
      throw err;
    }
  }

  /** Wire the socket's handlers; resolves with the first valid connect.challenge. */
  #attach(ws: WebSocket, url: string): Promise<{ nonce: string; ts: number }> {
    return new Promise((resolve, reject) => {
      let challenged = false;
      ws.on("open", () => this.#meta("open", `connected to ${url}`));
      ws.on("error", (err) => {
        this.#meta("error", err.message);
        if (!challenged) reject(new GatewayError("connect", "HANDSHAKE_FAILED", `socket to ${url} failed: ${err.message}`, undefined, { cause: err }));
      });
      ws.on("close", (code, reasonBuf) => {
        const reason = reasonBuf.toString();
        this.#record({ dir: "meta", kind: "close", note: `code ${code}${reason ? ` reason ${reason}` : ""}` });
        if (this.#ws === ws) {
          this.#ws = undefined;
          this.#hello = undefined;
        }
        const why = `connection closed (code ${code}${reason ? `, ${reason}` : ""})`;
        if (!challenged) reject(new GatewayError("connect", "CONNECTION_CLOSED", `${why} before connect.challenge`));
        for (const [id, p] of this.#pending) {
          clearTimeout(p.timer);
          this.#pending.delete(id);
          p.reject(new GatewayError(p.method, "CONNECTION_CLOSED", why));
        }
        for (const fn of this.#closeListeners) fn(code, reason);
      });
      ws.on("message", (data, isBinary) => {
        const frame = this.#receive(data, isBinary);
        if (!frame || frame.type !== "event" || frame.event !== "connect.challenge" || challenged) return;
        const c = ConnectChallengeSchema.safeParse(frame.payload);
        if (!c.success) {
          this.#record({ dir: "in", kind: "anomaly", event: "connect.challenge", anomaly: { reason: "connect.challenge payload does not match schema", issues: c.error.issues } });
          return;
        }
        challenged = true;
        resolve(c.data);
      });
    });
  }

  /** Parse, validate, record and route one inbound message. Never throws. */
  #receive(data: WebSocket.RawData, isBinary: boolean): EventFrame | ResponseFrame | undefined {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    const text = buf.toString("utf8");
    if (isBinary) {
      this.#record({ dir: "in", kind: "anomaly", raw: text, bytes: buf.length, anomaly: { reason: "binary frame" } });
      return undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      this.#record({ dir: "in", kind: "anomaly", raw: text, bytes: buf.length, anomaly: { reason: `not JSON: ${(err as Error).message}` } });
      return undefined;
    }
    const parsed = FrameSchema.safeParse(json);
    if (!parsed.success) {
      this.#record({ dir: "in", kind: "anomaly", frame: this.#clean(json), bytes: buf.length, anomaly: { reason: "frame does not match the envelope schema", issues: parsed.error.issues } });
      return undefined;
    }
    const frame = parsed.data;
    if (frame.type === "req") {
      this.#record({ dir: "in", kind: "anomaly", id: frame.id, method: frame.method, frame: this.#clean(frame), bytes: buf.length, anomaly: { reason: "request frame sent to an operator client" } });
      return undefined;
    }
    if (frame.type === "event") {
      this.#record({ dir: "in", kind: "event", event: frame.event, frame: this.#clean(frame), bytes: buf.length });
      this.#emit(frame);
      return frame;
    }
    const p = this.#pending.get(frame.id);
    if (!p) {
      const late = this.#timedOut.has(frame.id);
      this.#record({
        dir: "in",
        kind: late ? "res" : "anomaly",
        id: frame.id,
        ok: frame.ok,
        frame: this.#clean(frame),
        bytes: buf.length,
        ...(late ? { note: "late response to a request that already timed out" } : { anomaly: { reason: "response to no pending request" } }),
      });
      return undefined;
    }
    this.#record({ dir: "in", kind: "res", id: frame.id, method: p.method, ok: frame.ok, frame: this.#clean(frame), bytes: buf.length });
    const status = (frame.payload as { status?: unknown } | undefined)?.status;
    if (frame.ok && p.expectFinal && status === "accepted") {
      p.onAccepted?.(frame.payload);
      return frame;
    }
    clearTimeout(p.timer);
    this.#pending.delete(frame.id);
    if (frame.ok) p.resolve(frame.payload);
    else p.reject(GatewayError.fromShape(p.method, frame.error!));
    return frame;
  }

  /**
   * Send one request and wait for its response. Rejects with GatewayError naming the
   * method: the gateway's own code/message/details, or TIMEOUT / CONNECTION_CLOSED.
   */
  request<T = unknown>(method: string, params?: unknown, opts: RequestOptions = {}): Promise<T> {
    if (!this.connected) {
      return Promise.reject(new GatewayError(method, "NOT_CONNECTED", `${this.name} is not connected`));
    }
    return this.#send(method, params, opts) as Promise<T>;
  }

  #send(method: string, params: unknown, opts: RequestOptions): Promise<unknown> {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new GatewayError(method, "NOT_CONNECTED", `${this.name} has no open socket`));
    }
    const id = crypto.randomUUID();
    const frame = { type: "req" as const, id, method, params };
    const text = JSON.stringify(frame);
    const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        this.#timedOut.add(id);
        reject(new GatewayError(method, "TIMEOUT", `no response within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { method, expectFinal: opts.expectFinal ?? false, onAccepted: opts.onAccepted, resolve, reject, timer });
      this.#record({ dir: "out", kind: "req", id, method, frame: this.#clean(frame), bytes: Buffer.byteLength(text) });
      ws.send(text, (err) => {
        if (!err) return;
        const p = this.#pending.get(id);
        if (!p) return;
        clearTimeout(p.timer);
        this.#pending.delete(id);
        reject(new GatewayError(method, "CONNECTION_CLOSED", `send failed: ${err.message}`, undefined, { cause: err }));
      });
    });
  }

  /** Subscribe to a gateway event ("*" for all). Returns an unsubscribe function. */
  on(event: string, fn: EventListener): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  onClose(fn: (code: number, reason: string) => void): () => void {
    this.#closeListeners.add(fn);
    return () => this.#closeListeners.delete(fn);
  }

  /** Wait for the next event named `event` whose payload satisfies `predicate`. */
  waitForEvent<T = unknown>(event: string, predicate: (payload: T) => boolean = () => true, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): Promise<T> {
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        off();
        offClose();
      };
      const timer = setTimeout(() => {
        done();
        reject(new GatewayError(`event ${event}`, "TIMEOUT", `no matching ${event} event within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(event, (payload) => {
        let hit: boolean;
        try {
          hit = predicate(payload as T);
        } catch (err) {
          done();
          reject(err as Error);
          return;
        }
        if (hit) {
          done();
          resolve(payload as T);
        }
      });
      const offClose = this.onClose((code, reason) => {
        done();
        reject(new GatewayError(`event ${event}`, "CONNECTION_CLOSED", `connection closed (code ${code}${reason ? `, ${reason}` : ""}) while waiting`));
      });
    });
  }

  #emit(frame: EventFrame): void {
    for (const key of [frame.event, "*"]) {
      for (const fn of this.#listeners.get(key) ?? []) {
        try {
          fn(frame.payload, frame);
        } catch (err) {
          // A listener's bug must not take the connection down; keep it in the evidence.
          this.#meta("error", `listener for ${frame.event} threw: ${(err as Error).message}`);
        }
      }
    }
  }

  /** Every frame in and out, plus open/close/anomaly records, in order. */
  transcript(): readonly TranscriptEntry[] {
    return this.#transcript;
  }

  anomalies(): TranscriptEntry[] {
    return this.#transcript.filter((e) => e.kind === "anomaly");
  }

  /** Write the transcript as JSONL (one entry per line); `since` (epoch ms) keeps only what came after. */
  saveTranscript(file: string, opts: { since?: number } = {}): void {
    const entries = opts.since === undefined ? this.#transcript : this.#transcript.filter((e) => e.t >= opts.since!);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length ? "\n" : ""));
  }

  /** Close the socket and wait until it is closed; pending requests reject. */
  async close(code = 1000, reason = "client closing"): Promise<void> {
    const ws = this.#ws;
    if (!ws) return;
    if (ws.readyState === WebSocket.CLOSED) {
      this.#ws = undefined;
      return;
    }
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => ws.terminate(), 2_000);
      ws.once("close", () => {
        clearTimeout(force);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(code, reason);
    });
  }

  /** After a failed connect: give the gateway a moment to close (its code and reason go
   * into the transcript), then cut the socket. */
  async #drop(ws: WebSocket): Promise<void> {
    if (this.#ws === ws) this.#ws = undefined;
    this.#hello = undefined;
    if (ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1_000);
      ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  #clean(frame: unknown): unknown {
    return this.#redact ? redactSecrets(frame) : frame;
  }

  #meta(kind: "open" | "error", note: string): void {
    this.#record({ dir: "meta", kind, note });
  }

  #record(e: Omit<TranscriptEntry, "n" | "ts" | "t" | "conn">): void {
    const t = Date.now();
    this.#transcript.push({ n: this.#transcript.length, ts: new Date(t).toISOString(), t, conn: this.#conn, ...e });
  }
}

