// The engine is the lab's (issue "A verdict a maintainer can act on", item 5): when the Docker
// engine dies under a running scenario, the verdict is unknown with the engine named as the
// reason, never OpenClaw's fail; the run still prints its table and exits 3; and once the engine
// is back, what the dead run left on it is gone after the next run's start (`fleetlab prune`
// does what a run's start does). Shown on a second engine of its own (lab/host/engine2.sh, its own
// name, so a user's `make engine2` is never touched): its dockerd is SIGKILLed while `smoke` runs
// there. The lab runs inside that engine's network namespace (its containers are reachable only
// from there); the images are copied from the first engine (FLEETLAB_IMAGES_FROM), not built.
import { execFile, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readRunRecord } from "../evidence/run.ts";
import { ROOT, STATE } from "../core/paths.ts";

const run = promisify(execFile);
const NAME = "fleetlab-engine2-lost";
const SOCK = `unix:///run/${NAME}.sock`;
const root = process.getuid?.() === 0;
const env2 = { ...process.env, FLEETLAB_ENGINE2_NAME: NAME };

const engine2 = (cmd: "start" | "stop") => run("bash", ["lab/host/engine2.sh", cmd], { cwd: ROOT, env: env2 });
const dockerdPid = () => Number(fs.readFileSync(`/run/${NAME}.pid`, "utf8").trim());

/** What of run `runId` the engine shows: containers, networks, volumes. */
async function leftOf(runId: string): Promise<string[]> {
  const f = ["--filter", `label=fleetlab.run=${runId}`];
  const out: string[] = [];
  for (const [what, args] of [
    ["container", ["ps", "-aq", ...f]],
    ["network", ["network", "ls", "-q", ...f]],
    ["volume", ["volume", "ls", "-q", ...f]],
  ] as const) {
    const { stdout } = await run("docker", ["-H", SOCK, ...args]);
    for (const id of stdout.split("\n").filter(Boolean)) out.push(`${what} ${id}`);
  }
  return out;
}

/** `fleetlab <args>` inside engine2's namespace, on engine2; resolves with its exit and output. */
function lab(args: string[], extra: Record<string, string>, onOutput?: (all: string) => void): Promise<{ code: number | null; output: string }> {
  const pinned = path.join(ROOT, "node_modules", ".bin", "node");
  const node = fs.existsSync(pinned) ? fs.realpathSync(pinned) : process.execPath;
  const child = spawn("ip", ["netns", "exec", NAME, node, "scenarios/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, DOCKER_HOST: SOCK, FLEETLAB_QUIET: "", ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  // The whole output so far, not the chunk: a line may arrive in two chunks.
  const onData = (d: Buffer) => {
    output += d.toString();
    onOutput?.(output);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

describe.skipIf(!root)("the engine is the lab's", () => {
  it("engine2's dockerd killed under a running scenario: unknown naming the engine, exit 3, nothing left once the engine is back", { timeout: 900_000 }, async () => {
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-engine-lost-"));
    const extra = { FLEETLAB_STATE: state, FLEETLAB_IMAGES_FROM: process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock", FLEETLAB_CLEANUP_TIMEOUT_S: "10" };
    try {
      await engine2("start");
      let killedAt = 0;
      const r = await lab(["run", "smoke"], extra, (all) => {
        // The scenario is under way (its lab is up and paired): the engine dies now.
        if (!killedAt && /scenario smoke \.\.\./.test(all)) {
          killedAt = performance.now();
          setTimeout(() => process.kill(dockerdPid(), "SIGKILL"), 2000);
        }
      });
      const seconds = (performance.now() - killedAt) / 1000 - 2;
      // The run's own output, for a reader of a failure (the run folder goes with the temp state).
      fs.mkdirSync(STATE, { recursive: true });
      fs.writeFileSync(path.join(STATE, "engine-lost.log"), r.output);
      expect(killedAt, `the scenario never started:\n${r.output.slice(-3000)}`).toBeGreaterThan(0);
      // The images come from the first engine: npm and the registry are never asked (this
      // namespace has no way out; each ask used to wait 60 s for npm to give up).
      expect(r.output).not.toMatch(/asking npm/);
      expect(r.code, r.output.slice(-3000)).toBe(3);
      // The verdict table is printed, and the run's record says unknown with the engine as its reason.
      expect(r.output).toMatch(/UNKNOWN/);
      const runId = /fleetlab run (\S+) /.exec(r.output)?.[1];
      expect(runId).toBeTruthy();
      const rec = readRunRecord(path.join(state, "runs", runId!, "run.json"));
      const smoke = rec.scenarios.find((s) => s.name === "smoke");
      expect(smoke?.verdict).toBe("unknown");
      expect(smoke?.detail ?? "").toMatch(/Docker engine/);
      process.stderr.write(`engine-lost: the run exited ${r.code} ${seconds.toFixed(1)} s after the kill: ${smoke?.detail?.slice(0, 200)}\n`);

      // The engine comes back with the dead run's containers on it; the next start removes them.
      await engine2("start");
      const pruned = await lab(["prune"], extra);
      expect(pruned.code, pruned.output).toBe(0);
      expect(await leftOf(runId!)).toEqual([]);
    } finally {
      await engine2("stop").catch(() => undefined);
      // The SIGKILLed dockerd never unmounted its data root (it bind-mounts it over itself): a
      // mount left there makes the removal fail with EBUSY (seen: a fresh-clone make test).
      // Unmount what is left under it, innermost first, then remove it.
      const root = `/var/lib/${NAME}`;
      const mounts = fs.readFileSync("/proc/mounts", "utf8").split("\n").map((l) => l.split(" ")[1] ?? "").filter((m) => m === root || m.startsWith(`${root}/`));
      for (const m of mounts.reverse()) spawnSync("umount", ["-l", m]);
      fs.rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 500 });
      fs.rmSync(state, { recursive: true, force: true });
    }
  });
});
