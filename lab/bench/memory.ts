// Peak memory of a process tree, read the same way for containers and bare processes: the sum
// of VmHWM (peak resident set) over the processes. Page cache is not counted (cgroup v1's
// max_usage would count the ~650 MB package read from disk as if the process held it).
import fs from "node:fs";
import { docker } from "../engine/docker.ts";

function vmHwmKiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Peak RSS of a process and all its descendants, MiB. */
export function treePeakMiB(pid: number): number {
  let kib = 0;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop()!;
    kib += vmHwmKiB(p);
    todo.push(...children(p));
  }
  return kib / 1024;
}

/** Peak RSS of every process in a container (host PIDs from the engine), MiB. Local engine only. */
export async function containerPeakMiB(containerId: string): Promise<number> {
  const top = (await docker().getContainer(containerId).top({ ps_args: "-o pid" })) as { Titles: string[]; Processes: string[][] };
  const col = top.Titles.indexOf("PID");
  return top.Processes.reduce((sum, p) => sum + vmHwmKiB(Number(p[col])), 0) / 1024;
}
