// kill.inside on cheap containers: a killer in the target's PID and network namespaces SIGKILLs
// it on request, or as a frame passes a (loopback) wire tap; the landing time is on the
// timeline, after the trigger; heal brings the same container back.
import fs from "node:fs";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { TapControl } from "../clients/tap.ts";
import { docker } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import { listeningRecord, startServerProcess, type ServerProcess } from "../testing/server-process.ts";
import { Testbed } from "../testing/testbed.ts";
import { faults } from "./index.ts";

const SERVER = fileURLToPath(new URL("../../docker/faultproxy/server.ts", import.meta.url));

let bed: Testbed;
let upstream: http.Server;
let tapServer: ServerProcess<{ listen: number; control: number }>;
let tap: TapControl;
const waiters: ((ws: WebSocket) => void)[] = [];

beforeAll(async () => {
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-kill-inside-")) });
  bed = await Testbed.up(run, ["a", "b"]);
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
  tap = new TapControl(`http://127.0.0.1:${tapServer.ready.control}`);
});
afterEach(async () => {
  await bed.teardown.drain();
  await tap.heal();
});
afterAll(async () => {
  await tapServer?.stop();
  await new Promise((r) => upstream?.close(r));
  await bed?.down();
});

const state = async (alias: string) => (await docker().getContainer(bed.member(alias).id).inspect()).State;
const killers = async () => (await docker().listContainers({ all: true, filters: { label: [`fleetlab.lab=${bed.id}`, "fleetlab.kind=fault-helper"] } })).length;

describe("kill.inside", () => {
  it("kills the member from inside its namespaces at inject, says when it landed, and heal starts the same container", async () => {
    await bed.exec("b", ["sh", "-c", "echo kept > /var/tmp/state"]);
    const f = faults.killInside(bed, "b");
    const inj = await f.inject();
    const d = inj.detail as { landedAt: number; sentAt: number; sentToLandedMs: number; exitCode: number };
    expect(d.landedAt).toBeGreaterThanOrEqual(d.sentAt);
    expect(d.exitCode).toBe(137); // tini saw its child SIGKILLed
    expect((await state("b")).Running).toBe(false);
    expect(f.timeline.of(f.id).map((e) => e.step)).toEqual(expect.arrayContaining(["prepare", "landed", "inject", "in-effect"]));
    await f.heal();
    expect((await state("b")).Running).toBe(true);
    expect((await bed.exec("b", ["cat", "/var/tmp/state"])).stdout.trim()).toBe("kept");
    expect((await bed.echoSoon("a", "b")).ok).toBe(true);
    expect(await killers()).toBe(0);
  });

  it("at a frame: the tap notifies the killer as the frame passes; the kill lands after that frame, and it is on the timeline", async () => {
    const lab = Object.assign(Object.create(bed) as Testbed, { tap: () => tap });
    const f = faults.killInside(lab, "b", { at: { node: "node-1", match: { dir: "node->gw", textIncludes: "kill-me-now" } } });
    await f.prepare();
    expect((await tap.rules()).some((r) => r.action.type === "notify")).toBe(true);
    const serverP = new Promise<WebSocket>((r) => waiters.push(r));
    const client = new WebSocket(`ws://127.0.0.1:${tapServer.ready.listen}/`, { perMessageDeflate: false });
    await once(client, "open");
    const server = await serverP;
    const got = new Promise<string>((r) => server.once("message", (m) => r(m.toString())));
    client.send("not this one");
    expect(await got).toBe("not this one");
    expect((await state("b")).Running).toBe(true); // nothing fires before its frame
    const sentAt = Date.now();
    client.send("kill-me-now");
    const inj = await f.inject();
    const d = inj.detail as { landedAt: number; trigger: { seq: number; t: number }; frameToLandedMs: number };
    const rule = (await tap.rules()).find((r) => r.action.type === "notify")!;
    expect(d.trigger.seq).toBe(rule.firstFired!.seq);
    expect(d.trigger.t).toBeGreaterThanOrEqual(sentAt);
    expect(d.landedAt).toBeGreaterThanOrEqual(d.trigger.t);
    expect(d.frameToLandedMs).toBe(d.landedAt - d.trigger.t);
    expect((await state("b")).Running).toBe(false);
    const steps = f.timeline.of(f.id).map((e) => e.step);
    expect(steps.indexOf("fired")).toBeLessThan(steps.indexOf("landed"));
    client.terminate();
    await f.heal();
    expect((await state("b")).Running).toBe(true);
    expect(await tap.rule(rule.id)).toBeUndefined();
    expect(await killers()).toBe(0);
  });

  it("armed but never triggered: heal removes the rule and the killer, the member was never touched", async () => {
    const lab = Object.assign(Object.create(bed) as Testbed, { tap: () => tap });
    const startedAt = (await state("b")).StartedAt;
    const f = faults.killInside(lab, "b", { at: { node: "node-1", match: { textIncludes: "never-sent" } } });
    await f.prepare();
    await f.heal();
    expect((await tap.rules()).filter((r) => r.action.type === "notify")).toEqual([]);
    expect(await killers()).toBe(0);
    expect((await state("b")).StartedAt).toBe(startedAt);
  });
});
