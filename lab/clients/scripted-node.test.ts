// The scripted node against a small stand-in gateway (challenge, connect -> hello-ok, invokes it
// pushes, results it takes), so what it puts on the wire is pinned without OpenClaw or Docker.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { loadOrCreateDeviceIdentity } from "./device-identity.ts";
import { ScriptedNode } from "./scripted-node.ts";
import { waitFor } from "../core/wait.ts";

interface Fake {
  url: string;
  connects: Record<string, any>[];
  sockets: WebSocket[];
  /** Every text frame received, per socket. */
  frames: string[][];
  closes: { code: number; reason: string }[];
  invoke(socket: number, payload: Record<string, unknown>): void;
  close(): Promise<void>;
}

async function startFake(): Promise<Fake> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  const fake: Fake = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    connects: [],
    sockets: [],
    frames: [],
    closes: [],
    invoke: (i, payload) => fake.sockets[i]!.send(JSON.stringify({ type: "event", event: "node.invoke.request", payload })),
    close: () => new Promise((r) => wss.close(() => r())),
  };
  wss.on("connection", (ws) => {
    const mine: string[] = [];
    fake.sockets.push(ws);
    fake.frames.push(mine);
    ws.on("close", (code, reason) => fake.closes.push({ code, reason: reason.toString() }));
    ws.send(JSON.stringify({ type: "event", event: "connect.challenge", payload: { nonce: "n1", ts: Date.now() } }));
    ws.on("message", (data) => {
      const text = data.toString();
      mine.push(text);
      let req: { id?: string; method?: string; params?: Record<string, any> };
      try {
        req = JSON.parse(text);
      } catch {
        return;
      }
      if (req.method === "connect") {
        fake.connects.push(req.params!);
        ws.send(
          JSON.stringify({
            type: "res",
            id: req.id,
            ok: true,
            payload: {
              type: "hello-ok",
              protocol: 4,
              server: { version: "fake", connId: `c${fake.sockets.length}` },
              features: { methods: ["node.invoke.result"], events: ["node.invoke.request"] },
              snapshot: { presence: [], health: {}, stateVersion: { presence: 0, health: 0 }, uptimeMs: 1 },
              policy: { maxPayload: 26_214_400, maxBufferedBytes: 52_428_800, tickIntervalMs: 15_000 },
              auth: { role: req.params!.role, scopes: req.params!.scopes },
            },
          }),
        );
      } else if (req.method === "node.invoke.result") {
        ws.send(JSON.stringify({ type: "res", id: req.id, ok: true, payload: { ok: true } }));
      }
    });
  });
  return fake;
}

let fake: Fake;
let dir: string;
let node: ScriptedNode;

beforeEach(async () => {
  fake = await startFake();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-scripted-"));
  node = new ScriptedNode({ name: "scripted-1", identity: loadOrCreateDeviceIdentity(path.join(dir, "identity.json")), token: "shared-secret-token" });
});

afterEach(async () => {
  await node.closeAll();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sent = (socket: number, method: string) => fake.frames[socket]!.map((t) => JSON.parse(t)).filter((f) => f.method === method);

describe("the scripted node", () => {
  it("connects as OpenClaw's headless node host would: role node, node-host/node, no scopes, its commands, signed by its own device", async () => {
    await node.connect(fake.url);
    const c = fake.connects[0]!;
    expect(c).toMatchObject({ role: "node", scopes: [], commands: ["system.notify", "system.which"], client: { id: "node-host", mode: "node", displayName: "scripted-1", platform: "linux" } });
    expect(c.device.id).toBe(node.nodeId);
    expect(c.auth.token).toBe("shared-secret-token");
  });

  it("answers a command the way a scenario says, withholds another, and can answer the withheld one later", async () => {
    node.answerWith("system.which", (inv) => ({ ok: true, payload: { bins: inv.params } }));
    node.answerWith("system.notify", "withhold");
    await node.connect(fake.url);
    fake.invoke(0, { id: "inv-1", nodeId: node.nodeId, command: "system.which", paramsJSON: JSON.stringify({ bins: ["git"] }), timeoutMs: 5000 });
    fake.invoke(0, { id: "inv-2", nodeId: node.nodeId, command: "system.notify", paramsJSON: "{}" });
    await waitFor("the answer to inv-1", () => sent(0, "node.invoke.result").length === 1 || undefined, { timeoutMs: 5000, intervalMs: 10 });
    expect(sent(0, "node.invoke.result")[0].params).toEqual({ id: "inv-1", nodeId: node.nodeId, ok: true, payloadJSON: JSON.stringify({ bins: { bins: ["git"] } }) });
    const withheld = await node.waitInvoke((i) => i.id === "inv-2" && i.outcome === "withheld", { timeoutMs: 5000 });
    expect(withheld).toMatchObject({ command: "system.notify", conn: "scripted-1", params: {} });
    expect(sent(0, "node.invoke.result")).toHaveLength(1);
    await node.answer(withheld, { ok: false, error: { code: "UNAVAILABLE", message: "late" } });
    expect(sent(0, "node.invoke.result")[1].params).toEqual({ id: "inv-2", nodeId: node.nodeId, ok: false, error: { code: "UNAVAILABLE", message: "late" } });
    expect(node.invokes().map((i) => i.outcome)).toEqual(["answered", "answered"]);
  });

  it("opens a second connection with the same identity beside the first", async () => {
    const first = await node.connect(fake.url);
    const second = await node.connect(fake.url);
    expect(first.client.connected && second.client.connected).toBe(true);
    expect(fake.connects.map((c) => c.device.id)).toEqual([node.nodeId, node.nodeId]);
    expect(second.client.name).toBe("scripted-1.2");
    expect(node.current).toBe(second.client);
  });

  it("writes any text as it is, recorded as sent (a malformed frame as an anomaly with its raw text)", async () => {
    await node.connect(fake.url);
    const stale = JSON.stringify({ type: "req", id: "x1", method: "node.invoke.result", params: { id: "gone", nodeId: node.nodeId, ok: true } });
    node.sendRaw(stale);
    node.sendRaw("{not json");
    await waitFor("both frames at the gateway", () => fake.frames[0]!.length >= 3 || undefined, { timeoutMs: 5000, intervalMs: 10 });
    expect(fake.frames[0]!.slice(1)).toEqual([stale, "{not json"]);
    const out = node.transcript().filter((e) => e.dir === "out" && e.note?.includes("sendRaw"));
    expect(out.map((e) => [e.kind, e.method ?? e.raw])).toEqual([
      ["req", "node.invoke.result"],
      ["anomaly", "{not json"],
    ]);
  });

  it("disconnects with the close code asked, or cuts the socket with none (1006); refuses a code a client cannot send", async () => {
    await node.connect(fake.url);
    await node.disconnect(4000, "scripted");
    await node.connect(fake.url);
    await expect(node.disconnect(1001)).rejects.toThrow(/cannot send close code 1001/);
    await node.disconnect(1006);
    await waitFor("two closes at the gateway", () => fake.closes.length === 2 || undefined, { timeoutMs: 5000, intervalMs: 10 });
    expect(fake.closes).toEqual([
      { code: 4000, reason: "scripted" },
      { code: 1006, reason: "" },
    ]);
    expect(node.current).toBeUndefined();
  });
});
