// The lab's CPU share. A lab on a busy machine (a build, a test run, busy loops beside it) used to
// get a fifth of the CPU or less: every task on the machine weighs the same, and a lab is a few of
// them among many. Its deadlines then stretched beyond the plan and its verdicts read unknown.
// When it can, the lab claims the CPU the way a dedicated runner would: its own process and its
// containers run in one cgroup, `fleetlab`, whose CPU weight is the largest the kernel takes, so
// the work beside the lab gets the CPU whenever the lab does not want it, and waits while it does.
// The work beside it still runs (nothing is stopped or slowed beyond that), and the disk is not
// claimed: a lab slowed on the disk shows it in its own load (tasks waiting on I/O count).
//
// What it takes: root, a local engine whose cgroup driver is cgroupfs (`make engine`'s dockerd is;
// a systemd-driven engine places containers in slices of its own), and the cgroup filesystem
// (v1's cpu controller, or v2 with the cpu controller). Otherwise the lab runs as before and the
// run header says why: the pace (lab/core/pace.ts) then reads the machine's load, and a deadline
// that passes beyond the plan is unknown, naming it. FLEETLAB_CPU_SHARE=0 leaves the machine's
// scheduling alone.
//
// The pace needs to know how busy the lab itself is, not the machine: with the share claimed, the
// machine's load average counts the work beside the lab that no longer slows it. labRunnable()
// counts the lab's tasks that are running, waiting for a CPU or waiting on the disk (what the load
// average counts, for the lab's cgroup alone).
import fs from "node:fs";
import path from "node:path";
import { environment } from "./settings.ts";

/** The cgroup's name under the hierarchy's root; containers are created with CgroupParent "/fleetlab". */
export const CGROUP = "fleetlab";
/** The lab's own process goes into a leaf beside the containers' groups (cgroup v2 allows processes only in leaves). */
const OWN = "lab";
/** The largest weights the kernel takes: cpu.shares (v1) 262144, cpu.weight (v2) 10000; the default is 1024 / 100. */
export const SHARES_V1 = 262_144;
export const WEIGHT_V2 = 10_000;

export interface CpuShare {
  /** Whether the lab's process and containers run in the weighted cgroup. */
  claimed: boolean;
  /** The cgroup filesystem's mount, when claimed (for the containers' CPU time: cpuSecondsOf). */
  root?: string;
  /** For the containers: HostConfig.CgroupParent, when claimed. */
  parent?: string;
  /** "cgroup v1 cpu.shares=262144 on /fleetlab (2 tasks of the engine's in it too)", or why not. */
  how: string;
  /** The cgroup's folder (the cpu hierarchy's), when claimed. */
  dir?: string;
  version?: 1 | 2;
}

/** What the engine says of itself (docker info), for the claim. */
export interface EngineCgroups {
  driver?: string;
  /** The engine runs on this machine (a unix socket, no DOCKER_HOST elsewhere). */
  local: boolean;
}

let current: CpuShare = { claimed: false, how: "not claimed yet" };

/** The share as claimed by this process (claimCpuShare), for members and the pace. */
export function cpuShare(): CpuShare {
  return current;
}

/**
 * Claim the CPU share for this process and the containers it creates from now on. Never throws:
 * a claim that cannot be made is said in `how` and the lab goes on without it. `root` is the
 * cgroup filesystem's mount (a test passes a folder of its own).
 */
export function claimCpuShare(engine: EngineCgroups, opts: { root?: string; procRoot?: string; env?: NodeJS.ProcessEnv; uid?: number; pid?: number } = {}): CpuShare {
  const env = opts.env ?? environment();
  const root = opts.root ?? "/sys/fs/cgroup";
  const procRoot = opts.procRoot ?? "/proc";
  const uid = opts.uid ?? process.getuid?.() ?? -1;
  const pid = opts.pid ?? process.pid;
  const off = (how: string): CpuShare => (current = { claimed: false, how });
  const flag = env.FLEETLAB_CPU_SHARE?.trim();
  if (flag === "0") return off("left alone (FLEETLAB_CPU_SHARE=0)");
  if (flag && flag !== "1") return off(`left alone: FLEETLAB_CPU_SHARE=${flag} is neither 0 nor 1`);
  if (uid !== 0) return off("not claimed: the lab runs as uid " + uid + " and only root may weight a cgroup");
  if (!engine.local) return off("not claimed: the engine runs on another machine (DOCKER_HOST)");
  if (engine.driver !== "cgroupfs") return off(`not claimed: the engine's cgroup driver is ${engine.driver ?? "unknown"}, not cgroupfs`);
  try {
    const h = hierarchy(root);
    if (typeof h === "string") return off(h);
    const dir = path.join(h.root, CGROUP);
    fs.mkdirSync(path.join(dir, OWN), { recursive: true });
    h.enable?.(h.root);
    fs.writeFileSync(path.join(dir, h.file), String(h.weight));
    // Inside the cgroup the lab's own process (and the engine) come before the containers: it
    // sleeps nearly always, and when it wakes it must read its sockets and timers at once
    // (measured: a 0.35 s stall of its event loop was all time spent waiting for a CPU behind
    // the gateways' start). A leaf that weighs the most costs the containers only what it uses.
    h.enable?.(dir);
    fs.writeFileSync(path.join(dir, OWN, h.file), String(h.weight));
    fs.writeFileSync(path.join(dir, OWN, "cgroup.procs"), String(pid));
    const engineMoved = moveEngine(dir, procRoot, h.file, h.weight);
    return (current = { claimed: true, root, parent: `/${CGROUP}`, dir, version: h.version, how: `cgroup v${h.version} /${CGROUP} with ${h.file} ${h.weight} (the default is ${h.default}): the lab's process, containers${engineMoved} before the work beside them; inside it the lab's process${engineMoved ? " and the engine" : ""} before the containers` });
  } catch (err) {
    return off(`not claimed: ${(err as Error).message}`);
  }
}

/**
 * Where the CPU weight is set on this machine: v1's cpu hierarchy (cpu.shares), or v2's unified one
 * (cpu.weight, the cpu controller enabled below the root first). A string says why neither.
 */
function hierarchy(root: string): { root: string; version: 1 | 2; file: string; weight: number; default: number; enable?: (dir: string) => void } | string {
  if (fs.existsSync(path.join(root, "cpu", "cpu.shares"))) return { root: path.join(root, "cpu"), version: 1, file: "cpu.shares", weight: SHARES_V1, default: 1024 };
  if (!fs.existsSync(path.join(root, "cgroup.controllers"))) return `not claimed: no cgroup filesystem with a cpu controller at ${root}`;
  const has = (dir: string, file: string) => fs.existsSync(path.join(dir, file)) && fs.readFileSync(path.join(dir, file), "utf8").split(/\s+/).includes("cpu");
  if (!has(root, "cgroup.controllers")) return "not claimed: cgroup v2 without the cpu controller";
  const enable = (dir: string) => void (has(dir, "cgroup.subtree_control") || fs.writeFileSync(path.join(dir, "cgroup.subtree_control"), "+cpu"));
  return { root, version: 2, file: "cpu.weight", weight: WEIGHT_V2, default: 100, enable };
}

/**
 * The engine's own processes (dockerd, containerd) into the cgroup's `engine` leaf: every container
 * start, exec and log read of the lab goes through them. Done when the claim is made, for the
 * local cgroupfs engine only; they stay there after the run (the weight only matters while the
 * lab wants the CPU). Returns ", the engine's dockerd and containerd" for the header, or "".
 */
function moveEngine(dir: string, procRoot: string, file: string, weight: number): string {
  const moved: string[] = [];
  let pids: string[] = [];
  try {
    pids = fs.readdirSync(procRoot).filter((p) => /^\d+$/.test(p));
  } catch {
    return "";
  }
  for (const p of pids) {
    try {
      const comm = fs.readFileSync(path.join(procRoot, p, "comm"), "utf8").trim();
      if (comm !== "dockerd" && comm !== "containerd") continue;
      if (!moved.length) {
        fs.mkdirSync(path.join(dir, "engine"), { recursive: true });
        fs.writeFileSync(path.join(dir, "engine", file), String(weight));
      }
      fs.writeFileSync(path.join(dir, "engine", "cgroup.procs"), p);
      if (!moved.includes(comm)) moved.push(comm);
    } catch {
      /* gone, or not ours to move */
    }
  }
  return moved.length ? `, the engine's ${moved.sort().reverse().join(" and ")}` : "";
}

/**
 * CPU time (s) the kernel has charged to a cgroup under the lab's: `sub` "" for every container
 * of the lab's together (what any container ever used, removed or restarted ones included), or a
 * container's id for that container since it last started. Undefined when the share is not
 * claimed or the kernel keeps no such account. v1 reads cpuacct.usage (ns), v2 cpu.stat's
 * usage_usec.
 */
export function cpuSecondsOf(sub: string, share: CpuShare = current): number | undefined {
  if (!share.claimed || !share.root) return undefined;
  try {
    if (share.version === 2) {
      const stat = fs.readFileSync(path.join(share.root, CGROUP, sub, "cpu.stat"), "utf8");
      const us = /^usage_usec (\d+)/m.exec(stat)?.[1];
      return us === undefined ? undefined : Number(us) / 1e6;
    }
    return Number(fs.readFileSync(path.join(share.root, "cpuacct", CGROUP, sub, "cpuacct.usage"), "utf8").trim()) / 1e9;
  } catch {
    return undefined;
  }
}

/** Forget the claim (tests). */
export function resetCpuShare(): void {
  current = { claimed: false, how: "not claimed yet" };
}

/**
 * The lab's tasks that count toward a load average right now: threads of the lab's cgroup (its
 * process and every container under it) running or waiting for a CPU (R) or waiting on the disk
 * (D). Undefined when the share is not claimed. `procRoot` for tests.
 */
export function labRunnable(share: CpuShare = current, procRoot = "/proc"): number | undefined {
  if (!share.claimed || !share.dir) return undefined;
  let n = 0;
  for (const tid of threadsUnder(share.dir, share.version === 2 ? "cgroup.threads" : "tasks")) {
    try {
      const stat = fs.readFileSync(path.join(procRoot, tid, "stat"), "utf8");
      const state = stat[stat.lastIndexOf(")") + 2];
      if (state === "R" || state === "D") n++;
    } catch {
      /* gone since the list was read */
    }
  }
  return n;
}

/** Every thread id listed in `file` in dir and the folders below it. */
function threadsUnder(dir: string, file: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name === file) {
        try {
          for (const t of fs.readFileSync(path.join(d, e.name), "utf8").split("\n")) if (t) out.push(t);
        } catch {
          /* removed meanwhile */
        }
      }
    }
  };
  walk(dir);
  return out;
}

/**
 * The lab's own load: an exponentially damped average of labRunnable(), like the kernel's
 * 1-minute load average (a sample every `intervalMs`, decaying over a minute).
 */
export class OwnLoad {
  #value: number | undefined;
  readonly #decay: number;
  constructor(intervalMs: number) {
    this.#decay = Math.exp(-intervalMs / 60_000);
  }
  /** Add a count; the average so far (the first count starts it). */
  add(count: number): number {
    this.#value = this.#value === undefined ? count : this.#value * this.#decay + count * (1 - this.#decay);
    return Math.round(this.#value * 100) / 100;
  }
}
