// A set-up child process (an image build, an npm install) that an interrupted run does not leave
// behind: it runs in a process group of its own, and a signal's clean-up (lab/engine/cleanup.ts) ends
// the whole group (SIGTERM, then SIGKILL 5 s later) before the rest of the clean-up goes on. The
// result and the failure have execFile's shape (stdout, stderr; code or signal) so callers and
// processFailure() read them as before.
import { spawn, type SpawnOptions } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { onInterrupt } from "./cleanup.ts";
import { deadline } from "../core/pace.ts";

export interface ChildFailure extends Error {
  code?: number;
  signal?: NodeJS.Signals;
  killed?: boolean;
  stdout: string;
  stderr: string;
}

export function runChild(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout: number; what: string; maxBuffer?: number }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] } satisfies SpawnOptions);
    const max = opts.maxBuffer ?? 1 << 24;
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => void (stdout = (stdout + d.toString()).slice(-max)));
    child.stderr!.on("data", (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-max)));
    let killed = false;
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* already gone */
      }
    };
    const ended = new Promise<void>((r) => child.once("close", () => r()));
    const stopGroup = async () => {
      killed = true;
      killGroup("SIGTERM");
      const hard = setTimeout(() => killGroup("SIGKILL"), 5_000); // fixed: not a deadline: the SIGKILL grace after SIGTERM
      await ended;
      clearTimeout(hard);
    };
    const unregister = onInterrupt(`stopping ${opts.what}`, stopGroup);
    // The set-up step's budget (a build, an install): the lab's own, counted at the machine's pace.
    const timer = setTimeout(() => void stopGroup(), deadline(opts.timeout)); // paced
    child.once("error", (err) => {
      clearTimeout(timer);
      unregister();
      reject(Object.assign(err, { stdout, stderr }));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      unregister();
      if (code === 0) return resolve({ stdout, stderr });
      const e = new Error(`${opts.what} failed (${code !== null ? `exit ${code}` : `signal ${signal}`})`) as ChildFailure;
      Object.assign(e, { code: code ?? undefined, signal: signal ?? undefined, killed, stdout, stderr });
      reject(e);
    });
  });
}

/**
 * End every process working inside `dir` (its current directory there or below): what a run
 * killed outright (SIGKILL, which no clean-up sees) left running in its staging folder, such as
 * the `npm install` of a set-up. Called by the next run before it removes that folder, so an
 * orphan never writes into what is being removed or reused. Returns the pids it ended.
 */
export function killProcessesIn(dir: string): number[] {
  const ended: number[] = [];
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return ended; // no /proc: nothing to look at
  }
  const root = path.resolve(dir);
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let cwd: string;
    try {
      cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (cwd !== root && !cwd.startsWith(root + path.sep)) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
      ended.push(Number(pid));
    } catch {
      /* gone meanwhile */
    }
  }
  return ended;
}
