// The lab's client for an OpenClaw gateway WebSocket (protocol 4), speaking like OpenClaw's
// published reference client (@openclaw/gateway-client 2026.9.1) point by point.
//
// Handshake: the gateway sends event `connect.challenge {nonce, ts}`; the first request is
// `connect` (device block signed over the challenge, see device-identity.ts); the answer
// is `hello-ok`. Every frame in and out lands in a transcript; frames that do not match
// the published envelope schemas (@openclaw/gateway-protocol) or the lab's own stricter
// rules are recorded as anomalies (findings), never thrown.
//
// What is the reference client's, taken from its package rather than re-typed here: the
// connect auth selection (selectGatewayConnectAuth / buildGatewayConnectAuth /
// resolveGatewayConnectScopes / shouldRetryGatewayWithDeviceToken), the client id/mode
// registry, the frame guards that decide whether a frame is acted on, the 25 MiB socket limit
// before hello-ok, the tick watchdog (2x policy.tickIntervalMs, close 4000 "tick timeout")
// and sequence-gap detection. Why the lab does not run the reference GatewayClient itself:
// it opens its WebSocket privately and surfaces only parsed events, so outbound frames and
// responses would never reach the lab's transcript (docs/reference/architecture.md, "The operator's client").
import crypto from "node:crypto";
import WebSocket from "ws";
import { z } from "zod";
import {
  buildGatewayConnectAuth,
  ConnectErrorDetailCodes,
  GATEWAY_CLIENT_IDS,
  GATEWAY_CLIENT_MODES,
  readConnectErrorDetailCode,
  resolveGatewayConnectScopes,
  selectGatewayConnectAuth,
  shouldRetryGatewayWithDeviceToken,
} from "@openclaw/gateway-client/browser";
import { isGatewayEventFrame, isGatewayResponseFrame } from "@openclaw/gateway-protocol/frame-guards";
import type { DeviceIdentity } from "./device-identity.ts";
import { Redactor } from "../evidence/redact.ts";
import type { TranscriptEntry } from "../evidence/records/index.ts";
import { DeadlineExceeded, sleep, withDeadline } from "../core/wait.ts";
import { checkEnvelope, checkHelloOk, ConnectChallengeSchema, FrameSchema, HelloOkSchema, type EventFrame, type HelloOk, type ResponseFrame } from "./gateway-frames.ts";
import { GatewayError } from "./gateway-errors.ts";
import { redactSecrets, writeTranscript } from "./gateway-transcript.ts";
import { PacedBudget, pacedTimer } from "../core/pace.ts";
import { recordWait } from "../core/waits.ts";

export const PROTOCOL_VERSION = 4;
/** Lab-side deadlines (reference-machine ms, spent at the machine's pace: lab/core/pace.ts). */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
/** The reference client's socket limit (its `maxPayload` on the ws options), used until hello-ok. */
export const PREHELLO_MAX_PAYLOAD = 26_214_400;
/** The reference client's tick watch: at least this often, however short the tick interval. */
const DEFAULT_TICK_WATCH_MIN_INTERVAL_MS = 1_000;
/** What the reference client's own default scope request is when none is given. */
const REFERENCE_DEFAULT_SCOPES = ["operator.admin"] as const;

// Frames and their schemas, errors and the transcript are in gateway-frames.ts, gateway-errors.ts and
// gateway-transcript.ts; re-exported here, where every caller imports them from.
export * from "./gateway-frames.ts";
export * from "./gateway-errors.ts";
export * from "./gateway-transcript.ts";

// ---------------------------------------------------------------------------------------
// Client

export interface ClientInfo {
  /** One of OpenClaw's known client ids (GATEWAY_CLIENT_IDS: a closed set; "gateway-client", "cli", "test", ...). */
  id: string;
  version: string;
  platform: string;
  /** One of OpenClaw's client modes (GATEWAY_CLIENT_MODES: "backend", "cli", "ui", "node", "test", ...). */
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
   * "auto" (default) is the reference client's selection: a shared token/password goes first
   * and the stored token only on its one retry after AUTH_TOKEN_MISMATCH on a trusted endpoint
   * (loopback); without a shared secret the stored token is the credential. "never" ignores
   * the stored token; "only" sends the stored token and no shared secret.
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
  /** A lab-side deadline in reference-machine ms, spent at the machine's pace (default 30 s), unless `expectation`. */
  timeoutMs?: number;
  /** timeoutMs is the expectation itself ("answered within 90 s"): wall time, not paced. */
  expectation?: boolean;
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
  timer: { clear: () => void };
}

type EventListener = (payload: unknown, frame: EventFrame) => void;

export interface GatewayClientOptions {
  /** Label for transcripts and error messages. */
  name?: string;
  /** Keep credentials out of the transcript (default true). */
  redact?: boolean;
  /** How often the tick watchdog looks at the least (the reference client's tickWatchMinIntervalMs, default 1 s). */
  tickWatchMinIntervalMs?: number;
}

/**
 * Who the lab says it is. OpenClaw accepts only its own client ids and modes (a closed enum in
 * the protocol schema, no room for "fleetlab"), so the lab takes the identity the reference
 * client gives a programmatic client: `gateway-client` / `backend` (not `cli`/`cli`, which is
 * OpenClaw's own CLI and gets CLI-only treatment). The lab's name goes where free text is
 * allowed: displayName, version and userAgent.
 */
export const DEFAULT_CLIENT: ClientInfo = {
  id: GATEWAY_CLIENT_IDS.GATEWAY_CLIENT,
  version: "fleetlab",
  platform: process.platform,
  mode: GATEWAY_CLIENT_MODES.BACKEND,
  displayName: "fleetlab operator",
};

type AuthPlan = ReturnType<typeof selectGatewayConnectAuth> & {
  auth: ReturnType<typeof buildGatewayConnectAuth>;
  scopes: string[];
  explicitToken: string | undefined;
};

/** Loopback, as the reference client decides whether a stored-token retry is allowed. */
function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
    return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./.test(host);
  } catch {
    return false;
  }
}

export class GatewayClient {
  readonly name: string;
  readonly #redact: boolean;
  readonly #tickWatchMinIntervalMs: number;
  #ws: WebSocket | undefined;
  #connCount = 0;
  #conn = "";
  #hello: HelloOk | undefined;
  /** Last event seq on this connection (reset per connection, as the reference client does). */
  #lastSeq: number | null = null;
  /** When anything last arrived from the gateway (a tick or any other valid frame). */
  #lastActivity = 0;
  #tickTimer: NodeJS.Timeout | undefined;
  /** Why the lab itself ended the connection (tick timeout, close()), for the close record and errors. */
  #endedBy: string | undefined;
  readonly #pending = new Map<string, Pending>();
  /** Ids of requests that timed out, so a late answer is labelled, not called unsolicited. */
  readonly #timedOut = new Set<string>();
  readonly #listeners = new Map<string, Set<EventListener>>();
  readonly #closeListeners = new Set<(code: number, reason: string) => void>();
  readonly #transcript: TranscriptEntry[] = [];

  constructor(opts: GatewayClientOptions = {}) {
    this.name = opts.name ?? "operator";
    this.#redact = opts.redact ?? true;
    this.#tickWatchMinIntervalMs = Math.max(1, opts.tickWatchMinIntervalMs ?? DEFAULT_TICK_WATCH_MIN_INTERVAL_MS);
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
   * PAIRING_REQUIRED). Retries while the gateway answers UNAVAILABLE startup-sidecars, and
   * once with the stored device token where the reference client would (see ConnectOptions.deviceToken).
   */
  async connect(url: string, opts: ConnectOptions = {}): Promise<HelloOk> {
    if (this.#ws) throw new Error(`${this.name}: already connected or connecting; close() first`);
    const deadline = new PacedBudget(opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
    const role = opts.role ?? "operator";
    let deviceTokenRetry = false;
    let deviceTokenRetryUsed = false;
    for (;;) {
      const plan = this.#authPlan(url, opts, role, deviceTokenRetry);
      try {
        return await this.#connectOnce(url, opts, role, plan, deadline);
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        const left = deadline.leftWallMs();
        if (err.code === "UNAVAILABLE" && err.reason === "startup-sidecars" && left > 0) {
          await sleep(Math.min(left, Math.max(100, err.retryAfterMs ?? 500)));
          continue;
        }
        const detailCode = readConnectErrorDetailCode(err.details);
        // The reference client drops a stored token the gateway says is not this device's.
        if (plan.usingStoredDeviceToken && detailCode === ConnectErrorDetailCodes.AUTH_DEVICE_TOKEN_MISMATCH) {
          opts.identity?.clearDeviceToken(role);
          this.#meta("error", `stored device token refused (${detailCode}); cleared it, as the reference client does`);
        }
        const retry = shouldRetryGatewayWithDeviceToken({
          retryBudgetUsed: deviceTokenRetryUsed,
          currentDeviceToken: plan.resolvedDeviceToken,
          explicitToken: plan.explicitToken,
          storedToken: plan.storedToken,
          trustedEndpoint: isLoopbackUrl(url),
          errorDetails: err.details,
        });
        if (retry && left > 0) {
          this.#meta("error", `shared token refused (${detailCode ?? err.code}); retrying once with the stored device token, as the reference client does`);
          deviceTokenRetry = deviceTokenRetryUsed = true;
          continue;
        }
        throw err;
      }
    }
  }

  /** The reference client's auth selection for this attempt (credentials stay out of the transcript). */
  #authPlan(url: string, opts: ConnectOptions, role: string, pendingDeviceTokenRetry: boolean): AuthPlan {
    const mode = opts.deviceToken ?? "auto";
    const stored = mode === "never" ? undefined : opts.identity?.deviceToken(role);
    const explicitToken = mode === "only" ? undefined : opts.token?.trim() || undefined;
    const selected = selectGatewayConnectAuth({
      token: explicitToken,
      password: mode === "only" ? undefined : opts.password,
      storedToken: stored?.token,
      storedScopes: stored?.scopes,
      pendingDeviceTokenRetry,
      trustedDeviceTokenRetry: isLoopbackUrl(url),
    });
    const scopes = resolveGatewayConnectScopes({
      requestedScopes: opts.scopes,
      usingStoredDeviceToken: selected.usingStoredDeviceToken,
      storedScopes: selected.storedScopes,
      defaultScopes: REFERENCE_DEFAULT_SCOPES,
    });
    return { ...selected, auth: buildGatewayConnectAuth(selected), scopes, explicitToken };
  }

  async #connectOnce(url: string, opts: ConnectOptions, role: string, plan: AuthPlan, deadline: PacedBudget): Promise<HelloOk> {
    this.#connCount += 1;
    this.#conn = `${this.name}#${this.#connCount}`;
    this.#lastSeq = null;
    this.#endedBy = undefined;
    const ws = new WebSocket(url, { headers: opts.headers, handshakeTimeout: Math.max(1, deadline.leftWallMs()), maxPayload: PREHELLO_MAX_PAYLOAD });
    this.#ws = ws;
    const challenge = this.#attach(ws, url);
    try {
      const noChallenge = `no connect.challenge from ${url} within the connect budget`;
      const { nonce, ts } = await withDeadline(() => challenge, Math.max(0, deadline.ms - deadline.spent()), noChallenge).catch((err: unknown) => {
        throw err instanceof DeadlineExceeded ? new GatewayError("connect", "HANDSHAKE_FAILED", noChallenge) : err;
      });
      const client: ClientInfo = { ...DEFAULT_CLIENT, ...opts.client };
      const scopes = plan.scopes;
      // The gateway verifies the signature over auth.token ?? auth.deviceToken ?? auth.bootstrapToken.
      const device = opts.identity?.signConnect({
        clientId: client.id,
        clientMode: client.mode,
        role,
        scopes,
        signedAtMs: ts,
        token: plan.signatureToken ?? null,
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
        auth: plan.auth,
        locale: opts.locale,
        userAgent: opts.userAgent ?? "fleetlab",
        device,
      };
      const payload = await this.#send("connect", params, {
        timeoutMs: Math.max(1, deadline.ms - deadline.spent()),
      });
      const published = checkHelloOk(payload);
      if (published.length) {
        // Recorded, not fatal: a newer gateway may add fields the published 2026.9.1 schema
        // does not name yet; the lab's own shape below decides whether it can go on.
        this.#record({ dir: "in", kind: "anomaly", method: "connect", anomaly: { reason: "hello-ok does not match the published HelloOk schema", issues: published, delivered: true } });
      }
      const parsed = HelloOkSchema.safeParse(payload);
      if (!parsed.success) {
        this.#record({ dir: "in", kind: "anomaly", method: "connect", anomaly: { reason: "hello-ok does not match HelloOkSchema", issues: parsed.error.issues } });
        throw new GatewayError("connect", "BAD_RESPONSE", `hello-ok does not match the schema: ${z.prettifyError(parsed.error)}`);
      }
      this.#hello = parsed.data;
      const issued = parsed.data.auth.deviceToken;
      Redactor.credential(issued);
      if (opts.identity && issued && parsed.data.auth.role === role && issued !== plan.storedToken) {
        opts.identity.saveDeviceToken(role, issued, parsed.data.auth.scopes);
      }
      this.#startTickWatch(ws, parsed.data.policy.tickIntervalMs);
      return parsed.data;
    } catch (err) {
      await this.#drop(ws);
      throw err;
    }
  }

  /**
   * The reference client's tick watch: anything from the gateway counts as a sign of life; when
   * nothing came for 2x policy.tickIntervalMs the connection is dead: the lab records it and
   * closes with 4000 "tick timeout" (cutting the socket if the dead peer never answers the close).
   */
  #startTickWatch(ws: WebSocket, tickIntervalMs: number): void {
    this.#stopTickWatch();
    this.#lastActivity = Date.now();
    const limit = tickIntervalMs * 2;
    this.#tickTimer = setInterval(
      () => {
        if (this.#ws !== ws || ws.readyState !== WebSocket.OPEN) return this.#stopTickWatch();
        const silent = Date.now() - this.#lastActivity;
        if (silent <= limit) return;
        this.#stopTickWatch();
        this.#endedBy = `tick timeout: nothing from the gateway for ${silent} ms (policy.tickIntervalMs ${tickIntervalMs}, limit 2x = ${limit} ms)`;
        this.#meta("error", this.#endedBy);
        ws.close(4000, "tick timeout");
        setTimeout(() => ws.terminate(), 1_000).unref(); // fixed: not a deadline: a force-close grace after close()
      },
      Math.max(tickIntervalMs, this.#tickWatchMinIntervalMs),
    );
    this.#tickTimer.unref();
  }

  #stopTickWatch(): void {
    if (this.#tickTimer) clearInterval(this.#tickTimer);
    this.#tickTimer = undefined;
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
        const by = this.#endedBy;
        this.#record({ dir: "meta", kind: "close", note: `code ${code}${reason ? ` reason ${reason}` : ""}${by ? ` (${by})` : ""}` });
        if (this.#ws === ws) {
          this.#ws = undefined;
          this.#hello = undefined;
          this.#stopTickWatch();
        }
        const why = `connection closed (code ${code}${reason ? `, ${reason}` : ""}${by ? `; ${by}` : ""})`;
        if (!challenged) reject(new GatewayError("connect", "CONNECTION_CLOSED", `${why} before connect.challenge`));
        for (const [id, p] of this.#pending) {
          p.timer.clear();
          this.#pending.delete(id);
          p.reject(new GatewayError(p.method, "CONNECTION_CLOSED", why));
        }
        for (const fn of this.#closeListeners) fn(code, reason);
      });
      ws.on("message", (data, isBinary) => {
        if (this.#ws !== ws) return; // a socket the lab already let go of
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

  /**
   * Parse, validate, record and route one inbound message. Never throws. A frame that fails
   * the published envelope schema or a lab rule is recorded as an anomaly, and still routed
   * when OpenClaw's reference client would act on it (its frame guards accept it): the lab
   * neither drops what OpenClaw's own client would use nor passes it without a record.
   */
  #receive(data: WebSocket.RawData, isBinary: boolean): EventFrame | ResponseFrame | undefined {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    const text = buf.toString("utf8");
    if (isBinary) {
      this.#record({ dir: "in", kind: "anomaly", raw: text, bytes: buf.length, anomaly: { reason: "binary frame" } });
      return undefined;
    }
    const limit = this.#hello?.policy.maxPayload;
    if (limit !== undefined && buf.length > limit) {
      this.#record({ dir: "in", kind: "anomaly", bytes: buf.length, anomaly: { reason: `frame of ${buf.length} bytes exceeds hello-ok policy.maxPayload ${limit}` } });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      this.#record({ dir: "in", kind: "anomaly", raw: text, bytes: buf.length, anomaly: { reason: `not JSON: ${(err as Error).message}` } });
      return undefined;
    }
    const envelope = checkEnvelope(json);
    const acted = isGatewayEventFrame(json) || isGatewayResponseFrame(json);
    const parsed = FrameSchema.safeParse(json);
    if (envelope.issues.length || !parsed.success) {
      const issues = [...envelope.issues, ...(parsed.success ? [] : parsed.error.issues.map((i) => ({ path: `/${i.path.join("/")}`, message: i.message })))];
      const delivered = acted && (json as { type?: unknown }).type !== "req";
      const f = json as { type?: unknown; id?: unknown; method?: unknown; event?: unknown; ok?: unknown };
      const id = typeof f.id === "string" ? f.id : undefined;
      this.#record({
        dir: "in",
        kind: "anomaly",
        id,
        // A response keeps its request's method and ok, so readers can still pair it.
        method: f.type === "res" && id ? this.#pending.get(id)?.method : typeof f.method === "string" ? f.method : undefined,
        ok: f.type === "res" && typeof f.ok === "boolean" ? f.ok : undefined,
        event: typeof f.event === "string" ? f.event : undefined,
        frame: this.#clean(json),
        bytes: buf.length,
        anomaly: { reason: `frame does not match the envelope schema (${envelope.schema})`, issues, delivered },
      });
      if (!delivered) return undefined;
      return this.#route(json as EventFrame | ResponseFrame, buf.length, false);
    }
    const frame = parsed.data;
    if (frame.type === "req") {
      this.#record({ dir: "in", kind: "anomaly", id: frame.id, method: frame.method, frame: this.#clean(frame), bytes: buf.length, anomaly: { reason: "request frame sent to an operator client" } });
      return undefined;
    }
    return this.#route(frame, buf.length, true);
  }

  /** Route an event or response; `record` false when the anomaly entry already holds the frame. */
  #route(frame: EventFrame | ResponseFrame, bytes: number, record: boolean): EventFrame | ResponseFrame | undefined {
    this.#lastActivity = Date.now();
    if (frame.type === "event") {
      if (record) this.#record({ dir: "in", kind: "event", event: frame.event, frame: this.#clean(frame), bytes });
      this.#checkSeq(frame);
      this.#emit(frame);
      return frame;
    }
    const p = this.#pending.get(frame.id);
    if (!p) {
      const late = this.#timedOut.has(frame.id);
      if (record || late) {
        this.#record({
          dir: "in",
          kind: late ? "res" : "anomaly",
          id: frame.id,
          ok: frame.ok,
          frame: this.#clean(frame),
          bytes,
          ...(late ? { note: "late response to a request that already timed out" } : { anomaly: { reason: "response to no pending request" } }),
        });
      }
      return undefined;
    }
    if (record) this.#record({ dir: "in", kind: "res", id: frame.id, method: p.method, ok: frame.ok, frame: this.#clean(frame), bytes });
    const status = (frame.payload as { status?: unknown } | undefined)?.status;
    if (frame.ok && p.expectFinal && status === "accepted") {
      p.onAccepted?.(frame.payload);
      return frame;
    }
    p.timer.clear();
    this.#pending.delete(frame.id);
    if (frame.ok) p.resolve(frame.payload);
    else if (frame.error) p.reject(GatewayError.fromShape(p.method, frame.error));
    else p.reject(new GatewayError(p.method, "BAD_RESPONSE", "the gateway answered ok:false without an error", frame));
    return frame;
  }

  /** Sequence-gap detection on events, as the reference client does (connect.challenge aside). */
  #checkSeq(frame: EventFrame): void {
    if (frame.event === "connect.challenge" || typeof frame.seq !== "number") return;
    const last = this.#lastSeq;
    this.#lastSeq = frame.seq;
    if (last === null || frame.seq === last + 1) return;
    if (frame.seq > last + 1) {
      this.#record({ dir: "meta", kind: "anomaly", event: frame.event, gap: { expected: last + 1, received: frame.seq }, anomaly: { reason: `sequence gap: expected seq ${last + 1}, received ${frame.seq} (${frame.seq - last - 1} event(s) missing)` } });
    } else {
      this.#record({ dir: "meta", kind: "anomaly", event: frame.event, anomaly: { reason: `sequence went back: seq ${frame.seq} after ${last}` } });
    }
  }

  /**
   * Send one request and wait for its response. Rejects with GatewayError naming the
   * method: the gateway's own code/message/details, or TIMEOUT / CONNECTION_CLOSED.
   */
  request<T = unknown>(method: string, params?: unknown, opts: RequestOptions = {}): Promise<T> {
    if (!this.connected) {
      return Promise.reject(new GatewayError(method, "NOT_CONNECTED", `${this.name} is not connected`));
    }
    // Time awaiting the answer is the scenario's time spent on OpenClaw (lab/core/waits.ts).
    const began = Date.now();
    return (this.#send(method, params, opts) as Promise<T>).finally(() => recordWait("request", began));
  }

  #send(method: string, params: unknown, opts: RequestOptions): Promise<unknown> {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new GatewayError(method, "NOT_CONNECTED", `${this.name} has no open socket`));
    }
    const id = crypto.randomUUID();
    const frame = { type: "req" as const, id, method, params };
    const text = JSON.stringify(frame);
    const bytes = Buffer.byteLength(text);
    // The gateway closes a connection that sends more than it advertised (hello-ok policy.maxPayload):
    // refuse here, with the request in the transcript, instead of losing the connection.
    const limit = this.#hello?.policy.maxPayload;
    if (limit !== undefined && bytes > limit) {
      const why = `request of ${bytes} bytes exceeds hello-ok policy.maxPayload ${limit}; not sent`;
      this.#record({ dir: "meta", kind: "error", id, method, bytes, note: why });
      return Promise.reject(new GatewayError(method, "PAYLOAD_TOO_LARGE", why));
    }
    const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const expire = (b?: PacedBudget) => {
        this.#pending.delete(id);
        this.#timedOut.add(id);
        reject(timeoutError(method, `no response within ${b ? b.describe() : `${timeoutMs} ms (a fixed bound: the expectation)`}`, b));
      };
      const timer = paced(timeoutMs, !!opts.expectation, expire);
      this.#pending.set(id, { method, expectFinal: opts.expectFinal ?? false, onAccepted: opts.onAccepted, resolve, reject, timer });
      this.#record({ dir: "out", kind: "req", id, method, frame: this.#clean(frame), bytes });
      ws.send(text, (err) => {
        if (!err) return;
        const p = this.#pending.get(id);
        if (!p) return;
        p.timer.clear();
        this.#pending.delete(id);
        reject(new GatewayError(method, "CONNECTION_CLOSED", `send failed: ${err.message}`, undefined, { cause: err }));
      });
    });
  }

  /**
   * Write `text` on the open socket as it is: a frame the lab makes up (a result nobody asked
   * for, a stale field, a malformed one). Recorded as sent (a gateway frame by its type, anything
   * else as an anomaly with its raw text); no answer is awaited (see `on` for what comes back).
   */
  sendRaw(text: string): void {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) throw new GatewayError("send", "NOT_CONNECTED", `${this.name} has no open socket`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const f = (parsed && typeof parsed === "object" ? parsed : {}) as { type?: unknown; id?: unknown; method?: unknown; event?: unknown; ok?: unknown };
    const kind = f.type === "req" ? "req" : f.type === "res" ? "res" : f.type === "event" ? "event" : undefined;
    const bytes = Buffer.byteLength(text);
    const note = "written as is by the lab (sendRaw)";
    if (kind) {
      this.#record({
        dir: "out",
        kind,
        id: typeof f.id === "string" ? f.id : undefined,
        method: typeof f.method === "string" ? f.method : undefined,
        event: typeof f.event === "string" ? f.event : undefined,
        ok: typeof f.ok === "boolean" ? f.ok : undefined,
        frame: this.#clean(parsed),
        bytes,
        note,
      });
    } else {
      this.#record({ dir: "out", kind: "anomaly", raw: text, bytes, note, anomaly: { reason: parsed === undefined ? "sent by the lab: not JSON" : "sent by the lab: not a gateway frame" } });
    }
    ws.send(text);
  }

  /** Cut the socket with no close frame (the gateway sees 1006, as when a process dies). */
  async abort(): Promise<void> {
    const ws = this.#ws;
    if (!ws) return;
    this.#stopTickWatch();
    this.#endedBy ??= "aborted by the lab (no close frame)";
    if (ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
    ws.terminate();
    await closed;
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
  waitForEvent<T = unknown>(event: string, predicate: (payload: T) => boolean = () => true, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS, opts: { expectation?: boolean } = {}): Promise<T> {
    return new Promise((resolve, reject) => {
      const done = () => {
        timer.clear();
        off();
        offClose();
      };
      const timer = paced(timeoutMs, !!opts.expectation, (b) => {
        done();
        reject(timeoutError(`event ${event}`, `no matching ${event} event within ${b ? b.describe() : `${timeoutMs} ms (a fixed bound: the expectation)`}`, b));
      });
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
    writeTranscript(file, opts.since === undefined ? this.#transcript : this.#transcript.filter((e) => e.t >= opts.since!));
  }

  /**
   * Close the socket and wait until it is closed (its code and reason reach the transcript);
   * pending requests reject.
   */
  async close(code = 1000, reason = "client closing"): Promise<void> {
    const ws = this.#ws;
    if (!ws) return;
    this.#stopTickWatch();
    if (ws.readyState === WebSocket.CLOSED) {
      this.#ws = undefined;
      return;
    }
    this.#endedBy ??= "closed by the lab";
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => ws.terminate(), 2_000); // fixed: not a deadline: a force-close grace after close()
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
    this.#stopTickWatch();
    this.#hello = undefined;
    if (ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        // fixed: not a deadline: a force-close grace after close()
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
    if (this.#ws === ws) this.#ws = undefined;
  }

  #clean(frame: unknown): unknown {
    return this.#redact ? redactSecrets(frame) : frame;
  }

  #meta(kind: "open" | "error", note: string): void {
    this.#record({ dir: "meta", kind, note });
  }

  #record(e: Omit<TranscriptEntry, "n" | "ts" | "t" | "conn">): void {
    const t = Date.now();
    // A frame that is not JSON is kept as text, with credential headers and "key":"value" pairs hidden.
    if (e.raw !== undefined && this.#redact) e = { ...e, raw: new Redactor().text(e.raw) };
    this.#transcript.push({ n: this.#transcript.length, ts: new Date(t).toISOString(), t, conn: this.#conn, ...e });
  }
}


/** A timer on a lab-side deadline (paced; the budget is handed to `fn`), or on a fixed bound that is the expectation. */
function paced(ms: number, fixed: boolean, fn: (b?: PacedBudget) => void): { clear: () => void } {
  if (!fixed) return pacedTimer(ms, fn);
  const t = setTimeout(() => fn(undefined), ms); // fixed: expectation: the caller named this bound the expectation
  return { clear: () => clearTimeout(t) };
}

/** TIMEOUT for a request or an event wait; on a machine busier than planned it carries why (lab/core/pace.ts machineBusyIn: unknown, not fail). */
function timeoutError(method: string, message: string, b?: PacedBudget): GatewayError {
  const busy = b?.busy();
  const err = new GatewayError(method, "TIMEOUT", busy ? `${message}; ${busy}` : message);
  if (busy) Object.assign(err, { machineBusy: busy });
  return err;
}
