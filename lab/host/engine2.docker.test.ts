// The second engine leaves the host as it found it: `lab/host/engine2.sh` runs its dockerd in a
// network namespace of its own, so the host's firewall (and the first engine's rules in it)
// reads the same after starts and stops, a failing start included, and nothing of it is left.
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";

const run = promisify(execFile);
// A name of its own, so a user's `make engine2` is never touched by the test.
const NAME = "fleetlab-engine2-test";
const env = { ...process.env, FLEETLAB_ENGINE2_NAME: NAME };
const root = process.getuid?.() === 0;

/** The host's tables as iptables-save prints them, without its dated comments and counters. */
async function hostFirewall(): Promise<string> {
  const { stdout } = await run("iptables-save", []);
  return stdout
    .split("\n")
    .filter((l) => !l.startsWith("#"))
    .map((l) => l.replace(/\[\d+:\d+\]/, ""))
    .join("\n");
}

async function engine2(cmd: "start" | "stop", extra: Record<string, string> = {}): Promise<{ code: number; err: string }> {
  try {
    const { stderr } = await run("bash", ["lab/host/engine2.sh", cmd], { cwd: ROOT, env: { ...env, ...extra } });
    return { code: 0, err: stderr };
  } catch (e) {
    const x = e as { code?: number; stderr?: string };
    return { code: x.code ?? -1, err: x.stderr ?? String(e) };
  }
}

/** What of the test engine is left: its namespace, a process named after it, its socket answering. */
async function leftOf(): Promise<string[]> {
  const left: string[] = [];
  const ns = await run("ip", ["netns", "list"]);
  if (ns.stdout.split("\n").some((l) => l.split(" ")[0] === NAME)) left.push(`network namespace ${NAME}`);
  const ps = await run("ps", ["-eo", "pid,args"]);
  for (const l of ps.stdout.split("\n")) if (l.includes(`/run/${NAME}`) && !l.includes("ps -eo")) left.push(`process ${l.trim()}`);
  return left;
}

describe.skipIf(!root)("engine2 and the host's firewall", () => {
  it("three starts and stops, one start failing, leave iptables-save identical and nothing running", { timeout: 240_000 }, async () => {
    const before = await hostFirewall();
    try {
      for (const round of [1, 2, 3]) {
        // The second start is made to fail: it gives the engine no time to answer.
        const failing = round === 2;
        const started = await engine2("start", failing ? { FLEETLAB_ENGINE2_WAIT_S: "0" } : {});
        if (failing) {
          expect(started.code, started.err).toBe(2);
          expect(started.err).toMatch(/did not answer within 0 s/);
          expect(await leftOf(), "a failed start leaves nothing").toEqual([]);
        } else {
          expect(started.code, started.err).toBe(0);
          const v = await run("docker", ["-H", `unix:///run/${NAME}.sock`, "version", "--format", "{{.Server.Version}}"]);
          expect(v.stdout.trim()).not.toBe("");
          // Its rules are in its own namespace; the host's are as they were while it runs.
          const inside = await run("ip", ["netns", "exec", NAME, "iptables", "-S"]);
          expect(inside.stdout).toMatch(/-N DOCKER\b/);
          expect(await hostFirewall()).toBe(before);
        }
        const stopped = await engine2("stop");
        expect(stopped.code, stopped.err).toBe(0);
        expect(await leftOf()).toEqual([]);
        expect(await hostFirewall(), `host firewall after round ${round}`).toBe(before);
      }
    } finally {
      await engine2("stop");
      rmSync(`/var/lib/${NAME}`, { recursive: true, force: true });
    }
  });
});
