// The wire tap (docker/faultproxy/server.ts) as a child process on loopback, in front of a small
// upstream that stands in for the gateway: a ws WebSocketServer (per-message deflate off, as
// OpenClaw's gateway has it, except on /deflate) on a node:http server that also serves a 30 MB
// download, a POST echo and a chunked reply. Driven through TapControl.

import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFile, rm } from "node:fs/promises";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { TapControl, WS_OPCODE, redactTapLines, type Frame } from "./tap.ts";
import { Redactor } from "../evidence/redact.ts";
import { TapRecord, parseJsonl } from "../evidence/records/index.ts";
import { listeningRecord, startServerProcess, type ServerProcess } from "../testing/server-process.ts";

const SERVER = fileURLToPath(new URL("../../docker/faultproxy/server.ts", import.meta.url));
const BIG = randomBytes(30 * 1024 * 1024);
const BIG_SHA = createHash("sha256").update(BIG).digest("hex");
const BUNDLE_PATH = `/__openclaw__/worker-bundle/v1/bundles/${BIG_SHA}`;

let upstream: http.Server;
let tapServer: ServerProcess<{ listen: number; control: number }>;
let tap: TapControl;
let tapPort: number;
const upgradeHeaders: http.IncomingHttpHeaders[] = [];
const httpHeaders: http.IncomingHttpHeaders[] = [];
/** Upstream ends of WebSocket connections, in order of arrival. */
const serverConns: WebSocket[] = [];
const waiters: ((ws: WebSocket) => void)[] = [];
const opened: WebSocket[] = [];

function nextServerConn(): Promise<WebSocket> {
  return new Promise((resolve) => waiters.push(resolve));
}

beforeAll(async () => {
  const plain = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const deflate = new WebSocketServer({ noServer: true, perMessageDeflate: { threshold: 64 } });
  upstream = http.createServer(async (req, res) => {
    httpHeaders.push(req.headers);
    const body: Buffer[] = [];
    for await (const c of req) body.push(c as Buffer);
    if (req.method === "GET" && req.url === BUNDLE_PATH) {
      if (req.headers.authorization !== "Bearer node-token") return res.writeHead(401).end("no");
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": BIG.length });
      return res.end(BIG);
    }
    if (req.method === "POST" && req.url?.startsWith("/__openclaw__/worker-transfer/")) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      return res.end(Buffer.concat(body));
    }
    if (req.method === "GET" && req.url === "/chunked") {
      res.writeHead(200, { "content-type": "text/plain" }); // no length: chunked
      for (let i = 0; i < 5; i++) res.write(`part-${i};`.repeat(1000));
      return res.end();
    }
    res.writeHead(404).end();
  });
  upstream.on("upgrade", (req, socket, head) => {
    upgradeHeaders.push(req.headers);
    const wss = req.url === "/deflate" ? deflate : plain;
    wss.handleUpgrade(req, socket, head, (ws) => {
      serverConns.push(ws);
      waiters.shift()?.(ws);
    });
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const up = (upstream.address() as AddressInfo).port;

  tapServer = await startServerProcess(
    "tap",
    SERVER,
    { TAP_UPSTREAM: `127.0.0.1:${up}`, TAP_HOST: "127.0.0.1", TAP_LISTEN_PORT: "0", TAP_CONTROL_PORT: "0" },
    listeningRecord<{ listen: number; control: number }>,
    { keepOutput: false }, // the JSONL transcript keeps coming; it is drained, not kept
  );
  tapPort = tapServer.ready.listen;
  tap = new TapControl(`http://127.0.0.1:${tapServer.ready.control}`);
});

afterEach(async () => {
  await tap.heal();
  for (const ws of opened.splice(0)) ws.terminate();
});

afterAll(async () => {
  await tapServer?.stop();
  for (const ws of serverConns) ws.terminate();
  await new Promise((r) => upstream?.close(r));
});

/** A client through the tap and the upstream end of the same connection. */
async function pair(path = "/", opts: { perMessageDeflate?: boolean } = {}): Promise<{ client: WebSocket; server: WebSocket }> {
  const serverP = nextServerConn();
  const client = new WebSocket(`ws://127.0.0.1:${tapPort}${path}`, { perMessageDeflate: opts.perMessageDeflate ?? false });
  opened.push(client);
  await once(client, "open");
  const server = await serverP;
  return { client, server };
}

/** Collects text messages of a socket with their arrival time. */
function inbox(ws: WebSocket): { msgs: { text: string; at: number }[]; next(timeoutMs?: number): Promise<string> } {
  const msgs: { text: string; at: number }[] = [];
  let read = 0;
  ws.on("message", (d, isBinary) => msgs.push({ text: isBinary ? `<binary ${(d as Buffer).length}>` : d.toString(), at: performance.now() }));
  return {
    msgs,
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (msgs.length <= read) {
        if (Date.now() > deadline) throw new Error(`no message within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return msgs[read++]!.text;
    },
  };
}

const closed = (ws: WebSocket): Promise<{ code: number; reason: string }> =>
  new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function get(path: string, agent: http.Agent, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: Buffer }> {
  return request("GET", path, agent, headers);
}

function request(method: string, path: string, agent: http.Agent, headers: http.OutgoingHttpHeaders = {}, body?: Buffer[]): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: tapPort, method, path, agent, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
    });
    req.on("error", reject);
    for (const b of body ?? []) req.write(b);
    req.end();
  });
}

describe("forwarding and recording", () => {
  it("carries gateway frames both ways unchanged and records direction, connection and fields", async () => {
    const since = await tap.seq();
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    const atClient = inbox(client);
    const req = JSON.stringify({ type: "req", id: "r1", method: "node.runnerInventory.update", params: { protocolFeatures: ["node-worker-supervisor-v6"], ü: "✓" } });
    const ev = JSON.stringify({ type: "event", event: "node.invoke.request", payload: { id: "inv-1", nodeId: "n1", command: "worker.launch.v1", paramsJSON: "{}" }, seq: 7 });
    const res = JSON.stringify({ type: "res", id: "r1", ok: true, payload: {} });
    const big = JSON.stringify({ type: "event", event: "big", payload: "x".repeat(200_000) });
    client.send(req);
    expect(await atServer.next()).toBe(req);
    server.send(ev);
    server.send(res);
    server.send(big);
    expect(await atClient.next()).toBe(ev);
    expect(await atClient.next()).toBe(res);
    expect(await atClient.next()).toBe(big);
    const bin = randomBytes(70_000);
    client.send(bin);
    await atServer.next();

    const conn = (await tap.connections()).find((c) => c.path === "/" && c.state === "open" && c.frames["node->gw"] >= 2);
    expect(conn).toBeDefined();
    const frames = await tap.frames({ since, conn: conn!.conn });
    const up = frames.find((f) => f.method === "node.runnerInventory.update")!;
    expect(up).toMatchObject({ dir: "node->gw", type: "req", id: "r1", text: req, masked: true, opcode: WS_OPCODE.text, action: "forward", path: "/" });
    const inv = frames.find((f) => f.event === "node.invoke.request")!;
    expect(inv).toMatchObject({ dir: "gw->node", command: "worker.launch.v1", invokeId: "inv-1", text: ev, masked: false });
    expect(frames.find((f) => f.type === "res")).toMatchObject({ dir: "gw->node", replyTo: "node.runnerInventory.update", ok: true });
    expect(frames.find((f) => f.event === "big")).toMatchObject({ len: Buffer.byteLength(big), text: big });
    expect(frames.find((f) => f.opcode === WS_OPCODE.binary)).toMatchObject({ dir: "node->gw", len: 70_000 });
    expect(frames.find((f) => f.opcode === WS_OPCODE.binary)!.text).toBeUndefined();
    // A plain TCP tap: nothing is added on the way.
    expect(upgradeHeaders.at(-1)!["x-forwarded-for"]).toBeUndefined();

    client.close(1000, "done");
    expect(await closed(server)).toEqual({ code: 1000, reason: "done" });
    const closes = await tap.waitForFrame((f) => f.conn === conn!.conn && f.opcode === WS_OPCODE.close && f.dir === "gw->node", { timeoutMs: 2000 });
    expect(closes.close).toEqual({ code: 1000, reason: "done" });
  });

  it("records the worker socket under its own path and connection id", async () => {
    const since = await tap.seq();
    const a = await pair("/");
    const w = await pair("/__openclaw__/worker");
    w.client.send(JSON.stringify({ type: "req", id: "w1", method: "connect", params: { role: "worker" } }));
    const f = await tap.waitForFrame({ path: "/__openclaw__/worker", method: "connect" }, { since, timeoutMs: 3000 });
    a.client.send(JSON.stringify({ type: "req", id: "n1", method: "connect", params: { role: "node" } }));
    const g = await tap.waitForFrame({ path: "/", method: "connect" }, { since, timeoutMs: 3000 });
    expect(f.conn).not.toBe(g.conn);
    const http101 = (await tap.http({ since })).filter((h) => h.status === 101);
    expect(http101.map((h) => h.path).sort()).toEqual(["/", "/__openclaw__/worker"]);
  });

  it("forwards a message the client fragments and records each frame", async () => {
    const since = await tap.seq();
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    client.send('{"type":"req","id":"f1",', { fin: false });
    client.send('"method":"worker.transcript.commit"}', { fin: true });
    expect(await atServer.next()).toBe('{"type":"req","id":"f1","method":"worker.transcript.commit"}');
    const last = await tap.waitForFrame({ method: "worker.transcript.commit" }, { since, timeoutMs: 2000 });
    const frames = (await tap.frames({ since, conn: last.conn })).filter((f) => f.dir === "node->gw");
    expect(frames.map((f) => [f.opcode, f.fin])).toEqual([
      [WS_OPCODE.text, false],
      [WS_OPCODE.continuation, true],
    ]);
    expect(last).toMatchObject({ fragments: 2, text: '{"type":"req","id":"f1","method":"worker.transcript.commit"}' });
  });

  it("decodes permessage-deflate (context takeover) when a server negotiates it", async () => {
    const since = await tap.seq();
    const { client, server } = await pair("/deflate", { perMessageDeflate: true });
    const atServer = inbox(server);
    const atClient = inbox(client);
    const texts = [0, 1, 2].map((i) => JSON.stringify({ type: "req", id: `d${i}`, method: "worker.inference.event", params: { delta: "lorem ipsum ".repeat(300 + i) } }));
    for (const t of texts) client.send(t);
    for (const t of texts) expect(await atServer.next()).toBe(t);
    for (const t of texts) server.send(t);
    for (const t of texts) expect(await atClient.next()).toBe(t);
    const conn = (await tap.connections()).find((c) => c.path === "/deflate")!;
    expect(conn.deflate).toBe(true);
    const frames = (await tap.frames({ since, conn: conn.conn })).filter((f) => f.opcode === WS_OPCODE.text);
    expect(frames).toHaveLength(6);
    for (const f of frames) expect(f.compressed).toBe(true);
    expect(frames.map((f) => f.text)).toEqual([...texts, ...texts]);
    expect(frames[1]!.len).toBeLessThan(frames[0]!.len); // the second message reuses the first one's window
  });

  it("carries a 30 MB download byte for byte, with keep-alive requests and chunked bodies after it", async () => {
    const since = await tap.seq();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const big = await get(BUNDLE_PATH, agent, { authorization: "Bearer node-token" });
      expect(big.status).toBe(200);
      expect(big.body.length).toBe(BIG.length);
      expect(createHash("sha256").update(big.body).digest("hex")).toBe(BIG_SHA);
      expect(httpHeaders.at(-1)!.authorization).toBe("Bearer node-token");
      expect(httpHeaders.at(-1)!["x-forwarded-for"]).toBeUndefined();

      // Second request on the same connection: a chunked POST (no content-length) echoed back.
      const parts = [randomBytes(10_000), randomBytes(20_000), randomBytes(5)];
      const echo = await request("POST", "/__openclaw__/worker-transfer/t1", agent, { "transfer-encoding": "chunked" }, parts);
      expect(echo.status).toBe(200);
      expect(echo.body.equals(Buffer.concat(parts))).toBe(true);
      const chunked = await get("/chunked", agent);
      expect(chunked.body.length).toBe(5 * 1000 * "part-0;".length);
      const unauth = await get(BUNDLE_PATH, agent);
      expect(unauth.status).toBe(401);

      const ex = await tap.http({ since });
      expect(ex.map((e) => [e.method, e.path, e.status])).toEqual([
        ["GET", BUNDLE_PATH, 200],
        ["POST", "/__openclaw__/worker-transfer/t1", 200],
        ["GET", "/chunked", 200],
        ["GET", BUNDLE_PATH, 401],
      ]);
      expect(new Set(ex.map((e) => e.conn)).size).toBe(1); // one keep-alive connection
      expect(ex[0]).toMatchObject({ reqBytes: 0, resBytes: BIG.length });
      expect(ex[1]).toMatchObject({ reqBytes: 30_005, resBytes: 30_005 });
      expect(ex[2]!.resBytes).toBe(chunked.body.length);
      expect(ex[0]!.durationMs).toBeGreaterThan(0);
    } finally {
      agent.destroy();
    }
  });

  it("parses heads and frames that arrive a few bytes at a time", async () => {
    const since = await tap.seq();
    const serverP = nextServerConn();
    const sock = net.connect(tapPort, "127.0.0.1");
    sock.setNoDelay(true);
    await once(sock, "connect");
    const key = randomBytes(16).toString("base64");
    const head = `GET /__openclaw__/worker HTTP/1.1\r\nHost: gw\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    const reply = new Promise<string>((resolve) => {
      let got = "";
      sock.on("data", (d) => {
        got += d.toString("latin1");
        if (got.includes("\r\n\r\n")) resolve(got);
      });
    });
    for (const piece of [head.slice(0, 10), head.slice(10, 60), head.slice(60)]) {
      sock.write(piece);
      await sleep(5);
    }
    expect(await reply).toMatch(/^HTTP\/1\.1 101/);
    const server = await serverP;
    const atServer = inbox(server);
    const text = '{"type":"req","id":"s1","method":"worker.live-event"}';
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const frame = Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i & 3]!)]);
    for (const byte of frame) {
      sock.write(Buffer.from([byte]));
      await sleep(1);
    }
    expect(await atServer.next()).toBe(text);
    const f = await tap.waitForFrame({ method: "worker.live-event" }, { since, timeoutMs: 2000 });
    expect(f).toMatchObject({ path: "/__openclaw__/worker", dir: "node->gw", masked: true, len: payload.length });
    sock.destroy();
  });

  it("waitForFrame names what it waited for and the last frames seen", async () => {
    const since = await tap.seq();
    const { client } = await pair("/");
    client.send(JSON.stringify({ type: "req", id: "x", method: "node.runnerInventory.update" }));
    await tap.waitForFrame({ method: "node.runnerInventory.update" }, { since, timeoutMs: 2000 });
    await expect(tap.waitForFrame({ command: "worker.launch.v1" }, { since, timeoutMs: 200 })).rejects.toThrow(/worker\.launch\.v1.*within 200 ms[\s\S]*node\.runnerInventory\.update/);
  });

  it("saves the transcript as JSON lines", async () => {
    const file = join(tmpdir(), `fleetlab-tap-${process.pid}`, "tap.jsonl");
    try {
      const n = await tap.saveTranscript(file);
      const lines = (await readFile(file, "utf8")).trim().split("\n").map((l) => JSON.parse(l));
      expect(lines).toHaveLength(n);
      const kinds = new Set(lines.map((l) => l.kind));
      for (const k of ["frame", "http", "conn"]) expect(kinds.has(k)).toBe(true);
      expect(lines.map((l) => l.seq)).toEqual([...lines.map((l) => l.seq)].sort((a, b) => a - b));
    } finally {
      await rm(join(tmpdir(), `fleetlab-tap-${process.pid}`), { recursive: true, force: true });
    }
  });
});

describe("credentials", () => {
  const GATEWAY_TOKEN = "fleetlab-gateway-token-0001";
  const DEVICE_TOKEN = "uhqRfFjGS_lgg56F9_yr2kqYiiHVdEdEEARV5es6lnI";
  const SIGNATURE = "K0rajS7qEGhmhVBzrWVPlXlfxoWvSboUNRwE7Qsbwub897PN95JJc3TPrChAADUVPaqyxaXaZRQlN-JqPGThAw";

  it("the shared token and an issued device token are redacted in frames read and in the saved transcript", async () => {
    // As the lab hands it out: one redactor per lab, knowing the gateway token.
    const lab = new TapControl(tap.baseUrl, { redactor: new Redactor([GATEWAY_TOKEN]) });
    const since = await tap.seq();
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    const atClient = inbox(client);
    const connect = { type: "req", id: "1:c", method: "connect", params: { client: { id: "node-host" }, auth: { token: GATEWAY_TOKEN }, device: { id: "aca5", publicKey: "TwSidTh-Tz2", signature: SIGNATURE } } };
    client.send(JSON.stringify(connect));
    expect(JSON.parse(await atServer.next()).params.auth.token).toBe(GATEWAY_TOKEN); // forwarded unchanged
    server.send(JSON.stringify({ type: "res", id: "1:c", ok: true, payload: { type: "hello-ok", auth: { role: "node", deviceToken: DEVICE_TOKEN } } }));
    expect(JSON.parse(await atClient.next()).payload.auth.deviceToken).toBe(DEVICE_TOKEN);
    // The device token again, where no credential key names it (and the shared token in a log text).
    client.send(JSON.stringify({ type: "event", event: "node.log", payload: { line: `reconnecting with ${DEVICE_TOKEN} (was ${GATEWAY_TOKEN})` } }));
    await atServer.next();
    await lab.waitForFrame({ event: "node.log" }, { since, timeoutMs: 2000 });

    const frames = await lab.frames({ since });
    expect(frames.map((f) => f.method ?? f.event ?? f.type)).toEqual(["connect", "res", "node.log"]);
    const seen = JSON.stringify(frames);
    for (const secret of [GATEWAY_TOKEN, DEVICE_TOKEN, SIGNATURE]) expect(seen).not.toContain(secret);
    expect(JSON.parse(frames[0]!.text!).params).toMatchObject({ auth: { token: "[redacted]" }, device: { id: "aca5", publicKey: "TwSidTh-Tz2", signature: "[redacted]" } });
    expect(JSON.parse(frames[1]!.text!).payload.auth).toEqual({ role: "node", deviceToken: "[redacted]" });
    expect(JSON.parse(frames[2]!.text!).payload.line).toBe("reconnecting with [redacted] (was [redacted])");

    const dir = join(tmpdir(), `fleetlab-tap-redact-${process.pid}`);
    try {
      // A fresh handle (a fresh redactor) still hides both: it learns the device token from the hello-ok.
      const n = await new TapControl(tap.baseUrl).saveTranscript(join(dir, "tap.jsonl"));
      const text = await readFile(join(dir, "tap.jsonl"), "utf8");
      expect(n).toBeGreaterThanOrEqual(3);
      for (const secret of [GATEWAY_TOKEN, DEVICE_TOKEN, SIGNATURE]) expect(text).not.toContain(secret);
      expect(text).toContain("reconnecting with [redacted]");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a saved tap log (engine timestamps before each record): a token learnt from a later line is hidden in an earlier one", () => {
    const rec = (seq: number, text: string) => `2026-11-30T07:34:0${seq}.1Z ${JSON.stringify({ kind: "frame", seq, t: 1, conn: "c1", path: "/", dir: "node->gw", opcode: 1, fin: true, len: text.length, masked: true, text, action: "forward" })}`;
    const lines = [
      rec(1, JSON.stringify({ type: "event", event: "node.log", payload: { line: `token ${DEVICE_TOKEN}` } })),
      rec(2, JSON.stringify({ type: "res", id: "1", ok: true, payload: { type: "hello-ok", auth: { deviceToken: DEVICE_TOKEN } } })),
      `not json, Authorization: Bearer ${GATEWAY_TOKEN}`,
    ];
    const out = redactTapLines(lines, new Redactor([GATEWAY_TOKEN]));
    expect(out.join("\n")).not.toContain(DEVICE_TOKEN);
    expect(out.join("\n")).not.toContain(GATEWAY_TOKEN);
    expect(out[0]).toMatch(/^2026-11-30T07:34:01\.1Z \{"kind":"frame"/);
    expect(JSON.parse(out[0]!.slice(out[0]!.indexOf(" ") + 1)).text).toContain("token [redacted]");
  });
});

describe("fault rules", () => {
  /** The trigger frame of a rule's first firing, checked to be the frame that matched. */
  async function trigger(ruleId: string): Promise<Frame> {
    const rule = (await tap.rule(ruleId))!;
    expect(rule.firstFired).not.toBeNull();
    const f = (await tap.frames({ since: rule.firstFired!.seq - 1 }))[0]!;
    expect(f.seq).toBe(rule.firstFired!.seq);
    expect(f.t).toBe(rule.firstFired!.t);
    expect(f.rule).toBe(ruleId);
    return f;
  }

  it("delay: the matched frame arrives at least ms later, later frames keep their order", async () => {
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    await tap.addRule({ id: "slow", match: { dir: "node->gw", textIncludes: "slow" }, action: { delay: { ms: 300 } }, once: true });
    const t0 = performance.now();
    client.send("slow-1");
    client.send("fast-2");
    expect(await atServer.next()).toBe("slow-1");
    expect(await atServer.next()).toBe("fast-2");
    expect(atServer.msgs[0]!.at - t0).toBeGreaterThanOrEqual(300);
    const f = await trigger("slow");
    expect(f).toMatchObject({ text: "slow-1", action: "delay" });
    client.send("slow-3"); // once: spent
    expect(await atServer.next()).toBe("slow-3");
    expect(atServer.msgs[2]!.at - atServer.msgs[1]!.at).toBeLessThan(300);
    expect((await tap.rule("slow"))!.active).toBe(false);
  });

  it("delay on an HTTP request (match kind http)", async () => {
    await tap.addRule({ id: "slowhttp", match: { kind: "http", path: "/__openclaw__/worker-transfer/*" }, action: { delay: { ms: 250 } } });
    const agent = new http.Agent({ keepAlive: false });
    const t0 = performance.now();
    const r = await request("POST", "/__openclaw__/worker-transfer/x", agent, { "content-length": 3 }, [Buffer.from("abc")]);
    expect(r.body.toString()).toBe("abc");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    const ex = (await tap.http()).at(-1)!;
    expect(ex).toMatchObject({ path: "/__openclaw__/worker-transfer/x", rule: "slowhttp" });
  });

  it("drop: the matched frame never arrives; count drops the frames after it too", async () => {
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    await tap.addRule({ id: "drop1", match: { dir: "node->gw", textIncludes: "dropme" }, action: { drop: {} }, once: true });
    client.send("dropme");
    client.send("after");
    expect(await atServer.next()).toBe("after");
    expect((await trigger("drop1")).action).toBe("drop");

    await tap.addRule({ id: "drop3", match: { dir: "gw->node", textIncludes: "cut" }, action: { drop: { count: 3 } }, once: true });
    const atClient = inbox(client);
    for (const m of ["cut", "b", "c", "d"]) server.send(m);
    expect(await atClient.next()).toBe("d");
    expect(atClient.msgs.map((m) => m.text)).toEqual(["d"]);
    expect(atServer.msgs.map((m) => m.text)).toEqual(["after"]);
  });

  it("close 1001 to the node: the node sees 1001, the gateway side stays open and silent until heal", async () => {
    const { client, server } = await pair("/");
    await tap.addRule({ id: "ga", match: { dir: "gw->node", event: "tick" }, action: { close: { code: 1001, side: "node" } }, once: true });
    const clientClosed = closed(client);
    let serverClosed = false;
    const serverClose = closed(server).finally(() => (serverClosed = true));
    server.send(JSON.stringify({ type: "event", event: "tick", payload: {} }));
    expect((await clientClosed).code).toBe(1001);
    expect((await trigger("ga")).action).toBe("close");
    await sleep(150);
    expect(serverClosed).toBe(false);
    expect(server.readyState).toBe(WebSocket.OPEN);
    const healed = await tap.heal();
    expect(healed.healed.ended).toBeGreaterThanOrEqual(1);
    expect((await serverClose).code).toBe(1006);
  });

  it("close 1012 (service restart) to the node, and any code from 3000 to 4999: the node sees the code named", async () => {
    for (const code of [1012, 4000]) {
      const { client } = await pair("/");
      const id = `restart-${code}`;
      await tap.addRule({ id, match: { dir: "node->gw", method: "node.event" }, action: { close: { code, side: "node" } }, once: true });
      const clientClosed = closed(client);
      client.send(JSON.stringify({ type: "req", id: "1", method: "node.event", params: {} }));
      expect((await clientClosed).code).toBe(code);
      await tap.heal();
    }
  });

  it("close 1011 to both sides", async () => {
    const { client, server } = await pair("/__openclaw__/worker");
    await tap.addRule({ id: "err", match: { dir: "node->gw", method: "worker.inference.start" }, action: { close: { code: 1011, side: "both" } }, once: true });
    const a = closed(client);
    const b = closed(server);
    client.send(JSON.stringify({ type: "req", id: "1", method: "worker.inference.start", params: {} }));
    expect((await a).code).toBe(1011);
    expect((await b).code).toBe(1011);
  });

  it("close 1006: the sockets are aborted without a close frame", async () => {
    const { client, server } = await pair("/");
    await tap.addRule({ id: "abort", match: { command: "worker.launch.v1" }, action: { close: { code: 1006, side: "both" } }, once: true });
    const a = closed(client);
    const b = closed(server);
    server.send(JSON.stringify({ type: "event", event: "node.invoke.request", payload: { id: "i", command: "worker.launch.v1" } }));
    expect((await a).code).toBe(1006);
    expect((await b).code).toBe(1006);
    const f = await trigger("abort");
    expect(f.command).toBe("worker.launch.v1");
  });

  it("close after: the trigger frame is forwarded whole, then the connection closes behind it (the race of a result and a close)", async () => {
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    await tap.addRule({ id: "fwd-close", match: { dir: "node->gw", method: "node.invoke.result" }, action: { close: { code: 1006, side: "both", after: true } }, once: true });
    const a = closed(client);
    const b = closed(server);
    const result = JSON.stringify({ type: "req", id: "r1", method: "node.invoke.result", params: { id: "i1", ok: true, payloadJSON: "{\"bins\":[\"git\"]}" } });
    client.send(result);
    client.send("never forwarded: the connection is closed after the trigger");
    expect(await atServer.next()).toBe(result);
    expect((await b).code).toBe(1006); // FIN with no close frame behind the result
    expect((await a).code).toBe(1006);
    await sleep(100);
    expect(atServer.msgs.map((m) => m.text)).toEqual([result]);
    const f = await trigger("fwd-close");
    expect(f.method).toBe("node.invoke.result");
    const rec = (await tap.events()).find((r) => (r as { event?: string }).event === "fault" && (r as { rule?: string }).rule === "fwd-close");
    expect(rec).toMatchObject({ code: 1006, after: true });
  });

  it("close after with 1001 to the gateway: the frame, then a close frame, reach it in that order", async () => {
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    await tap.addRule({ id: "fwd-1001", match: { dir: "node->gw", textIncludes: "last words" }, action: { close: { code: 1001, side: "gw", after: true } }, once: true });
    const b = closed(server);
    client.send("last words");
    expect(await atServer.next()).toBe("last words");
    expect((await b).code).toBe(1001);
  });

  it("respond: the node's upgrade is answered 502 by the tap and never reaches the gateway; heal lets it through again", async () => {
    const before = upgradeHeaders.length;
    await tap.addRule({ id: "bad-gw", match: { kind: "http", path: "/" }, action: { respond: { status: 502 } } });
    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${tapPort}/`, { perMessageDeflate: false });
      opened.push(ws);
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("the upgrade went through")));
      ws.once("error", () => {});
    });
    expect(refused).toBe(502);
    expect(upgradeHeaders.length).toBe(before);
    expect((await tap.rule("bad-gw"))!.hits).toBe(1);
    await tap.heal();
    const { client } = await pair("/");
    expect(client.readyState).toBe(WebSocket.OPEN);
  });

  it("respond and close-after are refused where they cannot apply", async () => {
    await expect(tap.addRule({ match: { method: "connect" }, action: { respond: { status: 502 } } })).rejects.toThrow(/respond applies to HTTP requests only/);
    await expect(tap.addRule({ match: { kind: "http" }, action: { respond: { status: 101 } } })).rejects.toThrow(/status from 200 to 599/);
    await expect(tap.addRule({ match: { kind: "http" }, action: { close: { code: 1006, after: true } } })).rejects.toThrow(/after applies to WebSocket frames only/);
  });

  it("halfOpen: nothing is forwarded either way, sockets stay open; after heal forwarding resumes", async () => {
    const { client, server } = await pair("/");
    const atServer = inbox(server);
    const atClient = inbox(client);
    await tap.addRule({ id: "ho", match: { dir: "node->gw", textIncludes: "freeze-me" }, action: { halfOpen: {} }, once: true });
    client.send("freeze-me");
    server.send("anyone there?");
    await sleep(400);
    expect(atServer.msgs).toHaveLength(0);
    expect(atClient.msgs).toHaveLength(0);
    expect(client.readyState).toBe(WebSocket.OPEN);
    expect(server.readyState).toBe(WebSocket.OPEN);
    const conn = (await tap.connections()).find((c) => c.halfOpenBy.includes("ho"))!;
    expect(conn.state).toBe("held");
    expect((await trigger("ho")).action).toBe("hold");
    await tap.heal();
    expect(await atServer.next()).toBe("freeze-me");
    expect(await atClient.next()).toBe("anyone there?");
    client.send("flowing");
    expect(await atServer.next()).toBe("flowing");
  });

  it("withholdPong: a ping gets no pong until healed", async () => {
    const { client } = await pair("/");
    await tap.addRule({ id: "np", match: { dir: "gw->node" }, action: { withholdPong: {} } });
    let pongs = 0;
    client.on("pong", () => pongs++);
    client.ping("p1");
    await sleep(400);
    expect(pongs).toBe(0);
    const pong = await tap.waitForFrame({ opcode: "pong", dir: "gw->node" }, { timeoutMs: 1000 });
    expect(pong).toMatchObject({ action: "drop", rule: "np" });
    await tap.heal();
    client.ping("p2");
    await sleep(200);
    expect(pongs).toBe(1);
  });

  it("freeze: every connection (and new ones) holds until healed", async () => {
    const a = await pair("/");
    const atA = inbox(a.server);
    const rule = await tap.addRule({ id: "fz", action: { freeze: {} } });
    expect(rule.firstFired).not.toBeNull();
    a.client.send("during freeze");
    const serverB = nextServerConn();
    const b = new WebSocket(`ws://127.0.0.1:${tapPort}/__openclaw__/worker`, { perMessageDeflate: false });
    opened.push(b);
    let bOpen = false;
    b.once("open", () => (bOpen = true));
    await sleep(250);
    expect(atA.msgs).toHaveLength(0);
    expect(bOpen).toBe(false); // its upgrade request is held too
    expect((await tap.health()).frozen).toBe(true);
    await tap.heal();
    expect(await atA.next()).toBe("during freeze");
    await serverB;
    if (!bOpen) await once(b, "open");
  });

  it("inject to the node: after the trigger frame the node gets a frame the gateway never sent, recorded as the tap's own", async () => {
    const { client, server } = await pair("/");
    const atClient = inbox(client);
    const atServer = inbox(server);
    const written = JSON.stringify({ type: "event", event: "node.invoke.request", payload: { id: "tap-inv-1", nodeId: "n1", command: "worker.cancel.v1", paramsJSON: "{}" } });
    await tap.addRule({ id: "inj", match: { dir: "gw->node", event: "tick" }, action: { inject: { to: "node", text: written } }, once: true });
    server.send(JSON.stringify({ type: "event", event: "tick", payload: {} }));
    expect(JSON.parse(await atClient.next()).event).toBe("tick");
    expect(await atClient.next()).toBe(written);
    expect((await trigger("inj")).action).toBe("forward");
    const rec = (await tap.frames({ match: "tap-inv-1" })).find((f) => f.action === "inject")!;
    expect(rec).toMatchObject({ dir: "gw->node", rule: "inj", masked: false, event: "node.invoke.request", command: "worker.cancel.v1", invokeId: "tap-inv-1", text: written });
    // The node's answer goes on to the gateway as any frame would (the gateway decides what it makes of it).
    const answer = JSON.stringify({ type: "req", id: "r-1", method: "node.invoke.result", params: { id: "tap-inv-1", nodeId: "n1", ok: false, error: { code: "STALE" } } });
    client.send(answer);
    expect(await atServer.next()).toBe(answer);
    expect((await tap.frames({ match: "node.invoke.result" })).at(-1)).toMatchObject({ action: "forward", invokeId: "tap-inv-1" });
  });

  it("inject to the gateway (masked, as a client's frames are) before the trigger; the gateway's answer reaches the node paired to it", async () => {
    const { client, server } = await pair("/");
    const atClient = inbox(client);
    const atServer = inbox(server);
    const written = JSON.stringify({ type: "req", id: "tap-req-1", method: "node.event", params: { event: "x" } });
    await tap.addRule({ id: "injgw", match: { dir: "node->gw", textIncludes: "go" }, action: { inject: { to: "gw", text: written, before: true } }, once: true });
    client.send("go");
    expect(await atServer.next()).toBe(written);
    expect(await atServer.next()).toBe("go");
    const rec = (await tap.frames({ match: "tap-req-1" })).find((f) => f.action === "inject")!;
    expect(rec).toMatchObject({ dir: "node->gw", masked: true, rule: "injgw", method: "node.event" });
    server.send(JSON.stringify({ type: "res", id: "tap-req-1", ok: true, payload: {} }));
    expect(JSON.parse(await atClient.next())).toMatchObject({ type: "res", id: "tap-req-1" });
    expect((await tap.frames({ match: "tap-req-1" })).at(-1)).toMatchObject({ dir: "gw->node", replyTo: "node.event" });
  });

  it("inject writes a large frame whole (16-bit and 64-bit length forms)", async () => {
    const { client } = await pair("/");
    const atClient = inbox(client);
    const mid = "m".repeat(70_000);
    await tap.addRule({ id: "big", match: { dir: "node->gw", textIncludes: "ping-me" }, action: { inject: { to: "node", text: mid } }, once: true });
    await tap.addRule({ id: "small", match: { dir: "node->gw", textIncludes: "ping-me" }, action: { inject: { to: "node", text: "x".repeat(200) } } });
    client.send("ping-me");
    expect((await atClient.next()).length).toBe(70_000);
    client.send("ping-me");
    expect((await atClient.next()).length).toBe(200);
  });

  it("inject is refused where it cannot apply, naming the field", async () => {
    await expect(tap.addRule({ match: { kind: "http" }, action: { inject: { to: "node", text: "x" } } })).rejects.toThrow(/WebSocket frames only/);
    await expect(tap.addRule({ action: { inject: { to: "both" as "node", text: "x" } } })).rejects.toThrow(/action\.inject\.to/);
    await expect(tap.addRule({ action: { inject: { to: "node", text: "" } } })).rejects.toThrow(/action\.inject\.text/);
  });

  it("rejects a malformed rule with the reason", async () => {
    await expect(tap.addRule({ action: { close: { code: 1005, side: "node" } } })).rejects.toThrow(/action\.close\.code: 1005 is reserved/);
    await expect(tap.addRule({ action: { close: { code: 2000, side: "node" } } })).rejects.toThrow(/1000-1003, 1007-1014 or 3000-4999/);
    const res = await fetch(`${tap.baseUrl}/rules`, { method: "POST", body: JSON.stringify({ match: { frobnicate: 1 }, action: { drop: {} } }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/unknown match field "frobnicate"/);
  });
});

describe("credentials in a JSON frame that quotes a header", () => {
  it("stay redacted and the frame stays the same JSON (the header rule would cut it)", async () => {
    const { Redactor } = await import("../evidence/redact.ts");
    const { redactRecord } = await import("./tap.ts");
    const script = 'if (token) env.X = "Authorization: Bearer " + token; run();';
    const text = JSON.stringify({ type: "event", event: "node.invoke.request", payload: { paramsJSON: JSON.stringify({ script, token: "s3cr3t-token-value" }) } });
    const r = redactRecord({ kind: "frame", seq: 1, t: 0, conn: "c1", path: "/", dir: "gw->node", opcode: 1, fin: true, len: text.length, masked: false, text } as never, new Redactor());
    const out = (r as { text: string }).text;
    expect(() => JSON.parse(out)).not.toThrow();
    expect(JSON.parse(JSON.parse(out).payload.paramsJSON).script).toBe(script);
  });
});

describe("the records it wrote", () => {
  it("are, every one of them, tap records as the report and the excerpts read them (lab/evidence/records/tap.ts)", async () => {
    // Everything the tests above made the tap record: frames, HTTP exchanges, connection events
    // (open, upgrade, errors, faults, close) and rule events (added, fired, removed, healed).
    const file = join(tmpdir(), `fleetlab-tap-records-${process.pid}`, "tap.jsonl");
    try {
      const n = await tap.saveTranscript(file);
      const { records, bad } = parseJsonl(await readFile(file, "utf8"), TapRecord);
      expect(bad).toBe(0);
      expect(records).toHaveLength(n);
      const kinds = new Set(records.map((r) => (r.value.kind === "conn" || r.value.kind === "rule" ? `${r.value.kind} ${r.value.event}` : r.value.kind)));
      for (const k of ["frame", "http", "conn open", "conn upgrade", "conn fault", "conn close", "rule added", "rule fired", "rule healed"]) expect(kinds).toContain(k);
    } finally {
      await rm(join(tmpdir(), `fleetlab-tap-records-${process.pid}`), { recursive: true, force: true });
    }
  });
});
