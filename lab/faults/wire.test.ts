// Wire faults through the real tap program (docker/faultproxy/server.ts) on loopback, in
// front of a small WebSocket upstream standing in for the gateway: each fault's life cycle,
// the moment its rule fired, and heal undoing what it held.
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { TapControl } from "../clients/tap.ts";
import { listeningRecord, startServerProcess, type ServerProcess } from "../testing/server-process.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { waitFor } from "../core/wait.ts";
import { FaultTimeline, TIMELINE_FILE } from "./timeline.ts";
import { Run } from "../evidence/run.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { faults } from "./index.ts";
import { injectWhen, tapFrame } from "./trigger.ts";

const wire = faults.wire;

const SERVER = fileURLToPath(new URL("../../docker/faultproxy/server.ts", import.meta.url));

let upstream: http.Server;
let tapServer: ServerProcess<{ listen: number; control: number }>;
let tap: TapControl;
let tapPort: number;
/** A lab with one tap, as scenarios have it ({ lab, node }): faults heal on its teardown stack. */
const lab = { id: "lab-t", run: { id: "run-t" }, teardown: new TeardownStack(), tap: () => tap };
const on = { lab, node: "node-1" };
const waiters: ((ws: WebSocket) => void)[] = [];
const opened: WebSocket[] = [];

beforeAll(async () => {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  upstream = http.createServer((_req, res) => res.writeHead(404).end());
  upstream.on("upgrade", (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => waiters.shift()?.(ws)));
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  tapServer = await startServerProcess(
    "tap",
    SERVER,
    { TAP_UPSTREAM: `127.0.0.1:${(upstream.address() as AddressInfo).port}`, TAP_HOST: "127.0.0.1", TAP_LISTEN_PORT: "0", TAP_CONTROL_PORT: "0", TAP_STDOUT: "none" },
    listeningRecord<{ listen: number; control: number }>,
  );
  tapPort = tapServer.ready.listen;
  tap = new TapControl(`http://127.0.0.1:${tapServer.ready.control}`);
});

afterEach(async () => {
  await lab.teardown.drain();
  for (const ws of opened.splice(0)) ws.terminate();
});

afterAll(async () => {
  await tapServer?.stop();
  await new Promise((r) => upstream?.close(r));
});

async function pair(): Promise<{ client: WebSocket; server: WebSocket; atClient: string[]; atServer: string[] }> {
  const serverP = new Promise<WebSocket>((r) => waiters.push(r));
  const client = new WebSocket(`ws://127.0.0.1:${tapPort}/`, { perMessageDeflate: false });
  opened.push(client);
  await once(client, "open");
  const server = await serverP;
  const atClient: string[] = [];
  const atServer: string[] = [];
  client.on("message", (d) => atClient.push(d.toString()));
  server.on("message", (d) => atServer.push(d.toString()));
  return { client, server, atClient, atServer };
}

const until = (cond: () => boolean, ms = 3000) => waitFor("the condition", cond, { timeoutMs: ms, intervalMs: 5 });

const frame = (method: string) => JSON.stringify({ type: "req", id: method, method, params: {} });

describe("wire faults", () => {
  it("close takes any close code a peer may send, and refuses another when it is made, with the reason", () => {
    for (const code of [1000, 1001, 1006, 1011, 1012, 1013, 1014, 3000, 4999]) expect(() => wire.close(on, code)).not.toThrow();
    expect(() => wire.close(on, 1005)).toThrow(/faults\.wire\.close: 1005 is reserved/);
    expect(() => wire.close(on, 1004)).toThrow(/reserved/);
    expect(() => wire.close(on, 1015)).toThrow(/reserved/);
    expect(() => wire.close(on, 999)).toThrow(/use 1000-1003, 1007-1014 or 3000-4999 .* or 1006/);
    expect(() => wire.close(on, 5000)).toThrow(/not a close code/);
    expect(() => wire.close(on, 1001.5)).toThrow(/integer/);
  });

  it("close 1006 at a protocol point: armed, fired on the matching frame (time recorded), healed by removing the rule", async () => {
    const timeline = new FaultTimeline();
    const { client, server, atServer } = await pair();
    const f = wire.close(on, 1006, { match: { method: "worker.launch.v1" }, side: "both", timeline });
    const inj = await f.inject();
    expect(inj.detail.rule).toBe(f.ruleId);
    client.send(frame("tick"));
    await until(() => atServer.length === 1);
    const clientClosed = new Promise<number>((r) => client.once("close", (code) => r(code)));
    client.send(frame("worker.launch.v1"));
    expect(await clientClosed).toBe(1006);
    const fired = await f.fired();
    expect(atServer).toEqual([frame("tick")]); // the trigger frame itself never arrived
    expect(fired.seq).toBeGreaterThan(0);
    const h = await f.heal();
    expect(h.detail).toMatchObject({ hits: 1 });
    expect((await tap.rules()).find((r) => r.id === f.ruleId)).toBeUndefined();
    const steps = timeline.of(f.id);
    expect(steps.map((s) => s.step)).toEqual(["prepare", "inject", "in-effect", "fired", "heal", "healed", "cleanup"]);
    const firedEntry = steps.find((s) => s.step === "fired")!;
    // The tap's clock and ours are the same host clock: it fired after inject, before heal.
    expect(firedEntry.t).toBeGreaterThanOrEqual(steps[1]!.t - 5);
    expect(firedEntry.t).toBeLessThanOrEqual(steps.find((s) => s.step === "heal")!.t + 5);
    void server;
  });

  it("half-open holds frames both ways while in effect and heal delivers them", async () => {
    const { client, server, atClient, atServer } = await pair();
    const f = wire.halfOpen(on, { method: "worker.status" });
    await f.inject();
    client.send(frame("worker.status"));
    await f.fired();
    server.send(frame("event-from-gw"));
    await new Promise((r) => setTimeout(r, 200));
    expect([atServer, atClient]).toEqual([[], []]);
    await f.heal();
    await until(() => atServer.length === 1 && atClient.length === 1);
    expect(atServer).toEqual([frame("worker.status")]);
  });

  it("delay holds matching frames for the given time", async () => {
    const { client, atServer } = await pair();
    const f = wire.delay(on, 300, { dir: "node->gw" });
    await f.inject();
    const t0 = performance.now();
    client.send(frame("slow"));
    await until(() => atServer.length === 1);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    await f.heal();
    const t1 = performance.now();
    client.send(frame("fast"));
    await until(() => atServer.length === 2);
    expect(performance.now() - t1).toBeLessThan(200);
  });

  it("a freeze with no match is in effect at once (the rule fired when added); draining the lab's teardown lifts it", async () => {
    const { client, atServer } = await pair();
    const f = wire.freeze(on);
    const inj = await f.inject();
    expect(inj.detail.fired).toBeDefined();
    client.send(frame("held"));
    await new Promise((r) => setTimeout(r, 150));
    expect(atServer).toEqual([]);
    expect(lab.teardown.pending).toEqual([`heal ${f}`]);
    await lab.teardown.drain();
    expect(f.done).toBe(true);
    await until(() => atServer.length === 1);
  });

  it("{lab, node} picks that node's tap; the lab's run timeline records the steps and its teardown heals it", async () => {
    const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-faults-")) });
    const asked: string[] = [];
    const labW = { id: "lab-w", run, teardown: new TeardownStack(), tap: (node: string) => (asked.push(node), tap) };
    const f = wire.withholdPong({ lab: labW, node: "node-1" }, "node->gw");
    await f.inject();
    expect(asked).toEqual(["node-1"]);
    expect(await tap.rule(f.ruleId)).toMatchObject({ active: true, action: { type: "withholdPong" } });
    await lab.teardown.drain(); // another lab's stack: not this fault
    expect(await tap.rule(f.ruleId)).toBeDefined();
    await labW.teardown.drain();
    expect(await tap.rule(f.ruleId)).toBeUndefined();
    const lines = FaultTimeline.read(path.join(run.dir, TIMELINE_FILE));
    expect(lines[0]).toMatchObject({ fault: "wire.withholdPong", target: 'tap node-1 {"dir":"node->gw"}', step: "prepare" });
    expect(lines.at(-1)!.step).toBe("cleanup");
  });

  it("a bare TapControl works too; nothing is registered anywhere (heal it yourself)", async () => {
    const f = wire.drop(tap, { method: "never" });
    await f.inject();
    expect(lab.teardown.pending).toEqual([]);
    await f.heal();
    expect(await tap.rule(f.ruleId)).toBeUndefined();
  });

  it("a tap-frame trigger injects a fault when the frame has passed the tap", async () => {
    const { client } = await pair();
    let injectedAt = 0;
    const f = wire.drop(on, { method: "never" }); // any fault kind; a wire one keeps this test free of Docker
    const orig = f.inject.bind(f);
    f.inject = () => ((injectedAt = performance.now()), orig());
    const armed = await injectWhen(tapFrame(tap, { method: "worker.launch.v1" }), f);
    client.send(frame("tick"));
    await new Promise((r) => setTimeout(r, 100));
    expect(injectedAt).toBe(0);
    const sent = performance.now();
    client.send(frame("worker.launch.v1"));
    const res = await armed.injected;
    expect(res.value.method).toBe("worker.launch.v1");
    // Polled every 20 ms: the fault goes in well under 200 ms after the frame passed.
    expect(injectedAt - sent).toBeLessThan(200);
  });
});
