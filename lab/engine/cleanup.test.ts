// Clean-up that cannot be poisoned: an interrupt's teardown is never cut short by another exit,
// a SIGKILLed (zombie) or pid-reused owner reads as dead, and a network with stale endpoints
// is force-disconnected and retried, or named in one line with the fix.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BUILD_CONTAINER_PREFIX, buildOwnerGone, claimFolder, ENGINE_RESTART_FIX, ownerAlive, procStat, pruneScriptedFolders, removeNetwork, type RemovableNetwork } from "./cleanup.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an image build container's owner, from its name", () => {
  it("is gone when the pid in the name has no process, or another start time; alive for a live one", () => {
    const me = procStat(process.pid)!;
    const dead = 2 ** 22 + 7; // above pid_max's ceiling
    expect(buildOwnerGone(`/${BUILD_CONTAINER_PREFIX}${dead}-${me.start}-a1b2c3`)).toBe(true);
    expect(buildOwnerGone(`${BUILD_CONTAINER_PREFIX}1-${me.start + 12345}-a1b2c3`)).toBe(true); // pid 1 is alive, but not that start
    // The pruning process itself is never judged gone (its own build).
    expect(buildOwnerGone(`${BUILD_CONTAINER_PREFIX}${process.pid}-${me.start}-a1b2c3`)).toBe(false);
    const ppid = process.ppid;
    expect(buildOwnerGone(`${BUILD_CONTAINER_PREFIX}${ppid}-${procStat(ppid)!.start}-00ff00`)).toBe(false);
  });

  it("is never judged for a name that is not a build container's", () => {
    expect(buildOwnerGone("fleetlab-run-123-gateway")).toBe(false);
    expect(buildOwnerGone(`${BUILD_CONTAINER_PREFIX}abc-1-ff`)).toBe(false);
    expect(buildOwnerGone(`x${BUILD_CONTAINER_PREFIX}${2 ** 22 + 7}-1-ff`)).toBe(false);
  });
});

describe("owner liveness", () => {
  it("a SIGKILLed process not yet reaped (zombie) is dead, though kill(pid, 0) still reaches it", async () => {
    // sh starts a grandchild and execs into sleep, which never reaps it: killed, it stays a zombie.
    const parent = spawn("sh", ["-c", "sleep 300 & echo $!; exec sleep 300"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const [line] = (await once(parent.stdout!, "data")) as [Buffer];
      const pid = Number(line.toString().trim());
      const start = procStat(pid)!.start;
      expect(ownerAlive(pid, start)).toBe(true);
      process.kill(pid, "SIGKILL");
      let st = procStat(pid);
      for (let i = 0; i < 100 && st?.state !== "Z"; i++) (await sleep(20), (st = procStat(pid)));
      expect(st?.state).toBe("Z");
      expect(() => process.kill(pid, 0)).not.toThrow(); // what the old check went by
      expect(ownerAlive(pid, start)).toBe(false);
      expect(ownerAlive(pid)).toBe(false); // a label without a start time too
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("a live pid with another start time than recorded (pid reused) is not the owner", () => {
    const me = procStat(process.pid)!;
    expect(me.state).not.toBe("Z");
    expect(ownerAlive(process.pid, me.start)).toBe(true);
    expect(ownerAlive(process.pid, me.start + 1)).toBe(false);
  });

  it("a pid with no process is dead", () => {
    expect(ownerAlive(2 ** 22 + 7)).toBe(false); // above pid_max's ceiling
  });

  it("reads state and start time after a command name holding ') '", () => {
    const st = procStat(1, fileURLToPath(new URL("../testing/proc-fixture", import.meta.url)));
    expect(st).toEqual({ state: "S", start: 4242 });
  });
});

describe("scripted nodes' identity folders", () => {
  it("removes a dead owner's folder and an old ownerless one; keeps this process's, a young ownerless one and other names", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-prune-test-"));
    try {
      const mine = path.join(root, "fleetlab-run1-1-scripted");
      claimFolder(mine);
      const dead = path.join(root, "fleetlab-run2-1-scripted");
      fs.mkdirSync(dead);
      fs.writeFileSync(path.join(dead, "owner.json"), JSON.stringify({ pid: 999_999_999, host: os.hostname() }));
      const young = path.join(root, "fleetlab-run3-1-scripted");
      fs.mkdirSync(young);
      const old = path.join(root, "fleetlab-run4-1-scripted");
      fs.mkdirSync(old);
      fs.utimesSync(old, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
      const other = path.join(root, "something-else");
      fs.mkdirSync(other);
      expect(pruneScriptedFolders({ root })).toBe(2);
      expect(fs.readdirSync(root).sort()).toEqual(["fleetlab-run1-1-scripted", "fleetlab-run3-1-scripted", "something-else"]);
      expect(pruneScriptedFolders({ root, all: true })).toBe(2);
      expect(fs.readdirSync(root)).toEqual(["something-else"]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("removeNetwork", () => {
  const activeEndpoints = () =>
    Object.assign(new Error("(HTTP code 403) unexpected - error while removing network: network fleetlab-r-1 id 9f3c has active endpoints "), {
      statusCode: 403,
      json: { message: "error while removing network: network fleetlab-r-1 id 9f3c has active endpoints" },
    });

  function fakeNetwork(failures: number): RemovableNetwork & { removes: number; disconnects: { Container: string; Force: boolean }[] } {
    return {
      removes: 0,
      disconnects: [],
      async remove() {
        if (++this.removes <= failures) throw activeEndpoints();
      },
      async inspect() {
        return { Name: "fleetlab-r-1", Containers: { "5e1f00aa": { Name: "fleetlab-r-1-node-8" } } };
      },
      async disconnect(o) {
        this.disconnects.push(o);
      },
    };
  }

  it("force-disconnects every endpoint by id and by name, then removes it", async () => {
    const net = fakeNetwork(1);
    expect(await removeNetwork(net, "fleetlab-r-1", { alsoDisconnect: ["fleetlab-r-1-gateway"], delayMs: 1 })).toBeUndefined();
    expect(net.removes).toBe(2);
    expect(net.disconnects).toEqual([
      { Container: "5e1f00aa", Force: true },
      { Container: "fleetlab-r-1-node-8", Force: true },
      { Container: "fleetlab-r-1-gateway", Force: true },
    ]);
  });

  it("what the engine keeps refusing is named in one line with the fix, and nothing throws", async () => {
    const net = fakeNetwork(Infinity);
    const line = await removeNetwork(net, "fleetlab-r-1", { attempts: 3, delayMs: 1 });
    expect(net.removes).toBe(3);
    expect(line).toBe(`network fleetlab-r-1 could not be removed (HTTP 403: error while removing network: network fleetlab-r-1 id 9f3c has active endpoints): ${ENGINE_RESTART_FIX}`);
    expect(line).not.toContain("\n");
    expect(line).toMatch(/restart the Docker engine/);
  });

  it("a network already gone is fine", async () => {
    const gone: RemovableNetwork = {
      remove: async () => Promise.reject(Object.assign(new Error("no such network"), { statusCode: 404 })),
      inspect: async () => ({}),
      disconnect: async () => {},
    };
    expect(await removeNetwork(gone, "fleetlab-gone")).toBeUndefined();
  });
});

describe("interrupt", () => {
  it("an exit asked for while the interrupt's clean-up runs waits for it, and the signal's code wins", async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("../testing/interrupted-exit.ts", import.meta.url)), "800"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (d: Buffer) => (out += d));
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    while (!out.includes("ready")) await sleep(20);
    const t0 = performance.now();
    child.kill("SIGINT");
    await sleep(100);
    child.kill("SIGINT"); // a second Ctrl-C does not cut it short either
    const [code] = await exited;
    expect(out).toContain("cleaned");
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(750);
  });

  async function interrupted(teardownMs: number, env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [fileURLToPath(new URL("../testing/interrupted-exit.ts", import.meta.url)), String(teardownMs)], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => (out += d));
    child.stderr!.on("data", (d: Buffer) => (err += d));
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    while (!out.includes("ready")) await sleep(20);
    return { child, exited, out: () => out, err: () => err };
  }

  it("a second Ctrl-C after the notice ends it at once, naming what is left and who removes it", { timeout: 30_000 }, async () => {
    const p = await interrupted(20_000);
    p.child.kill("SIGINT");
    await sleep(1_300);
    const t0 = performance.now();
    p.child.kill("SIGINT");
    const [code] = await p.exited;
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(p.err()).toContain("Ctrl-C again to stop waiting");
    expect(p.err()).toMatch(/SIGINT again during the clean-up; exiting 130 without waiting\. Left: slow teardown\. The next run \(or 'make prune'\) removes/);
    expect(p.out()).not.toContain("cleaned");
  });

  it("a clean-up that does not finish in its time (a hung engine) is cut short, naming what is left", { timeout: 30_000 }, async () => {
    const p = await interrupted(20_000, { FLEETLAB_CLEANUP_TIMEOUT_S: "1" });
    const t0 = performance.now();
    p.child.kill("SIGTERM");
    const [code] = await p.exited;
    expect(code).toBe(143);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(p.err()).toMatch(/the clean-up did not finish within 1 s \(the Docker engine may not be answering\); exiting 143 without waiting\. Left: slow teardown\./);
  });
});
