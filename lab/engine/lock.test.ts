import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lockFile, tryLock, withLock } from "./lock.ts";
import { ROOT } from "../core/paths.ts";
import { sleep } from "../core/wait.ts";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-lock-"));

describe("one build at a time, whoever asks", () => {
  it("callers in one process (two lanes) run one after another, and the second finds the work done", async () => {
    const dir = tmp();
    let running = 0;
    let most = 0;
    let builds = 0;
    let built = false;
    const build = () =>
      withLock("image-fleetlab/base:abc", "building", async () => {
        running++;
        most = Math.max(most, running);
        if (!built) {
          builds++;
          await sleep(50);
          built = true;
        }
        running--;
      }, { dir });
    await Promise.all([build(), build(), build()]);
    expect(most).toBe(1);
    expect(builds).toBe(1);
    expect(fs.readdirSync(dir)).toEqual([]); // released
  });

  it("a failed holder releases the lock; the next caller runs", async () => {
    const dir = tmp();
    await expect(withLock("k", "failing", async () => Promise.reject(new Error("npm failed")), { dir })).rejects.toThrow("npm failed");
    expect(await withLock("k", "next", async () => "ran", { dir })).toBe("ran");
  });

  it("another process holding it: this one waits until it is released", async () => {
    const dir = tmp();
    const file = lockFile("openclaw-2026.9.6", dir);
    const code = `import { withLock } from ${JSON.stringify(path.join(ROOT, "lab", "engine", "lock.ts"))};
      await withLock("openclaw-2026.9.6", "installing in a child", async () => { process.stdout.write("held\\n"); await new Promise((r) => setTimeout(r, 700)); }, { dir: ${JSON.stringify(dir)} });`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((r) => child.on("exit", r));
    let err = "";
    child.stderr!.on("data", (d) => (err += d));
    await new Promise<void>((resolve) => child.stdout!.on("data", () => resolve()));
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toMatchObject({ pid: child.pid, what: "installing in a child" });
    const t0 = performance.now();
    await withLock("openclaw-2026.9.6", "installing here", async () => {
      expect(fs.existsSync(file)).toBe(true); // ours now
      expect(JSON.parse(fs.readFileSync(file, "utf8")).pid).toBe(process.pid);
    }, { dir });
    expect(performance.now() - t0).toBeGreaterThan(300);
    expect(await exited, err).toBe(0);
  });

  it("a lock whose owner died (killed outright) is taken over at once", () => {
    const dir = tmp();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    const file = lockFile("image-x", dir);
    fs.writeFileSync(file, JSON.stringify({ pid: Number(dead), host: os.hostname(), what: "building image x", since: new Date().toISOString() }));
    expect(tryLock(file, "building image x again")).toEqual({ taken: true });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).pid).toBe(process.pid);
    // A live owner keeps it.
    expect(tryLock(file, "a third")).toMatchObject({ taken: false, owner: { pid: process.pid } });
  });
});
