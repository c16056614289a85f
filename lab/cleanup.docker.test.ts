// Clean-up as a user meets it: `fleetlab up` interrupted (Ctrl-C / SIGTERM) removes its own
// lab; `fleetlab up` killed outright leaves its lab, and the next prune removes all of it.
import { spawn, execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { leftovers } from "./cleanup.ts";
import { ROOT } from "./paths.ts";

const run = promisify(execFile);
// One process, as `npm run fleetlab` starts it (node --import tsx), so signals reach the lab.
const cli = (...args: string[]) => [process.execPath, ["--import", "tsx", "scenarios/main.ts", ...args]] as const;
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
});
