// The run survives its scenarios, with real labs: the CLI (lab/testing/escaping-run.ts) runs
// scenarios whose errors escape them, and one where an error escapes the lab itself.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { docker, LABEL_RUN } from "./docker.ts";
import { ROOT } from "./paths.ts";

/** A gateway and the model only: the escapes need a lab, not a fleet. */
const SMALL = JSON.stringify({ nodes: { count: 0 }, git: { enabled: false }, mcp: { servers: [] } });

async function cli(extraEnv: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./testing/escaping-run.ts", import.meta.url)), "run"], {
    cwd: ROOT,
    env: { ...process.env, TOPOLOGY: SMALL, LANES: "1", FLEETLAB_QUIET: "1", ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
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
  });
});
