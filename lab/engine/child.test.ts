// An interrupted set-up step leaves nothing running and no staging folder (lab/engine/child.ts).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runChild } from "./child.ts";

const alive = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
};

describe("set-up children", () => {
  it("SIGTERM during a build: the child's whole process group ends, the staging folder goes, exit 143", { timeout: 60_000 }, async () => {
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-staging-"));
    const child = spawn(process.execPath, [fileURLToPath(new URL("../testing/interrupted-build.ts", import.meta.url)), staging], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const ready = await new Promise<string>((resolve) => child.stdout!.on("data", (d: Buffer) => /ready/.test(String(d)) && resolve(String(d))));
    const shell = Number(/ready (\d+)/.exec(ready)![1]);
    // The shell's own child (sleep 120), in the same group.
    const grand = fs.readFileSync(`/proc/${shell}/task/${shell}/children`, "utf8").trim().split(/\s+/).map(Number).filter(Boolean);
    expect(grand.length).toBeGreaterThan(0);
    child.kill("SIGTERM");
    expect(await exited).toBe(143);
    await new Promise((r) => setTimeout(r, 300));
    expect([shell, ...grand].filter(alive)).toEqual([]);
    expect(fs.existsSync(staging)).toBe(false);
  });

  it("a failure says how the child ended and what it printed", async () => {
    const err = await runChild("bash", ["-c", "echo npm ERR! 404 no such package >&2; exit 1"], { timeout: 10_000, what: "npm install x" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 1, stderr: "npm ERR! 404 no such package\n" });
    const { processFailure } = await import("./images.ts");
    expect(processFailure(err)).toBe("exit 1:\nnpm ERR! 404 no such package");
    expect(processFailure(Object.assign(new Error("x"), { code: 1, stdout: "", stderr: "" }))).toBe("exit 1:\nx");
  });
});

describe("killProcessesIn (what a run killed outright left working in its staging folder)", () => {
  it("ends a process whose working directory is inside the folder, and leaves others alone", async () => {
    const { spawn } = await import("node:child_process");
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const { killProcessesIn } = await import("./child.ts");
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-staging-"));
    fs.mkdirSync(path.join(staging, "node_modules"));
    const inside = spawn("sleep", ["60"], { cwd: path.join(staging, "node_modules"), detached: true, stdio: "ignore" });
    const outside = spawn("sleep", ["60"], { cwd: os.tmpdir(), detached: true, stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((r) => inside.on("exit", (_c, sig) => r(sig)));
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(killProcessesIn(staging)).toEqual([inside.pid]);
      expect(await exited).toBe("SIGKILL");
      expect(() => process.kill(outside.pid!, 0)).not.toThrow();
    } finally {
      outside.kill("SIGKILL");
      fs.rmSync(staging, { recursive: true, force: true });
    }
  });
});
