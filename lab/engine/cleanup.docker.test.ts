// Clean-up as a user meets it: `fleetlab up` interrupted (Ctrl-C / SIGTERM) removes its own
// lab; `fleetlab up` killed outright leaves its lab, and the next prune removes all of it.
import { spawn, execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BUILD_CONTAINER_PREFIX, leftovers, procStat } from "./cleanup.ts";
import { ensureBaseImage } from "./images.ts";
import { docker } from "./docker.ts";
import { ROOT } from "../core/paths.ts";

const run = promisify(execFile);
// One process, as `npm run fleetlab` runs it (scenarios/fleetlab.mjs imports main.ts in its own process), so signals reach the lab.
const cli = (...args: string[]) => [process.execPath, ["scenarios/main.ts", ...args]] as const;
const env = { ...process.env, NODES: "0", FLEETLAB_QUIET: "1" };

/** Start `fleetlab up` on a gateway-only topology and resolve once it says it is up. */
function up(): Promise<{ child: ReturnType<typeof spawn>; runId: string }> {
  // Its own process group, so a signal reaches it the way a terminal's Ctrl-C or a CI job
  // kill would.
  const child = spawn(...cli("up"), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /is up \(run (\S+);/.exec(out);
      if (m) resolve({ child, runId: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`fleetlab up exited (${code}) before it was up:\n${out}\n${err}`)));
  });
}

const exited = (child: ReturnType<typeof spawn>) => new Promise<number | null>((r) => child.on("exit", (code, sig) => r(code ?? (sig ? 128 : null))));

describe("clean-up", () => {
  it("Ctrl-C on a running lab removes every container, network and volume it made", { timeout: 120_000 }, async () => {
    const { child, runId } = await up();
    expect((await leftovers({ run: runId })).length).toBeGreaterThanOrEqual(4); // model, git, gateway, network, volume
    const done = exited(child);
    process.kill(-child.pid!, "SIGINT");
    expect(await done).toBe(130);
    expect(await leftovers({ run: runId })).toEqual([]);
  });

  it("Ctrl-C while bring-up is still waiting for the gateway removes everything too, and exits 130", { timeout: 120_000 }, async () => {
    const child = spawn(...cli("up"), { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err += d));
    const done = exited(child);
    // The gateway's container exists (its /readyz wait is under way): this run's, by its pid label.
    const filters = { label: [`fleetlab.pid=${child.pid}`, "fleetlab.alias=gateway"] };
    let runId: string | undefined;
    for (let i = 0; i < 600 && !runId; i++) {
      runId = (await docker().listContainers({ all: true, filters }))[0]?.Labels["fleetlab.run"];
      if (!runId) await new Promise((r) => setTimeout(r, 100));
    }
    expect(runId, `no gateway container of pid ${child.pid} appeared:\n${err}`).toBeDefined();
    process.kill(-child.pid!, "SIGINT");
    expect(await done).toBe(130);
    expect(err).not.toMatch(/\n\s+at /); // no stack trace for an interrupted bring-up
    expect(await leftovers({ run: runId })).toEqual([]);
  });

  it("a package image's build container whose owner was killed is removed by the next prune; a live owner's stays", { timeout: 120_000 }, async () => {
    const base = await ensureBaseImage();
    const me = procStat(process.pid)!;
    const deadName = `${BUILD_CONTAINER_PREFIX}${2 ** 22 + 7}-${me.start}-${Math.random().toString(16).slice(2, 8)}`;
    // Owned by a live process that is not the pruning one: this test's own process.
    const liveName = `${BUILD_CONTAINER_PREFIX}${process.pid}-${me.start}-${Math.random().toString(16).slice(2, 8)}`;
    const d = docker();
    const dead = await d.createContainer({ name: deadName, Image: base.tag, Cmd: ["true"], HostConfig: { NetworkMode: "none" } });
    const live = await d.createContainer({ name: liveName, Image: base.tag, Cmd: ["true"], HostConfig: { NetworkMode: "none" } });
    try {
      const { stdout } = await run(...cli("prune"), { cwd: ROOT, env });
      expect(stdout).toMatch(/removed/);
      await expect(dead.inspect()).rejects.toThrow(/no such container/i);
      expect((await live.inspect()).Name).toBe(`/${liveName}`);
    } finally {
      await dead.remove({ force: true }).catch(() => {});
      await live.remove({ force: true }).catch(() => {});
    }
  });

  it("a SIGKILLed run's leftovers are removed by the next prune", { timeout: 120_000 }, async () => {
    const { child, runId } = await up();
    const done = exited(child);
    process.kill(-child.pid!, "SIGKILL");
    await done;
    const left = await leftovers({ run: runId });
    expect(left.some((l) => l.startsWith("container"))).toBe(true);
    const { stdout } = await run(...cli("prune"), { cwd: ROOT, env });
    expect(stdout).toMatch(/removed [1-9]\d* containers, [1-9]\d* networks, [1-9]\d* volumes/);
    expect(await leftovers({ run: runId })).toEqual([]);
  });

  it("a run SIGKILLed and pruned at once (its process still a zombie) is removed", { timeout: 120_000 }, async () => {
    // sh starts `fleetlab up` and execs into sleep, which never reaps it: killed, the owner
    // stays a zombie, as it does for a moment when PID 1 reaps late.
    const [node, args] = cli("up");
    const sh = spawn("sh", ["-c", `${[node, ...args].map((a) => `'${a}'`).join(" ")} & echo "pid $!"; exec sleep 600`], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    sh.stdout!.on("data", (d: Buffer) => (out += d));
    try {
      let m: RegExpExecArray | null = null;
      for (let i = 0; i < 1200 && !(m = /is up \(run (\S+);/.exec(out)); i++) await new Promise((r) => setTimeout(r, 100));
      expect(m, out).not.toBeNull();
      const runId = m![1]!;
      const pid = Number(/pid (\d+)/.exec(out)![1]);
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 100 && procStat(pid)?.state !== "Z"; i++) await new Promise((r) => setTimeout(r, 20));
      expect(procStat(pid)?.state).toBe("Z");
      const { stdout } = await run(...cli("prune"), { cwd: ROOT, env });
      expect(stdout).toMatch(/removed [1-9]\d* containers, [1-9]\d* networks, [1-9]\d* volumes/);
      expect(await leftovers({ run: runId })).toEqual([]);
    } finally {
      process.kill(-sh.pid!, "SIGKILL");
    }
  });
});
