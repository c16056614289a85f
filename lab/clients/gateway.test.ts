import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { buildDeviceAuthPayloadV3, loadOrCreateDeviceIdentity, verifyDeviceSignature, type DeviceIdentity } from "./device-identity.ts";
import { GATEWAY_CLIENT_IDS, GATEWAY_CLIENT_MODES } from "@openclaw/gateway-protocol/client-info";
import { GatewayClient, GatewayError } from "./gateway.ts";
import { TranscriptEntry, parseJsonl } from "../evidence/records/index.ts";
import { sleep } from "../core/wait.ts";

// A tiny stand-in gateway: plays connect.challenge -> connect -> hello-ok and answers a
// few methods, so the client's behaviour can be pinned without OpenClaw or Docker.
interface FakeOptions {
  /** Refuse the first connect of each device with PAIRING_REQUIRED. */
  pairing?: boolean;
  /** Refuse auth.deviceToken with AUTH_DEVICE_TOKEN_MISMATCH. */
  rejectDeviceToken?: boolean;
  /** Answer the first N connects with UNAVAILABLE startup-sidecars. */
  startupBusy?: number;
  /** Accept the socket but never send connect.challenge. */
  silent?: boolean;
  /** hello-ok policy (defaults: OpenClaw's 25 MiB frame limit, 15 s ticks). */
  maxPayload?: number;
  tickIntervalMs?: number;
  /** Send a `tick` event this often after hello-ok (never when unset). */
  tickEveryMs?: number;
}

interface FakeGateway {
  url: string;
  connects: Array<Record<string, any>>;
  sockets: WebSocket[];
  close(): Promise<void>;
}

const TOKEN = "shared-secret";

async function startFake(opts: FakeOptions = {}): Promise<FakeGateway> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  const connects: Array<Record<string, any>> = [];
  const sockets: WebSocket[] = [];
  const approved = new Set<string>();
  const received: string[] = [];
  let busy = opts.startupBusy ?? 0;
  let seq = 0;

  wss.on("connection", (ws) => {
    sockets.push(ws);
    let ticker: NodeJS.Timeout | undefined;
    ws.on("close", () => clearInterval(ticker));
    const nonce = `nonce-${Math.random().toString(36).slice(2)}`;
    const ts = Date.now();
    const send = (frame: unknown) => ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
    const fail = (id: string, code: string, message: string, details?: unknown, close?: string) => {
      send({ type: "res", id, ok: false, error: { code, message, details } });
      if (close) ws.close(1008, close);
    };
    if (!opts.silent) send({ type: "event", event: "connect.challenge", payload: { nonce, ts } });

    ws.on("message", (data) => {
      const req = JSON.parse(data.toString());
      const { id, method, params } = req;
      received.push(method);
      if (method === "connect") {
        connects.push(params);
        if (busy > 0) {
          busy -= 1;
          return fail(id, "UNAVAILABLE", "gateway starting", { reason: "startup-sidecars" }, "starting");
        }
        const d = params.device;
        const token = params.auth?.token ?? params.auth?.deviceToken ?? null;
        const payload = buildDeviceAuthPayloadV3({
          deviceId: d.id,
          clientId: params.client.id,
          clientMode: params.client.mode,
          role: params.role,
          scopes: params.scopes,
          signedAtMs: d.signedAt,
          token,
          nonce: d.nonce,
          platform: params.client.platform,
          deviceFamily: params.client.deviceFamily,
        });
        if (d.nonce !== nonce || d.signedAt !== ts || !verifyDeviceSignature(d.publicKey, payload, d.signature)) {
          return fail(id, "INVALID_REQUEST", "device signature invalid", { code: "DEVICE_AUTH_SIGNATURE_INVALID" }, "bad signature");
        }
        if (params.auth?.deviceToken && opts.rejectDeviceToken) {
          return fail(id, "INVALID_REQUEST", "unauthorized: device token mismatch", { code: "AUTH_DEVICE_TOKEN_MISMATCH" }, "device token mismatch");
        }
        const issued = `devtok-${d.id.slice(0, 8)}`;
        if (params.auth?.token && params.auth.token !== TOKEN && params.auth.token !== issued) {
          return fail(id, "INVALID_REQUEST", "unauthorized: gateway token mismatch", { code: "AUTH_TOKEN_MISMATCH" }, "token mismatch");
        }
        if (opts.pairing && !approved.has(d.id)) {
          approved.add(d.id); // "approved" out of band before the next attempt
          return fail(id, "NOT_PAIRED", "pairing required: device is not approved yet", { code: "PAIRING_REQUIRED", reason: "not-paired", requestId: "req-42" }, "pairing required");
        }
        if (opts.tickEveryMs) ticker = setInterval(() => send({ type: "event", event: "tick", payload: { ts: Date.now() }, seq: ++seq }), opts.tickEveryMs);
        return send({
          type: "res",
          id,
          ok: true,
          payload: {
            type: "hello-ok",
            protocol: 4,
            server: { version: "fake", connId: "c1" },
            features: { methods: ["echo"], events: ["tick"] },
            snapshot: { presence: [], health: {}, stateVersion: { presence: 0, health: 0 }, uptimeMs: 1 },
            policy: { maxPayload: opts.maxPayload ?? 26_214_400, maxBufferedBytes: 52_428_800, tickIntervalMs: opts.tickIntervalMs ?? 15_000 },
            auth: { role: params.role, scopes: params.scopes, deviceToken: issued },
          },
        });
      }
      switch (method) {
        case "echo":
          return send({ type: "res", id, ok: true, payload: params });
        case "later": // answered after a delay, so a faster request overtakes it
          return setTimeout(() => send({ type: "res", id, ok: true, payload: { n: params.n } }), 50);
        case "slow": // answered only after the client gave up
          return setTimeout(() => send({ type: "res", id, ok: true, payload: "late" }), 300);
        case "never":
          return;
        case "fail":
          return fail(id, "FORBIDDEN", "missing scope: operator.admin", { code: "MISSING_SCOPE", missingScope: "operator.admin" });
        case "agent":
          send({ type: "res", id, ok: true, payload: { runId: "r1", status: "accepted" } });
          return setTimeout(() => send({ type: "res", id, ok: true, payload: { runId: "r1", status: "ok", result: { payloads: [{ text: "hi" }] } } }), 20);
        case "emit":
          for (const n of params.ns as number[]) send({ type: "event", event: params.event, payload: { n }, seq: ++seq });
          return send({ type: "res", id, ok: true, payload: {} });
        case "emit-seqs": // events with the given seq numbers, as they are
          for (const n of params.seqs as number[]) send({ type: "event", event: "presence", payload: { n }, seq: n });
          return send({ type: "res", id, ok: true, payload: {} });
        case "emit-extra": // an event with a top-level field the published EventFrame does not know
          send({ type: "event", event: "presence", payload: { n: 1 }, surprise: true });
          return send({ type: "res", id, ok: true, payload: {} });
        case "garbage":
          send("this is not json");
          send({ type: "event", payload: { missing: "event name" } });
          send({ type: "res", id: "nobody-asked", ok: true, payload: {} });
          send({ type: "res", id: "x", ok: false });
          send({ type: "weird" });
          ws.send(Buffer.from([1, 2, 3]), { binary: true });
          return send({ type: "res", id, ok: true, payload: "still here" });
        case "hangup":
          return ws.close(1011, "boom");
        case "received": // what reached the fake so far (method names), to prove a request was never sent
          return send({ type: "res", id, ok: true, payload: received });
      }
    });
  });

  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    connects,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.terminate();
        wss.close(() => r());
      }),
  };
}

let dir: string;
let identity: DeviceIdentity;
let fake: FakeGateway | undefined;
let client: GatewayClient | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-gateway-"));
  identity = loadOrCreateDeviceIdentity(path.join(dir, "operator.json"));
});
afterEach(async () => {
  await client?.close();
  // Whatever a test made the client record is an entry the report, the checks and the excerpts read.
  if (client) expect(client.transcript().filter((e) => !TranscriptEntry.safeParse(e).success)).toEqual([]);
  await fake?.close();
  client = undefined;
  fake = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const SCOPES = ["operator.admin", "operator.read"];

/** The error a promise rejects with (a fulfilled promise fails the test). */
function rejection(p: Promise<unknown>): Promise<GatewayError> {
  return p.then(
    () => {
      throw new Error("expected the promise to reject");
    },
    (e: unknown) => e as GatewayError,
  );
}

async function connected(opts: FakeOptions = {}): Promise<GatewayClient> {
  fake = await startFake(opts);
  client = new GatewayClient({ name: "op" });
  await client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES });
  return client;
}

describe("GatewayClient handshake", () => {
  it("answers the challenge with a signed connect and returns hello-ok", async () => {
    const c = await connected();
    expect(c.connected).toBe(true);
    expect(c.hello?.auth).toMatchObject({ role: "operator", scopes: SCOPES });
    const params = fake!.connects[0]!;
    expect(params).toMatchObject({ minProtocol: 4, maxProtocol: 4, role: "operator", scopes: SCOPES, auth: { token: TOKEN } });
    expect(params.device).toMatchObject({ id: identity.deviceId, publicKey: identity.publicKeyBase64Url });
  });

  it("presents the reference client's programmatic identity (gateway-client/backend), one of OpenClaw's own ids", async () => {
    await connected();
    const client = fake!.connects[0]!.client;
    expect(client).toMatchObject({ id: "gateway-client", mode: "backend", displayName: "fleetlab operator", version: "fleetlab" });
    expect(Object.values(GATEWAY_CLIENT_IDS)).toContain(client.id);
    expect(Object.values(GATEWAY_CLIENT_MODES)).toContain(client.mode);
  });

  it("stores the issued device token; the next connect sends the shared token only, as the reference client", async () => {
    const c = await connected();
    const issued = `devtok-${identity.deviceId.slice(0, 8)}`;
    expect(identity.deviceToken("operator")?.token).toBe(issued);
    await c.close();
    await c.connect(fake!.url, { token: TOKEN, identity: loadOrCreateDeviceIdentity(identity.file), scopes: SCOPES });
    expect(fake!.connects[1]!.auth).toEqual({ token: TOKEN });
    // Without a shared secret the stored token is the credential, in both fields (reference selection).
    await c.close();
    await c.connect(fake!.url, { identity: loadOrCreateDeviceIdentity(identity.file), scopes: SCOPES });
    expect(fake!.connects[2]!.auth).toEqual({ token: issued, deviceToken: issued });
  });

  it("a stale stored device token costs no refused connect: exactly one connect, answered hello-ok", async () => {
    identity.saveDeviceToken("operator", "stale-from-an-earlier-gateway", SCOPES);
    await connected({ rejectDeviceToken: true });
    expect(fake!.connects.map((p) => p.auth)).toEqual([{ token: TOKEN }]);
    const connects = client!.transcript().filter((e) => e.method === "connect");
    expect(connects.map((e) => `${e.dir}:${e.kind}:${e.ok ?? ""}`)).toEqual(["out:req:", "in:res:true"]);
    expect(identity.deviceToken("operator")?.token).toBe(`devtok-${identity.deviceId.slice(0, 8)}`);
  });

  it('deviceToken "only": a refused stored token is cleared, as the reference client does, and the refusal is thrown', async () => {
    identity.saveDeviceToken("operator", "stale", SCOPES);
    fake = await startFake({ rejectDeviceToken: true });
    client = new GatewayClient();
    const err = await rejection(client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES, deviceToken: "only" }));
    expect(err).toMatchObject({ method: "connect", detailsCode: "AUTH_DEVICE_TOKEN_MISMATCH" });
    expect(fake.connects).toHaveLength(1);
    expect(identity.deviceToken("operator")).toBeUndefined();
  });

  it("exposes PAIRING_REQUIRED with the requestId to approve", async () => {
    fake = await startFake({ pairing: true });
    client = new GatewayClient();
    const err = await rejection(client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES }));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ method: "connect", code: "NOT_PAIRED", requestId: "req-42", detailsCode: "PAIRING_REQUIRED", isPairingRequired: true });
    expect(err.message).toContain("connect");
    expect(err.message).toContain("req-42");
    expect(client.connected).toBe(false);
    expect(client.transcript().some((e) => e.kind === "close" && e.note?.includes("1008"))).toBe(true);
    // After approval the same client connects.
    await client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES });
    expect(client.connected).toBe(true);
  });

  it("retries while the gateway reports startup-sidecars", async () => {
    await connected({ startupBusy: 2 });
    expect(fake!.connects).toHaveLength(3);
    expect(client!.connected).toBe(true);
  });

  it("fails with a clear error when nothing listens", async () => {
    const c = new GatewayClient();
    const err = await rejection(c.connect("ws://127.0.0.1:1", { token: TOKEN, identity, timeoutMs: 2000 }));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.message).toMatch(/connect failed: HANDSHAKE_FAILED: socket to ws:\/\/127\.0\.0\.1:1 failed/);
  });

  it("fails with HANDSHAKE_FAILED when no connect.challenge comes within the connect budget", async () => {
    fake = await startFake({ silent: true });
    client = new GatewayClient();
    const t0 = Date.now();
    const err = await rejection(client.connect(fake.url, { token: TOKEN, identity, timeoutMs: 300 }));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ method: "connect", code: "HANDSHAKE_FAILED" });
    expect(err.message).toContain("no connect.challenge");
    expect(Date.now() - t0).toBeLessThan(5_000); // the 300 ms budget, then up to 1 s for the socket to close
    expect(client.connected).toBe(false);
  });
});

describe("GatewayClient requests", () => {
  it("correlates concurrent responses by id, whatever their order", async () => {
    const c = await connected();
    const slow = c.request<{ n: number }>("later", { n: 1 });
    const fast = c.request<{ n: number }>("echo", { n: 2 });
    expect(await fast).toEqual({ n: 2 });
    expect(await slow).toEqual({ n: 1 });
  });

  it("times out with an error naming the method, and labels the late answer", async () => {
    const c = await connected();
    const err = await rejection(c.request("slow", {}, { timeoutMs: 50 }));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ method: "slow", code: "TIMEOUT" });
    expect(err.message).toMatch(/gateway slow failed: TIMEOUT: no response within 50 ms at the reference pace \(\d+ ms of wall time at this machine's pace, now [\d.]+x\)/);
    await sleep(400);
    const late = c.transcript().find((e) => e.dir === "in" && e.kind === "res" && e.note?.includes("late"));
    expect(late).toBeDefined();
    expect(c.anomalies()).toEqual([]);
  });

  it("turns a gateway error into a GatewayError with code, message and details", async () => {
    const c = await connected();
    const err = await rejection(c.request("fail", {}));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ method: "fail", code: "FORBIDDEN", gatewayMessage: "missing scope: operator.admin", detailsCode: "MISSING_SCOPE" });
    expect(err.details).toMatchObject({ missingScope: "operator.admin" });
    expect(err.message).toBe("gateway fail failed: FORBIDDEN: missing scope: operator.admin (MISSING_SCOPE)");
  });

  it("waits past the accepted answer when expectFinal is set", async () => {
    const c = await connected();
    const accepted: unknown[] = [];
    const final = await c.request("agent", {}, { expectFinal: true, onAccepted: (p) => accepted.push(p) });
    expect(accepted).toEqual([{ runId: "r1", status: "accepted" }]);
    expect(final).toMatchObject({ status: "ok", result: { payloads: [{ text: "hi" }] } });
  });

  it("rejects pending requests when the connection drops", async () => {
    const c = await connected();
    const pending = c.request("never", {});
    await c.request("hangup").catch(() => undefined);
    const err = await rejection(pending);
    expect(err).toMatchObject({ method: "never", code: "CONNECTION_CLOSED" });
    expect(err.message).toContain("1011");
    expect(c.connected).toBe(false);
    await expect(c.request("echo")).rejects.toMatchObject({ code: "NOT_CONNECTED" });
  });
});

describe("GatewayClient events", () => {
  it("delivers events to listeners and waitForEvent with a predicate", async () => {
    const c = await connected();
    const seen: unknown[] = [];
    const off = c.on("node.pair.requested", (p) => seen.push(p));
    const all: string[] = [];
    c.on("*", (_p, f) => all.push(f.event));
    const waiting = c.waitForEvent<{ n: number }>("node.pair.requested", (p) => p.n === 3, 2000);
    await c.request("emit", { event: "node.pair.requested", ns: [1, 2, 3] });
    expect(await waiting).toEqual({ n: 3 });
    expect(seen).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(all).toEqual(["node.pair.requested", "node.pair.requested", "node.pair.requested"]);
    off();
    await c.request("emit", { event: "node.pair.requested", ns: [4] });
    expect(seen).toHaveLength(3);
  });

  it("waitForEvent times out, and fails at once when the connection closes", async () => {
    const c = await connected();
    await expect(c.waitForEvent("never.happens", undefined, 50)).rejects.toMatchObject({ code: "TIMEOUT" });
    const waiting = c.waitForEvent("never.happens", undefined, 5000);
    await c.request("hangup").catch(() => undefined);
    await expect(waiting).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
  });
});

describe("GatewayClient transcript", () => {
  it("records malformed frames as anomalies and keeps working", async () => {
    const c = await connected();
    expect(await c.request("garbage")).toBe("still here");
    const reasons = c.anomalies().map((a) => a.anomaly?.reason);
    expect(reasons).toEqual([
      expect.stringContaining("not JSON"),
      "frame does not match the envelope schema (EventFrame)", // event without a name
      "response to no pending request",
      "frame does not match the envelope schema (ResponseFrame)", // ok:false without error (lab rule)
      "frame does not match the envelope schema (GatewayFrame)", // unknown type
      "binary frame",
    ]);
    // Only what OpenClaw's reference client would act on is delivered.
    expect(c.anomalies().filter((a) => a.anomaly?.delivered !== undefined).map((a) => a.anomaly?.delivered)).toEqual([false, true, false]);
    expect(c.anomalies()[0]!.raw).toBe("this is not json");
    expect(await c.request("echo", { again: true })).toEqual({ again: true });
  });

  it("records both directions with timestamps, redacts secrets, and saves JSONL", async () => {
    const c = await connected();
    await c.request("echo", { hello: 1 });
    const t = c.transcript();
    const kinds = t.map((e) => `${e.dir}:${e.kind}:${e.method ?? e.event ?? ""}`);
    expect(kinds).toEqual(["meta:open:", "in:event:connect.challenge", "out:req:connect", "in:res:connect", "out:req:echo", "in:res:echo"]);
    for (const e of t) {
      expect(Date.parse(e.ts)).toBe(e.t);
      expect(e.conn).toBe("op#1");
    }
    const out = t.find((e) => e.method === "connect" && e.dir === "out")!.frame as any;
    expect(out.params.auth.token).toBe("[redacted]");
    expect(out.params.device.signature).toBe("[redacted]"); // one rule for every writer (lab/evidence/redact.ts): signatures too
    const hello = t.find((e) => e.method === "connect" && e.dir === "in")!.frame as any;
    expect(hello.payload.auth.deviceToken).toBe("[redacted]");

    const file = path.join(dir, "evidence", "op.jsonl");
    c.saveTranscript(file);
    const saved = parseJsonl(fs.readFileSync(file, "utf8"), TranscriptEntry);
    expect(saved.bad).toBe(0); // every line is a record the report reads
    const lines = saved.records.map((r) => r.value);
    expect(lines).toHaveLength(t.length);
    expect(lines.at(-1)).toMatchObject({ dir: "in", kind: "res", method: "echo", ok: true });
    expect(fs.readFileSync(file, "utf8")).not.toContain(TOKEN);
  });

  it("saves only what came after a point in time when asked (the frames of a reconnect on)", async () => {
    const c = await connected();
    await c.request("echo", { first: 1 });
    await c.close();
    await sleep(5);
    const since = Date.now();
    await c.connect(fake!.url, { token: TOKEN, identity, scopes: SCOPES });
    await c.request("echo", { second: 2 });
    const file = path.join(dir, "evidence", "op-after.jsonl");
    c.saveTranscript(file, { since });
    const lines = parseJsonl(fs.readFileSync(file, "utf8"), TranscriptEntry).records.map((r) => r.value);
    expect(new Set(lines.map((e) => e.conn))).toEqual(new Set(["op#2"]));
    expect(lines.at(-1)).toMatchObject({ dir: "in", kind: "res", method: "echo", ok: true });
  });
});

describe("GatewayClient speaks like the reference client", () => {
  it("names a field the published EventFrame schema does not know, and still delivers the event", async () => {
    const c = await connected();
    const seen: unknown[] = [];
    c.on("presence", (p) => seen.push(p));
    await c.request("emit-extra");
    expect(seen).toEqual([{ n: 1 }]);
    const [a] = c.anomalies();
    expect(a).toMatchObject({ kind: "anomaly", event: "presence", anomaly: { reason: "frame does not match the envelope schema (EventFrame)", delivered: true } });
    expect(JSON.stringify(a!.anomaly!.issues)).toContain("additional properties");
  });

  it("records a sequence gap on events (and a seq that goes back), and nothing when seq runs on", async () => {
    const c = await connected();
    await c.request("emit-seqs", { seqs: [1, 2, 3] });
    expect(c.anomalies()).toEqual([]);
    await c.request("emit-seqs", { seqs: [6, 4] });
    const gaps = c.anomalies();
    expect(gaps.map((g) => g.anomaly?.reason)).toEqual(["sequence gap: expected seq 4, received 6 (2 event(s) missing)", "sequence went back: seq 4 after 6"]);
    expect(gaps[0]).toMatchObject({ event: "presence", gap: { expected: 4, received: 6 } });
  });

  it("reports the connection dead when nothing comes for 2x the hello-ok tick interval", async () => {
    fake = await startFake({ tickIntervalMs: 100 });
    client = new GatewayClient({ name: "op", tickWatchMinIntervalMs: 20 });
    await client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES });
    const closed = new Promise<{ code: number; reason: string }>((r) => client!.onClose((code, reason) => r({ code, reason })));
    const pending = client.request("never", {}, { timeoutMs: 5_000 });
    const t0 = Date.now();
    expect(await closed).toEqual({ code: 4000, reason: "tick timeout" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(Date.now() - t0).toBeLessThan(2_000);
    const err = await rejection(pending);
    expect(err).toMatchObject({ method: "never", code: "CONNECTION_CLOSED" });
    expect(err.message).toContain("tick timeout");
    expect(client.connected).toBe(false);
    const t = client.transcript();
    expect(t.find((e) => e.kind === "error")?.note).toMatch(/^tick timeout: nothing from the gateway for \d+ ms \(policy.tickIntervalMs 100, limit 2x = 200 ms\)/);
    expect(t.at(-1)).toMatchObject({ kind: "close", note: expect.stringContaining("code 4000 reason tick timeout") });
  });

  it("keeps a connection whose gateway ticks on time", async () => {
    // Generous margins (limit 600 ms, a tick every 50 ms): a loaded machine must not make it flaky.
    fake = await startFake({ tickIntervalMs: 300, tickEveryMs: 50 });
    client = new GatewayClient({ name: "op", tickWatchMinIntervalMs: 20 });
    await client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES });
    await sleep(1_200);
    expect(client.connected).toBe(true);
    expect(client.transcript().filter((e) => e.event === "tick").length).toBeGreaterThanOrEqual(8);
    expect(client.anomalies()).toEqual([]);
  });

  it("refuses to send a request larger than hello-ok policy.maxPayload, and keeps the connection", async () => {
    fake = await startFake({ maxPayload: 300 });
    client = new GatewayClient({ name: "op" });
    await client.connect(fake.url, { token: TOKEN, identity, scopes: SCOPES });
    const err = await rejection(client.request("echo", { blob: "x".repeat(400) }));
    expect(err).toMatchObject({ method: "echo", code: "PAYLOAD_TOO_LARGE" });
    expect(err.message).toMatch(/request of \d+ bytes exceeds hello-ok policy.maxPayload 300; not sent/);
    expect(await client.request("echo", { small: 1 })).toEqual({ small: 1 });
    expect(await client.request("received")).toEqual(["connect", "echo", "received"]);
    expect(client.transcript().some((e) => e.kind === "error" && e.method === "echo" && e.note?.includes("not sent"))).toBe(true);
  });

  it("records the close of the last connection on close(), before the transcript is saved", async () => {
    const c = await connected();
    await c.close();
    expect(c.transcript().at(-1)).toMatchObject({ dir: "meta", kind: "close", conn: "op#1", note: "code 1000 reason client closing (closed by the lab)" });
    const file = path.join(dir, "evidence", "closed.jsonl");
    c.saveTranscript(file);
    expect(JSON.parse(fs.readFileSync(file, "utf8").trimEnd().split("\n").at(-1)!)).toMatchObject({ kind: "close" });
  });
});
