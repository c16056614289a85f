// slowDisk on cheap containers: a writer in member b (write + fsync, each timed) is slowed by
// ~delayMs per call on the path while the fault is in effect, not beside the path, and is back to
// normal after heal; strace is attached to every thread meanwhile (TracerPid, read from the
// target itself) and detached after; the target never gets a capability.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { docker } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import { Testbed } from "../testing/testbed.ts";
import { waitFor } from "../core/wait.ts";
import { HEAL_SCRIPT, execIn, execOk } from "./helper.ts";
import { faults } from "./index.ts";

const WRITER_PORT = 7100;
const SLOW_DIR = "/var/lib/slowdisk";
const IN = `${SLOW_DIR}/data`;
const OUT = "/var/tmp/outside";
const DELAY_MS = 100;

// Answers GET /w?path=P&n=N: N rounds of write + fsync on P (opened once), each call timed.
const WRITER = `
const fs = require("node:fs"), http = require("node:http");
http.createServer((req, res) => {
  const u = new URL(req.url, "http://x");
  const p = u.searchParams.get("path"), n = Number(u.searchParams.get("n") || 5);
  const out = { write: [], fsync: [], pid: process.pid };
  const fd = fs.openSync(p, "a");
  for (let i = 0; i < n; i++) {
    let t = performance.now(); fs.writeSync(fd, "x".repeat(64)); out.write.push(performance.now() - t);
    t = performance.now(); fs.fsyncSync(fd); out.fsync.push(performance.now() - t);
  }
  fs.closeSync(fd);
  res.end(JSON.stringify(out));
}).listen(${WRITER_PORT}, "0.0.0.0", () => console.log("writer listening"));
`;

let bed: Testbed;

beforeAll(async () => {
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-slow-disk-")) });
  bed = await Testbed.up(run, ["a", "b"]);
  const b = bed.member("b").id;
  await execOk(b, ["sh", "-c", `mkdir -p ${SLOW_DIR} && : > ${IN} && cat > /var/tmp/writer.js`], { stdin: WRITER });
  // Started before any fault, so the fault finds it among b's processes.
  await execOk(b, ["sh", "-c", "node /var/tmp/writer.js > /var/tmp/writer.log 2>&1 &"]);
  await waitFor("the writer in b to listen", () => fetch(`http://${bed.member("b").ip}:${WRITER_PORT}/w?path=${OUT}&n=1`).then((r) => r.ok, () => false), { timeoutMs: 10_000, intervalMs: 50 });
});
afterEach(async () => {
  await bed.teardown.drain();
});
afterAll(async () => {
  await bed?.down();
});

interface Calls {
  write: number[];
  fsync: number[];
  pid: number;
}
const writes = async (p: string, n = 5): Promise<Calls> => (await fetch(`http://${bed.member("b").ip}:${WRITER_PORT}/w?path=${encodeURIComponent(p)}&n=${n}`)).json() as Promise<Calls>;
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const perCall = (c: Calls) => ({ write: +median(c.write).toFixed(2), fsync: +median(c.fsync).toFixed(2) });

/** TracerPid of every thread of b's node processes (the echo server and the writer), as b itself sees them. */
async function tracerPids(): Promise<Record<string, number>> {
  const script = `for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null | grep -q '^node ' || continue; for t in $d/task/*; do echo \${d#/proc/}/\${t##*/} $(sed -n 's/^TracerPid:[[:space:]]*//p' $t/status 2>/dev/null); done; done`;
  const r = await execOk(bed.member("b").id, ["sh", "-c", script]);
  const out: Record<string, number> = {};
  for (const l of r.stdout.split("\n").filter(Boolean)) {
    const [task, tracer] = l.split(" ");
    if (tracer) out[task!] = Number(tracer);
  }
  return out;
}
const helpers = async () => (await docker().listContainers({ all: true, filters: { label: [`fleetlab.lab=${bed.id}`, "fleetlab.kind=fault-helper"] } })).length;

describe("slowDisk", () => {
  it("delays write and fsync on the path by ~delayMs per call, not beside it, and not after heal; b gets no capability", async () => {
    const before = { in: perCall(await writes(IN)), out: perCall(await writes(OUT)) };
    const writerPid = (await writes(OUT, 1)).pid;

    const f = faults.slowDisk(bed, "b", { path: SLOW_DIR, delayMs: DELAY_MS });
    const inj = await f.inject();
    const d = inj.detail as { path: string; delayMs: number; syscalls: string[]; tracer: number; pids: number[]; tracedThreads: number; matchedPaths: number };
    expect([d.path, d.delayMs]).toEqual([SLOW_DIR, DELAY_MS]);
    expect(d.syscalls).toEqual(expect.arrayContaining(["write", "fsync"]));
    expect(d.pids).toContain(writerPid);
    expect(d.matchedPaths).toBe(2); // the directory and its one file
    // The timeline says what was slowed, and by how much.
    const injected = f.timeline.of(f.id).find((e) => e.step === "inject")!;
    expect(injected.detail).toMatchObject({ path: SLOW_DIR, delayMs: DELAY_MS, syscalls: expect.arrayContaining(["fsync"]) });

    // Every thread of b's processes (but init) is traced by strace, as b itself sees it.
    const traced = await tracerPids();
    expect(Object.keys(traced).length).toBeGreaterThan(2);
    expect(new Set(Object.values(traced))).toEqual(new Set([d.tracer]));

    // No capability for the target; the helper has SYS_PTRACE and shares only its PID namespace.
    const bInfo = await docker().getContainer(bed.member("b").id).inspect();
    expect(bInfo.HostConfig.CapAdd ?? []).toEqual([]);
    expect(bInfo.HostConfig.Privileged).toBe(false);
    const hInfo = await docker().getContainer(f.helperId!).inspect();
    expect(hInfo.HostConfig.CapAdd).toEqual(["SYS_PTRACE"]);
    expect(hInfo.HostConfig.PidMode).toBe(`container:${bed.member("b").id}`);
    expect(hInfo.HostConfig.NetworkMode).toBe("none");

    const during = { in: perCall(await writes(IN)), out: perCall(await writes(OUT)), created: perCall(await writes(`${SLOW_DIR}/created-after-inject`)) };
    for (const k of ["write", "fsync"] as const) {
      expect(during.in[k]).toBeGreaterThanOrEqual(DELAY_MS * 0.95);
      expect(during.in[k]).toBeLessThan(DELAY_MS * 1.8);
      expect(during.out[k]).toBeLessThan(DELAY_MS * 0.2);
      // -P matches exact paths: a file created under the directory after inject is not slowed.
      expect(during.created[k]).toBeLessThan(DELAY_MS * 0.2);
    }

    const healed = await f.heal();
    expect((healed.detail as { delayedCalls: number }).delayedCalls).toBeGreaterThanOrEqual(10); // 5 writes + 5 fsyncs
    const after = { in: perCall(await writes(IN)), out: perCall(await writes(OUT)) };
    for (const k of ["write", "fsync"] as const) expect(after.in[k]).toBeLessThan(DELAY_MS * 0.2);
    expect(Object.values(await tracerPids()).every((t) => t === 0)).toBe(true);
    expect((await writes(OUT, 1)).pid).toBe(writerPid); // the same process went on, untraced
    expect(await helpers()).toBe(0);
    // What the report quotes: median ms per call.
    console.log(JSON.stringify({ slowDisk: { delayMs: DELAY_MS, before, during, after, injectToInEffectMs: Math.round(inj.totalMs), inEffectMs: Math.round(inj.inEffectMs), prepareMs: Math.round(inj.prepareMs ?? 0), healToHealedMs: Math.round(healed.totalMs), tracedThreads: d.tracedThreads } }));
  });

  it("the heal script is safe to run again and again (as prune runs it), and heal() after it still finishes", async () => {
    const f = faults.slowDisk(bed, "b", { path: IN, delayMs: 50, syscalls: ["fsync"] });
    await f.inject();
    expect(perCall(await writes(IN, 3)).fsync).toBeGreaterThanOrEqual(45);
    expect(perCall(await writes(IN, 3)).write).toBeLessThan(10); // write is not in the set
    for (let i = 0; i < 2; i++) expect((await execIn(f.helperId!, ["bash", HEAL_SCRIPT])).exitCode).toBe(0);
    expect(Object.values(await tracerPids()).every((t) => t === 0)).toBe(true);
    expect(perCall(await writes(IN, 3)).fsync).toBeLessThan(10);
    const h = await f.heal();
    expect(h.detail).toMatchObject({ delayedCalls: 6 }); // the fsyncs of the two rounds while in effect
    await f.heal(); // and once more: nothing left to do
    expect(await helpers()).toBe(0);
  });

  it("the helper removed under a live fault (strace SIGKILLed): the kernel detaches b, which goes on untraced", async () => {
    const f = faults.slowDisk(bed, "b", { path: IN, delayMs: 50 });
    await f.inject();
    const pid = (await writes(OUT, 1)).pid;
    await docker().getContainer(f.helperId!).remove({ force: true });
    await waitFor("b's threads untraced", async () => Object.values(await tracerPids()).every((t) => t === 0), { timeoutMs: 5_000, intervalMs: 20 });
    const c = await writes(IN, 3);
    expect(c.pid).toBe(pid);
    expect(perCall(c).fsync).toBeLessThan(10);
    const h = await f.heal();
    expect(h.detail).toMatchObject({ vanished: expect.stringMatching(/helper is gone/) });
    expect(await helpers()).toBe(0);
  });
});
