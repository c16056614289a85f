// A scripted node: a node client the lab drives step by step, beside the real node hosts. It
// speaks OpenClaw's node protocol through the lab's gateway client (lab/clients/gateway.ts: the
// reference client's connect auth, @openclaw/gateway-protocol's schemas on every frame) with
// role "node", client id "node-host" / mode "node" (OpenClaw's own ids for a headless node host),
// its own device identity, and the commands and caps a scenario declares. A scenario makes it do
// what a real node host would not: connect twice with one identity, answer or withhold any
// command, send any frame (a stale epoch, a result after revocation, a malformed field),
// disconnect with any close code, or with none.
//
// What it does not do that a real node host does (docs/reference/architecture.md, "The
// scripted node"): it runs no worker supervisor (no bundle install, no worker processes, no
// worker socket on /__openclaw__/worker), keeps no state on disk beyond its identity and
// device token, runs no MCP servers, answers no command by itself (every answer is the
// scenario's), and does not reconnect on its own after a close.
import type { DeviceIdentity } from "./device-identity.ts";
import { GatewayClient, GatewayError, writeTranscript, type ConnectOptions, type HelloOk, type TranscriptEntry } from "./gateway.ts";
import { waitFor } from "../core/wait.ts";

/** A node.invoke.request the scripted node received (on any of its connections). */
export interface ReceivedInvoke {
  /** The invoke id (payload.id): what node.invoke.result names. */
  id: string;
  nodeId: string;
  command: string;
  /** paramsJSON parsed (its text when it is not JSON); undefined when there was none. */
  params: unknown;
  timeoutMs?: number;
  /** Which connection (GatewayClient name) it came on, and when. */
  conn: string;
  t: number;
  /** What the node did with it: answered (ok or not), withheld, or not yet decided. */
  outcome: "answered" | "withheld" | "pending";
}

/** How the node answers a command: ok with a payload, an error, or nothing at all. */
export type Answer = { ok: true; payload?: unknown } | { ok: false; error: { code: string; message: string } } | "withhold";
export type InvokeHandler = (invoke: ReceivedInvoke) => Answer | Promise<Answer>;

export interface ScriptedNodeOptions {
  /** The lab alias; also the display name the operator sees in node.list and pairing lists. */
  name: string;
  identity: DeviceIdentity;
  /** The gateway's shared token (gateway.auth.token). */
  token: string;
  /** Commands declared at connect (what node pairing approves). Default: system.notify, system.which. */
  commands?: string[];
  caps?: string[];
  platform?: string;
}

/** The commands a scripted node declares unless told otherwise: one the Linux policy allows by default, one a node pairing approves. */
export const DEFAULT_SCRIPTED_COMMANDS = ["system.notify", "system.which"];

export class ScriptedNode {
  readonly name: string;
  readonly identity: DeviceIdentity;
  readonly commands: string[];
  readonly caps: string[];
  readonly #token: string;
  readonly #platform: string;
  readonly #conns: GatewayClient[] = [];
  readonly #handlers = new Map<string, InvokeHandler>();
  readonly #invokes: ReceivedInvoke[] = [];

  constructor(opts: ScriptedNodeOptions) {
    this.name = opts.name;
    this.identity = opts.identity;
    this.commands = opts.commands ?? DEFAULT_SCRIPTED_COMMANDS;
    this.caps = opts.caps ?? [];
    this.#token = opts.token;
    this.#platform = opts.platform ?? "linux";
  }

  /** The node id the gateway knows it by (its device id). */
  get nodeId(): string {
    return this.identity.deviceId;
  }

  /** Every connection opened so far, oldest first (closed ones included). */
  get connections(): readonly GatewayClient[] {
    return this.#conns;
  }

  /** The newest connection that is open, if any. */
  get current(): GatewayClient | undefined {
    return [...this.#conns].reverse().find((c) => c.connected);
  }

  /**
   * Open a new connection with this node's identity (a second call while the first is open is a
   * second socket with the same identity). Throws the gateway's refusal as a GatewayError (a
   * first connect: PAIRING_REQUIRED with its requestId). Invokes arriving on it are answered by
   * the handlers set with answerWith, else left pending.
   */
  async connect(url: string, opts: Pick<ConnectOptions, "deviceToken" | "timeoutMs" | "commands" | "caps"> = {}): Promise<{ client: GatewayClient; hello: HelloOk }> {
    const client = new GatewayClient({ name: this.#conns.length ? `${this.name}.${this.#conns.length + 1}` : this.name });
    this.#conns.push(client);
    client.on("node.invoke.request", (payload) => void this.#received(client, payload));
    const hello = await client.connect(url, {
      token: this.#token,
      identity: this.identity,
      deviceToken: opts.deviceToken,
      role: "node",
      scopes: [],
      caps: opts.caps ?? this.caps,
      commands: opts.commands ?? this.commands,
      client: { id: "node-host", mode: "node", displayName: this.name, platform: this.#platform, version: "fleetlab-scripted" },
      timeoutMs: opts.timeoutMs,
    });
    return { client, hello };
  }

  /** From now on answer `command` this way (a handler, or a fixed answer); "withhold" sends nothing. */
  answerWith(command: string, how: InvokeHandler | Answer): void {
    this.#handlers.set(command, typeof how === "function" ? how : () => how);
  }

  /** Every invoke received so far, in order. */
  invokes(): readonly ReceivedInvoke[] {
    return this.#invokes;
  }

  /** Wait for an invoke (received from now or earlier) that satisfies `pred`. */
  waitInvoke(pred: (i: ReceivedInvoke) => boolean, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ReceivedInvoke> {
    return waitFor(`${this.name}: a node.invoke.request`, () => this.#invokes.find(pred), {
      timeoutMs: opts.timeoutMs ?? 30_000,
      intervalMs: 50,
      signal: opts.signal,
      lastState: () => `received: ${this.#invokes.map((i) => `${i.command} (${i.outcome})`).join(", ") || "none"}`,
    });
  }

  /** Answer an invoke now (node.invoke.result on `via`, default the connection it came on). Resolves with the gateway's reply. */
  async answer(invoke: Pick<ReceivedInvoke, "id" | "conn">, answer: Exclude<Answer, "withhold">, via?: GatewayClient): Promise<unknown> {
    const client = via ?? this.#conns.find((c) => c.name === invoke.conn) ?? this.current;
    if (!client) throw new GatewayError("node.invoke.result", "NOT_CONNECTED", `${this.name} has no connection to answer on`);
    const params = answer.ok
      ? { id: invoke.id, nodeId: this.nodeId, ok: true, ...(answer.payload === undefined ? {} : { payloadJSON: JSON.stringify(answer.payload) }) }
      : { id: invoke.id, nodeId: this.nodeId, ok: false, error: answer.error };
    const reply = await client.request("node.invoke.result", params);
    const known = this.#invokes.find((i) => i.id === invoke.id);
    if (known) known.outcome = "answered";
    return reply;
  }

  /** A request of the node's own (node.runnerInventory.update, node.event, ...) on the newest open connection. */
  request<T = unknown>(method: string, params?: unknown, via?: GatewayClient): Promise<T> {
    const client = via ?? this.current;
    if (!client) return Promise.reject(new GatewayError(method, "NOT_CONNECTED", `${this.name} has no open connection`));
    return client.request<T>(method, params);
  }

  /** Write any text as it is on the newest open connection (see GatewayClient.sendRaw). */
  sendRaw(text: string, via?: GatewayClient): void {
    const client = via ?? this.current;
    if (!client) throw new GatewayError("send", "NOT_CONNECTED", `${this.name} has no open connection`);
    client.sendRaw(text);
  }

  /**
   * Close a connection (default the newest open one) with `code`: 1000 or 3000-4999 as a close
   * frame (what WebSocket lets a client send), 1006 with no close frame at all (the socket cut).
   */
  async disconnect(code = 1000, reason = "scripted node closing", via?: GatewayClient): Promise<void> {
    const client = via ?? this.current;
    if (!client) return;
    if (code === 1006) return client.abort();
    if (code !== 1000 && (code < 3000 || code > 4999)) throw new Error(`${this.name}: a client cannot send close code ${code}; use 1000, 3000-4999, or 1006 (cut without a close frame)`);
    await client.close(code, reason);
  }

  /** Close every connection (teardown). */
  async closeAll(): Promise<void> {
    await Promise.all(this.#conns.map((c) => c.close().catch(() => {})));
  }

  /** Every connection's transcript entries, in time order. */
  transcript(): TranscriptEntry[] {
    return this.#conns.flatMap((c) => [...c.transcript()]).sort((a, b) => a.t - b.t || a.n - b.n);
  }

  /** Every connection's transcript as JSONL, in time order (the operator's format). */
  saveTranscript(file: string): void {
    writeTranscript(file, this.transcript());
  }

  async #received(client: GatewayClient, payload: unknown): Promise<void> {
    const p = (payload ?? {}) as { id?: unknown; nodeId?: unknown; command?: unknown; paramsJSON?: unknown; timeoutMs?: unknown };
    if (typeof p.id !== "string" || typeof p.command !== "string") return; // the transcript keeps it; nothing to answer
    let params: unknown;
    if (typeof p.paramsJSON === "string") {
      try {
        params = JSON.parse(p.paramsJSON);
      } catch {
        params = p.paramsJSON;
      }
    }
    const invoke: ReceivedInvoke = {
      id: p.id,
      nodeId: typeof p.nodeId === "string" ? p.nodeId : "",
      command: p.command,
      params,
      ...(typeof p.timeoutMs === "number" ? { timeoutMs: p.timeoutMs } : {}),
      conn: client.name,
      t: Date.now(),
      outcome: "pending",
    };
    this.#invokes.push(invoke);
    const handler = this.#handlers.get(invoke.command);
    if (!handler) return;
    try {
      const answer = await handler(invoke);
      if (answer === "withhold") {
        invoke.outcome = "withheld";
        return;
      }
      await this.answer(invoke, answer, client);
    } catch {
      // The answer could not be sent (the connection went): the transcript says so; the invoke stays pending.
    }
  }
}
