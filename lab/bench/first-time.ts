// The first-time set-up as a new user meets it, timed in `make bench` without touching what this
// machine has cached: `fleetlab run smoke` as a child process with a cache folder of its own
// (FLEETLAB_CACHE: no npm package, no capability probe, no snapshot of paired state, no operator
// identity) and images of their own (FLEETLAB_IMAGE_SALT: every image built again under new tags),
// and a state folder of its own (its run folder). Against its baseline in the same bench: the
// same command with this machine's caches and images (warm). What it does not cover: `npm ci`
// of the repository (the bench already runs from an installed clone) and the engine's own
// install. The salted images and the folders are removed after.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { docker } from "../engine/docker.ts";
import { CACHE, ROOT } from "../core/paths.ts";
import { readRunRecord } from "../evidence/run.ts";
import { environment } from "../core/settings.ts";

/** Issue 36's goal: engine running, no fleetlab images, fresh clone: the smoke verdict in at most 3 min. */
export const FIRST_TIME_TARGET_S = 180;

export interface SmokeTiming {
  seconds: number;
  exitCode: number;
  /** The smoke scenario's verdict in the child's run.json, or why there is none. */
  verdict: string;
  /** The child's set-up step (images and package), as its output said, when it did. */
  setUpS?: number;
}

/** `fleetlab run smoke` in a child process with `env` beside this one's, timed to its exit. */
export async function timeSmoke(env: NodeJS.ProcessEnv, state: string, log?: (s: string) => void): Promise<SmokeTiming> {
  const t = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, "scenarios", "main.ts"), "run", "smoke"], { cwd: ROOT, env: { ...environment(), ...env, FLEETLAB_STATE: state, FLEETLAB_QUIET: "0" /* the bench quiets its own lab; the child's lines are read here */ }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const take = (b: Buffer) => {
    const s = b.toString();
    out += s;
    for (const line of s.split("\n")) if (/set-up: .*done in|scenario smoke:/.test(line)) log?.(`first-time: ${line.trim()}`);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const exitCode = await new Promise<number>((resolve) => {
    child.on("error", (err) => {
      out += `\ncould not start: ${err.message}\n`;
      resolve(127);
    });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const seconds = (performance.now() - t) / 1000;
  const setUp = /set-up: images for openclaw@\S+: done in ([\d.]+) s/.exec(out)?.[1];
  return { seconds, exitCode, verdict: smokeVerdict(state), ...(setUp ? { setUpS: Number(setUp) } : {}) };
}

/** The smoke verdict in the newest run folder under `state`, or why there is none. */
function smokeVerdict(state: string): string {
  try {
    const runs = path.join(state, "runs");
    const newest = fs.readdirSync(runs).filter((d) => /^\d{8}-/.test(d)).sort().pop();
    if (!newest) return "no run folder";
    return readRunRecord(path.join(runs, newest, "run.json")).scenarios.find((s) => s.name === "smoke")?.verdict ?? "no smoke row";
  } catch (err) {
    return `unreadable (${(err as Error).message.split("\n")[0]})`;
  }
}

/** The first-time set-up (empty cache, images of its own) and the warm baseline, each to the smoke verdict. */
export async function benchFirstTime(log?: (s: string) => void): Promise<{ first: SmokeTiming; warm: SmokeTiming }> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-first-"));
  const before = await fleetlabTags();
  try {
    log?.("first-time: fleetlab run smoke with an empty cache and images of its own ...");
    const first = await timeSmoke({ FLEETLAB_CACHE: path.join(scratch, "cache"), FLEETLAB_IMAGE_SALT: `-first-${Date.now()}` }, path.join(scratch, "first"), log);
    log?.("first-time: the same, warm (this machine's caches and images) ...");
    const warm = await timeSmoke({ FLEETLAB_CACHE: CACHE }, path.join(scratch, "warm"), log); // the machine's cache, not the state folder's
    return { first, warm };
  } finally {
    // The tags the first-time run made (by tag, never by id: an image this machine had keeps its tags).
    const made = [...(await fleetlabTags())].filter((t) => !before.has(t)).reverse();
    for (const tag of made) await docker().getImage(tag).remove().catch(() => {});
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Every fleetlab/* tag the engine has, oldest image first. */
async function fleetlabTags(): Promise<Set<string>> {
  const images = await docker().listImages({ filters: { reference: ["fleetlab/*"] } });
  return new Set(images.sort((a, b) => a.Created - b.Created).flatMap((i) => (i.RepoTags ?? []).filter((t) => t.startsWith("fleetlab/"))));
}
