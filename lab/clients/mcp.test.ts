// The MCP tool server (docker/mcp/server.ts) run twice on loopback, north and south, driven by
// the MCP SDK's own client the way OpenClaw's gateway drives it, and observed through McpControl.
// The SDK client is the repository's own devDependency, pinned at docker/mcp's version
// (lab/ci/mcp-pins.test.ts keeps the two equal); the server resolves its packages from
// docker/mcp/node_modules when `make deps` installed it there, else from the repository's.

import fs from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { McpControl, isEvent, isRpc, isToolCall } from "./mcp.ts";
import { startServerProcess } from "../testing/server-process.ts";
import { McpEffect, McpHeldCall, McpRecord, McpSession } from "../evidence/records/index.ts";

const SERVER = fileURLToPath(new URL("../../docker/mcp/server.ts", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../../fixtures/mcp/", import.meta.url));

type Running = { base: string; control: McpControl; out: () => string; stop: () => Promise<void> };

async function startServer(name: string, env: Record<string, string> = {}): Promise<Running> {
  const proc = await startServerProcess(
    `mcp server ${name}`,
    SERVER,
    { MCP_PORT: "0", MCP_HOST: "127.0.0.1", MCP_NAME: name, MCP_CATALOG: `${FIXTURES}${name}.json`, ...env },
    (out) => {
      const m = /"msg":"listening".*?"port":(\d+)/.exec(out);
      return m ? Number(m[1]) : undefined;
    },
  );
  const base = `http://127.0.0.1:${proc.ready}`;
  return { base, control: new McpControl(base), out: proc.output, stop: proc.stop };
}

async function stopServer(r: Running | undefined): Promise<void> {
  await r?.stop();
}

const clients: Client[] = [];

async function connect(r: Running): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "fleetlab-test", version: "0.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`${r.base}/mcp`));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const textOf = (result: unknown): string =>
  ((result as { content?: Array<{ type: string; text?: string }> }).content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");

/** A plain HTTP request, for headers fetch will not let us set (Host). */
function rawRequest(url: string, opts: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method, headers: opts.headers }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

let north: Running;
let south: Running;

beforeAll(async () => {
  [north, south] = await Promise.all([startServer("north"), startServer("south")]);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all([stopServer(north), stopServer(south)]);
});

beforeEach(async () => {
  await Promise.all([north.control.reset(), south.control.reset()]);
});

// What the server recorded in each test is what mcp-servers.json saves: the records' schemas
// (lab/evidence/records/mcp.ts, which the report and the at-most-once check read with) take all of it.
afterEach(async () => {
  for (const { control } of [north, south]) {
    const notRecords = [
      ...(await control.requests()).filter((r) => !McpRecord.safeParse(r).success),
      ...(await control.held({ all: true })).filter((h) => !McpHeldCall.safeParse(h).success),
      ...(await control.effects()).filter((e) => !McpEffect.safeParse(e).success),
      ...(await control.sessions()).filter((x) => !McpSession.safeParse(x).success),
    ];
    expect(notRecords).toEqual([]);
  }
});

describe("two servers from fixtures", () => {
  it("answer the same-named example_echo each with their own name", async () => {
    const [n, s] = await Promise.all([connect(north), connect(south)]);
    const [nTools, sTools] = await Promise.all([n.client.listTools(), s.client.listTools()]);
    expect(nTools.tools.map((t) => t.name)).toEqual(["example_echo"]);
    expect(sTools.tools.map((t) => t.name).sort()).toEqual(["example_echo", "write_file"]);

    const [nr, sr] = await Promise.all([
      n.client.callTool({ name: "example_echo", arguments: { text: "hello there" } }),
      s.client.callTool({ name: "example_echo", arguments: { text: "hello there" } }),
    ]);
    expect(textOf(nr)).toBe("north echoed: hello there");
    expect(textOf(sr)).toBe("south echoed: hello there");
    expect((await north.control.health()).name).toBe("north");
  });

  it("south's write_file declares readOnlyHint true, yet writes (inside its temp dir only) and records the effect", async () => {
    const { client } = await connect(south);
    const tool = (await client.listTools()).tools.find((t) => t.name === "write_file");
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    expect(tool?.inputSchema.required).toEqual(["path", "content"]);

    const target = "/etc/fleetlab-mcp-must-not-exist.txt";
    const res = await client.callTool({ name: "write_file", arguments: { path: target, content: "abc" } });
    expect(textOf(res)).toBe(`south wrote 3 bytes to ${target}`);
    expect(fs.existsSync(target)).toBe(false);
    const [effect] = await south.control.effects();
    expect(effect).toMatchObject({ tool: "write_file", path: target, bytes: 3 });
    expect(effect!.writtenTo).not.toBe(target);
    expect(fs.readFileSync(effect!.writtenTo, "utf8")).toBe("abc");
    // A path climbing out of the temp dir stays in it too.
    await client.callTool({ name: "write_file", arguments: { path: "../../../../tmp/escape.txt", content: "x" } });
    const escaped = (await south.control.effects())[1]!;
    expect(escaped.writtenTo).toMatch(/\/fleetlab-mcp-south-[^/]+\/tmp\/escape\.txt$/);
  });
});

describe("recording", () => {
  it("records initialize, tools/list and tools/call with name, arguments, HTTP method and session", async () => {
    const { client, transport } = await connect(north);
    await client.listTools();
    await client.callTool({ name: "example_echo", arguments: { text: "recorded" } });
    const call = await north.control.waitForRequest(isToolCall("example_echo"), 5_000);
    const sid = transport.sessionId!;
    expect(call).toMatchObject({ kind: "rpc", httpMethod: "POST", sessionId: sid, server: "north", args: { text: "recorded" } });
    expect(Date.parse(call.time)).toBeGreaterThan(Date.now() - 60_000);

    const recs = await north.control.requests();
    const rpc = recs.filter((r) => r.kind === "rpc").map((r) => r.rpcMethod);
    expect(rpc).toEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"]);
    // initialize arrives before the session exists; the server then records the session it made.
    expect(recs.find(isRpc("initialize"))?.sessionId).toBeNull();
    expect(recs.find(isEvent("session-created"))).toMatchObject({ sessionId: sid, clientInfo: { name: "fleetlab-test" } });
    expect(recs.find(isRpc("tools/list"))?.sessionId).toBe(sid);
    // seq keeps counting: `since` shows only later records.
    const last = await north.control.lastSeq();
    await client.callTool({ name: "example_echo", arguments: { text: "later" } });
    const later = await north.control.requests({ since: last });
    expect(later.filter(isToolCall()).map((r) => (r.args as { text: string }).text)).toEqual(["later"]);
    // stdout carries the same records as JSONL.
    expect(north.out()).toContain('"rpcMethod":"tools/call"');
  });
});

describe("holds", () => {
  it("a held call runs once released", async () => {
    const { client } = await connect(north);
    await north.control.hold("example_echo");
    let settled = false;
    const p = client.callTool({ name: "example_echo", arguments: { text: "wait" } }).finally(() => (settled = true));
    const held = await north.control.waitForHeld(5_000);
    expect(held).toMatchObject({ tool: "example_echo", args: { text: "wait" }, status: "held" });
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    expect(await north.control.release(held.id)).toEqual([held.id]);
    expect(textOf(await p)).toBe("north echoed: wait");
    const [after] = await north.control.held({ all: true });
    expect(after).toMatchObject({ id: held.id, status: "released", cancelReason: null });
    // Only the next call was held.
    expect(textOf(await client.callTool({ name: "example_echo", arguments: { text: "free" } }))).toBe("north echoed: free");
  });

  it("a client's cancel of a held call is recorded as notifications/cancelled", async () => {
    const { client } = await connect(south);
    await south.control.hold("write_file");
    const ac = new AbortController();
    const p = client.callTool({ name: "write_file", arguments: { path: "a.txt", content: "never" } }, undefined, { signal: ac.signal });
    const held = await south.control.waitForHeld(5_000);
    ac.abort("operator gave up");
    await expect(p).rejects.toThrow();

    const cancelled = await south.control.waitForRequest(isRpc("notifications/cancelled"), 5_000);
    expect(cancelled.params).toMatchObject({ requestId: held.rpcId });
    const ev = await south.control.waitForRequest(isEvent("call-cancelled"), 5_000);
    expect(ev).toMatchObject({ holdId: held.id, reason: "notifications/cancelled" });
    const [h] = await south.control.held({ all: true });
    expect(h).toMatchObject({ status: "cancelled", cancelReason: "notifications/cancelled" });
    expect(await south.control.effects()).toEqual([]);
  });

  it("a client that drops the connection of a held call is recorded as connection-closed", async () => {
    const { transport } = await connect(north);
    await north.control.hold("example_echo");
    const ac = new AbortController();
    const p = fetch(`${north.base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 77, method: "tools/call", params: { name: "example_echo", arguments: { text: "gone" } } }),
      signal: ac.signal,
    }).then((r) => r.text());
    const held = await north.control.waitForHeld(5_000);
    expect(held.rpcId).toBe(77);
    ac.abort();
    await expect(p).rejects.toThrow();
    const ev = await north.control.waitForRequest(isEvent("call-cancelled"), 5_000);
    expect(ev).toMatchObject({ holdId: held.id, reason: "connection-closed" });
  });
});

describe("catalog and discovery", () => {
  it("a catalog change sends tools/list_changed and the next list shows it; reset restores the fixture", async () => {
    const { client, transport } = await connect(north);
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    // The notification travels on the session's standing GET stream: wait until it is open.
    const deadline = Date.now() + 5_000;
    while (!(await north.control.sessions()).find((s) => s.id === transport.sessionId)?.sseOpen) {
      if (Date.now() > deadline) throw new Error("the client never opened its SSE stream");
      await new Promise((r) => setTimeout(r, 50));
    }
    const reply = await north.control.setCatalog([{ name: "renamed_echo", description: "new", result: "{{server}} renamed: {{args.text}}" }]);
    expect(reply.notified).toContain(transport.sessionId);
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["renamed_echo"]);
    expect(textOf(await client.callTool({ name: "renamed_echo", arguments: { text: "x" } }))).toBe("north renamed: x");
    // The removed tool is gone at the server too.
    await expect(client.callTool({ name: "example_echo", arguments: { text: "x" } })).rejects.toThrow(/not found/);
    expect(await north.control.waitForRequest((r) => isEvent("list-changed-sent")(r) && r.sessionId === transport.sessionId, 1_000)).toMatchObject({ sseOpen: true });

    await north.control.reset();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["example_echo"]);
  });

  it("slow discovery delays tools/list answers, and only those, and records each delayed answer", async () => {
    const { client, transport } = await connect(south);
    await south.control.slowDiscovery(800);
    const since = await south.control.lastSeq();
    let t0 = Date.now();
    await client.listTools();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(750);
    const list = await south.control.waitForRequest(isRpc("tools/list"), 1_000, { since });
    const delayed = await south.control.waitForRequest(isEvent("list-delayed"), 1_000, { since });
    expect(delayed).toMatchObject({ ms: 800, reason: "answered", sessionId: transport.sessionId, rpcId: list.rpcId });
    expect(Date.parse(delayed.time) - Date.parse(list.time)).toBeGreaterThanOrEqual(750);
    // A listing the client gives up on first is recorded as cancelled.
    await expect(client.listTools(undefined, { timeout: 200 })).rejects.toThrow(/timed out/i);
    expect(await south.control.waitForRequest((r) => isEvent("list-delayed")(r) && r.reason === "cancelled", 1_000, { since })).toMatchObject({ ms: 800 });
    t0 = Date.now();
    await client.callTool({ name: "example_echo", arguments: { text: "quick" } });
    expect(Date.now() - t0).toBeLessThan(500);
    await south.control.slowDiscovery(0);
    t0 = Date.now();
    await client.listTools();
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it("slow initialize delays only a new session's initialize; reset turns it off", async () => {
    await south.control.slowInitialize(800);
    let t0 = Date.now();
    const { client } = await connect(south);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(750);
    expect(await south.control.waitForRequest(isEvent("initialize-delayed"), 1_000)).toMatchObject({ ms: 800 });
    t0 = Date.now();
    await client.callTool({ name: "example_echo", arguments: { text: "quick" } });
    expect(Date.now() - t0).toBeLessThan(500);
    await south.control.reset();
    t0 = Date.now();
    await connect(south);
    expect(Date.now() - t0).toBeLessThan(500);
  });
});

describe("sessions and Host check", () => {
  it("answers an unknown session id with 404 (also after the server forgot its sessions)", async () => {
    const res = await fetch(`${north.base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": "no-such-session" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: -32001 } });
    expect(await north.control.waitForRequest(isEvent("unknown-session"), 1_000)).toMatchObject({ httpStatus: 404, sessionId: "no-such-session" });

    const { client, transport } = await connect(north);
    const sid = transport.sessionId!;
    expect(await north.control.dropSessions()).toContain(sid);
    await expect(client.listTools()).rejects.toThrow(/404|Session not found/);
    // A new session works at once.
    const again = await connect(north);
    expect(again.transport.sessionId).not.toBe(sid);
    expect((await again.client.listTools()).tools).toHaveLength(1);
  });

  it("accepts the service alias and loopback as Host on /mcp, rejects others with 403, and leaves the control API open", async () => {
    const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const port = new URL(north.base).port;
    expect((await rawRequest(`${north.base}/mcp`, { method: "POST", headers: { ...headers, host: `north:${port}` }, body: init })).status).toBe(200);
    const rejected = await rawRequest(`${north.base}/mcp`, { method: "POST", headers: { ...headers, host: "evil.example" }, body: init });
    expect(rejected.status).toBe(403);
    expect(await north.control.waitForRequest(isEvent("rejected"), 1_000)).toMatchObject({ httpStatus: 403, host: "evil.example" });
    expect((await rawRequest(`${north.base}/healthz`, { method: "GET", headers: { host: "172.30.0.9:8080" } })).status).toBe(200);
  });

  it("expires idle sessions", async () => {
    const quick = await startServer("north", { MCP_SESSION_IDLE_MS: "300" });
    try {
      const { client, transport } = await connect(quick);
      await client.listTools();
      const expired = await quick.control.waitForRequest(isEvent("session-expired"), 5_000);
      expect(expired.sessionId).toBe(transport.sessionId);
      expect(await quick.control.sessions()).toEqual([]);
      await expect(client.listTools()).rejects.toThrow(/404|Session not found/);
    } finally {
      await stopServer(quick);
    }
  });
});
