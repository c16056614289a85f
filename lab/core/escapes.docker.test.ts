// The run survives its scenarios, with real labs: the CLI (lab/testing/escaping-run.ts) runs
// scenarios whose errors escape them, and one where an error escapes the lab itself.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { docker, LABEL_RUN } from "../engine/docker.ts";
import { ROOT, RUNS } from "./paths.ts";
import { readRunRecord } from "../evidence/run.ts";

/** A gateway and the model only: the escapes need a lab, not a fleet. */
const SMALL = JSON.stringify({ nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [] } });

async function cli(extraEnv: Record<string, string>, onStderr?: (text: string) => void) {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../testing/escaping-run.ts", import.meta.url)), "run"], {
    cwd: ROOT,
    env: { ...process.env, FLEETLAB_TOPOLOGY: SMALL, FLEETLAB_LANES: "1", FLEETLAB_QUIET: "1", ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => {
    err += d;
    onStderr?.(err);
  });
  const code = await new Promise<number | null>((r) => child.on("exit", r));
  const runId = /fleetlab run (\S+)/.exec(out)?.[1];
  const left = runId ? await docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } }) : [];
  const nets = runId ? await docker().listNetworks({ filters: { label: [`${LABEL_RUN}=${runId}`] } }) : [];
  return { code, out, err, runId, left: [...left.map((c) => c.Names[0]), ...nets.map((n) => n.Name)] };
}

describe("a run survives its scenarios (real labs)", () => {
  it("errors escaping two scenarios are their verdicts; the run goes on to the third and its table; nothing is left", { timeout: 300_000 }, async () => {
    const r = await cli({});
    expect(r.runId, r.out + r.err).toBeDefined();
    expect(r.out).toMatch(/escape-floating\s+FAIL/);
    expect(r.out).toMatch(/escape-timer\s+FAIL/);
    expect(r.out).toMatch(/escape-after\s+PASS/);
    expect(r.out + r.err).toMatch(/an error escaped the scenario while it ran \(uncaught exception, nobody awaited it\): thrown from a timer of escape-timer/);
    expect(r.out + r.err).toMatch(/an error escaped the scenario while it ran \(unhandled rejection, nobody awaited it\)/);
    expect(r.code).toBe(1); // two scenarios failed: the verdicts' exit code, not a crash's
    expect(r.left).toEqual([]);
  });

  it("an error that escapes the lab itself: labs removed, the table so far, exit 3", { timeout: 300_000 }, async () => {
    const r = await cli({ ESCAPE_LAB_BUG: "1" });
    expect(r.err).toContain("an error escaped the lab itself (uncaught exception), a bug of fleetlab's");
    expect(r.out).toMatch(/verdicts so far \(the run ended early; not run: [^)]*escape-after/);
    expect(r.code).toBe(3);
    expect(r.left).toEqual([]);
    // Ended early, its run.json still says when, and what the machine and the lab's process did.
    const rec = readRunRecord(path.join(RUNS, r.runId!, "run.json"));
    expect(rec.endedAt).toBeDefined();
    expect(rec.stalls).toMatchObject({ over250ms: expect.any(Number), delayMs: { p99: expect.any(Number) } });
  });

  // Needs root to mount a tmpfs (CI runs as root).
  it.skipIf(process.getuid?.() !== 0)("a run folder on a disk that fills up mid-scenario: exit 3 saying what filled up, nothing left, run.json valid", { timeout: 300_000 }, async () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", state]);
    try {
      // Once the scenario writes its log, fill what is left of the run folder's disk, as another
      // writer on a shared disk would (dd stops at the full disk: that is the point).
      let filled = false;
      const filler = setInterval(() => {
        if (filled) return;
        const runs = path.join(state, "runs");
        const log = fs.existsSync(runs) ? fs.readdirSync(runs).map((id) => path.join(runs, id, "scenarios", "keeps-logging", "scenario.log")).find((f) => fs.existsSync(f)) : undefined;
        if (!log) return;
        filled = true;
        try {
          execFileSync("dd", ["if=/dev/zero", `of=${path.join(state, "filler")}`, "bs=1M", "count=64"], { stdio: "ignore" });
        } catch {
          /* full */
        }
      }, 200);
      const r = await cli({ ESCAPE_DISK_FULL: "1", FLEETLAB_STATE: state }).finally(() => clearInterval(filler));
      expect(filled, r.err).toBe(true);
      expect(r.err).toMatch(/the lab could not write its evidence \(ENOSPC: no space left on device, write(, writing \/\S+)?\)/);
      expect(r.err).toContain(state); // names where: a file in the run folder
      expect(r.code).toBe(3);
      expect(r.left).toEqual([]);
      // run.json is whole and valid (written by temp file and rename): the last state that fitted.
      fs.rmSync(path.join(state, "filler"));
      const rec = readRunRecord(path.join(state, "runs", r.runId!, "run.json"));
      expect(rec.id).toBe(r.runId);
    } finally {
      execFileSync("umount", ["-l", state]);
      fs.rmSync(state, { recursive: true, force: true });
    }
  });
});
