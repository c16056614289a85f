// slowDisk: every file syscall a member's processes make on a path takes delayMs longer, so a
// repro can widen the race windows around state writes (the gateway's session store, device
// pairing files, a node's state). strace does it: a helper container joins the target's PID
// namespace (PidMode container:<target>, no network) with CAP_SYS_PTRACE, and runs
//   strace -f -p <pid>... -P <path>... -e trace=<syscalls> --inject=<syscalls>:delay_enter=<us>
// attached to every process of the target's container but its init (every thread, and threads
// and children started later: -f). OpenClaw itself gets no capability; the helper has that one
// and nothing else runs in it.
//
// What is slowed: strace's -P matches exact paths, for a path argument or the file behind a
// descriptor (write(fd) on an open file counts), and injects only into the syscalls it matched
// (measured: a write+fsync beside the path is not delayed). A directory stands for itself and
// every file under it when the fault is injected; a file created later (the temporary file of an
// atomic write) is not matched, but a syscall that names a listed path is (the rename onto it).
// The default syscalls are the writing ones (write, pwrite, fsync, rename, unlink, ...); reads
// and opens are not slowed unless listed. Every syscall of a traced process stops in strace
// (ptrace, no seccomp filter when attaching), so the rest of the process is a little slower too.
//
// In effect: /proc/<pid>/task/*/status of every traced process says TracerPid = strace. Heal:
// SIGTERM to strace, which detaches (the processes go on, untraced: TracerPid 0), through the heal
// script prune runs for a dead run; if strace is killed instead (the helper container removed),
// the kernel detaches its tracees all the same (measured in slow-disk.docker.test.ts). A target
// that stopped takes the helper with it (its PID namespace is gone): heal records "vanished".
import { randomBytes } from "node:crypto";
import { LABEL_HEAL, runLabels } from "../engine/cleanup.ts";
import { docker } from "../engine/docker.ts";
import { gone } from "./container.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";
import { HEAL_SCRIPT, execIn, execOk, shq } from "./helper.ts";
import { defineFault, needsHelper } from "./kind.ts";
import { cpuShare } from "../core/cpu-share.ts";

/** What slowDisk delays unless told otherwise: the syscalls that write or change files. */
export const WRITE_SYSCALLS = [
  "write",
  "pwrite64",
  "writev",
  "pwritev",
  "pwritev2",
  "fsync",
  "fdatasync",
  "sync_file_range",
  "ftruncate",
  "rename",
  "renameat",
  "renameat2",
  "unlink",
  "unlinkat",
] as const;

/** Most paths passed to strace -P (a directory with more files under it is cut there). */
export const MAX_PATHS = 500;

const DIR = HEAL_SCRIPT.replace(/\/[^/]+$/, "");
const PID_FILE = `${DIR}/strace.pid`;
const LOG = `${DIR}/strace.log`;
const ERR = `${DIR}/strace.err`;

export interface SlowDiskOptions extends FaultOptions {
  /** Absolute path(s) inside the target: a file, or a directory (itself and the files under it at inject). */
  path: string | string[];
  /** Added to every matched syscall, on entry. */
  delayMs: number;
  /** Syscalls to delay (strace names); default WRITE_SYSCALLS. */
  syscalls?: string[];
  /** Only processes whose command line matches this (extended regex); default every process of
   * the container but its init. */
  processes?: string;
}

interface Started {
  tracer: number;
  pids: number[];
  paths: string[];
  truncated: boolean;
}

export class SlowDiskFault extends Fault {
  readonly kind = "slow-disk";
  readonly paths: string[];
  readonly syscalls: string[];
  #helper: string | undefined;
  #started: Started | undefined;
  protected readonly targetId: string;

  protected readonly lab: FaultLab;
  protected readonly alias: string;
  readonly o: SlowDiskOptions;
  constructor(
    lab: FaultLab,
    alias: string,
    o: SlowDiskOptions,
  ) {
    super(alias, { ...o, run: lab.run }, lab.teardown);
    this.lab = lab;
    this.alias = alias;
    this.o = o;
    this.targetId = lab.member(alias).id;
    this.paths = [o.path].flat();
    this.syscalls = o.syscalls ?? [...WRITE_SYSCALLS];
    if (!this.paths.length || this.paths.some((p) => !p.startsWith("/") || /[\n\0]/.test(p))) throw new Error(`slowDisk: path must be absolute (got ${JSON.stringify(o.path)})`);
    if (!this.syscalls.length || this.syscalls.some((s) => !/^[a-z0-9_]+$/.test(s))) throw new Error(`slowDisk: syscalls must be strace syscall names (got ${JSON.stringify(this.syscalls)})`);
    if (!(o.delayMs > 0) || o.delayMs > 600_000) throw new Error(`slowDisk: delayMs must be in (0, 600000] (got ${o.delayMs})`);
  }

  protected override defaultTimeoutMs(): number {
    return 15_000;
  }

  /** The helper container's id (after prepare). */
  get helperId(): string | undefined {
    return this.#helper;
  }

  /** The strace process (its pid in the target's namespace) and what it traces, once injected. */
  get started(): Started | undefined {
    return this.#started;
  }

  protected async doPrepare(): Promise<Detail> {
    const st = (await docker().getContainer(this.targetId).inspect()).State;
    if (!st.Running) throw new Error(`cannot slow the disk of ${this.alias}: its container is not running`);
    const c = await docker().createContainer({
      name: `fleetlab-${this.lab.id}-fault-${this.id}-${this.alias}-${randomBytes(2).toString("hex")}`.replace(/[^a-zA-Z0-9_.-]/g, "-"),
      Image: this.lab.images.base.tag,
      Cmd: ["sleep", "infinity"],
      Labels: {
        ...runLabels(this.lab.run.id, "fault-helper"),
        "fleetlab.lab": this.lab.id,
        "fleetlab.fault": this.id,
        "fleetlab.target": this.alias,
        [LABEL_HEAL]: HEAL_SCRIPT,
      },
      HostConfig: {
        // The target's processes are visible (and traceable) from here; the helper needs no network.
        PidMode: `container:${this.targetId}`,
        NetworkMode: "none",
        CapAdd: ["SYS_PTRACE"],
        // Under the lab's CPU share when the run claimed it (lab/core/cpu-share.ts).
        ...(cpuShare().parent ? { CgroupParent: cpuShare().parent } : {}),
        Memory: 64 * 2 ** 20,
      },
    });
    this.#helper = c.id;
    await c.start();
    return { helper: c.id.slice(0, 12) };
  }

  protected async doInject(): Promise<Detail> {
    const us = Math.round(this.o.delayMs * 1000);
    const sys = this.syscalls.join(",");
    // The heal script first, so a run killed half-way is healed from it (heal(), or prune).
    const script = `
mkdir -p ${DIR}
cat > ${HEAL_SCRIPT} <<'FLEETLAB_EOF'
${HEAL}
FLEETLAB_EOF
pids=()
for d in /proc/[0-9]*; do
  p=\${d#/proc/}
  [ "$p" = 1 ] && continue
  grep -qs ${shq(this.targetId)} "$d/cgroup" || continue
  ${this.o.processes ? `tr '\\0' ' ' < "$d/cmdline" 2>/dev/null | grep -Eq ${shq(this.o.processes)} || continue` : ":"}
  pids+=("$p")
done
[ \${#pids[@]} -gt 0 ] || { echo "no process of the target to trace" >&2; exit 3; }
root=/proc/\${pids[0]}/root
paths=()
for want in ${this.paths.map(shq).join(" ")}; do
  paths+=("$want")
  if [ -d "$root$want" ]; then
    while IFS= read -r f; do paths+=("\${f#$root}"); done < <(find "$root$want" -xdev -mindepth 1 2>/dev/null | head -n ${MAX_PATHS})
  fi
done
truncated=false
if [ \${#paths[@]} -gt ${MAX_PATHS} ]; then paths=("\${paths[@]:0:${MAX_PATHS}}"); truncated=true; fi
args=()
for p in "\${paths[@]}"; do args+=(-P "$p"); done
for p in "\${pids[@]}"; do args+=(-p "$p"); done
: > ${LOG}
setsid strace -f -qq -ttt -y -s 32 -o ${LOG} -e trace=${sys} --inject=${sys}:delay_enter=${us} "\${args[@]}" > ${ERR} 2>&1 < /dev/null &
echo $! > ${PID_FILE}
printf '%s\\n' "$!" "\${pids[*]}" "$truncated" "\${paths[@]}"
`;
    const out = (await execOk(this.#helper!, ["bash", "-c", `set -euo pipefail\n${script}`])).stdout.split("\n").filter((l) => l !== "");
    const [tracer, pids, truncated, ...paths] = out;
    this.#started = { tracer: Number(tracer), pids: pids!.split(" ").map(Number), paths, truncated: truncated === "true" };
    return {
      path: this.o.path,
      delayMs: this.o.delayMs,
      syscalls: this.syscalls,
      ...(this.o.processes ? { processes: this.o.processes } : {}),
      tracer: this.#started.tracer,
      pids: this.#started.pids,
      matchedPaths: paths.length,
      ...(this.#started.truncated ? { truncatedAt: MAX_PATHS } : {}),
    };
  }

  /** TracerPid of every thread of the traced processes (pid -> tracer pids), and whether strace lives. */
  async tracers(): Promise<{ strace: "running" | "gone"; tasks: Record<string, number>; err: string }> {
    const s = this.#started!;
    const r = await execIn(this.#helper!, [
      "bash",
      "-c",
      `st=$(sed -n 's/^State:[[:space:]]*\\(.\\).*/\\1/p' /proc/${s.tracer}/status 2>/dev/null); c=$(cat /proc/${s.tracer}/comm 2>/dev/null); if [ "$c" = strace ] && [ "$st" != Z ]; then echo running; else echo gone; fi
for p in ${s.pids.join(" ")}; do for t in /proc/$p/task/*; do [ -e "$t/status" ] && echo "$p/\${t##*/} $(sed -n 's/^TracerPid:[[:space:]]*//p' "$t/status")"; done; done; echo ---; tail -c 500 ${ERR} 2>/dev/null || true`,
    ]);
    if (r.exitCode !== 0) throw new Error(`reading TracerPid in the helper of ${this.alias} failed (${r.exitCode}): ${r.stderr.trim()}`);
    const [head, err = ""] = r.stdout.split("\n---\n");
    const [state, ...lines] = head!.split("\n").filter(Boolean);
    const tasks: Record<string, number> = {};
    for (const l of lines) {
      const [task, tracer] = l.split(" ");
      if (task && tracer !== undefined && tracer !== "") tasks[task] = Number(tracer);
    }
    return { strace: state === "running" ? "running" : "gone", tasks, err: err.trim() };
  }

  protected async inEffect(): Promise<Detail | undefined> {
    const t = await this.tracers();
    if (t.strace === "gone") throw new Error(`strace exited in the helper of ${this.alias}: ${t.err || "(no message)"}`);
    const tasks = Object.entries(t.tasks);
    if (!tasks.length) throw new Error(`none of the processes to trace in ${this.alias} is left (${this.#started!.pids.join(" ")})`);
    return tasks.every(([, tracer]) => tracer === this.#started!.tracer) ? { tracer: this.#started!.tracer, tracedThreads: tasks.length } : undefined;
  }

  async #helperRunning(): Promise<boolean> {
    if (!this.#helper) return false;
    try {
      return (await docker().getContainer(this.#helper).inspect()).State.Running;
    } catch (err) {
      if (gone(err)) return false;
      throw err;
    }
  }

  protected async doHeal(): Promise<Detail> {
    if (!(await this.#helperRunning())) return { vanished: "the helper is gone (the target stopped, or it was removed): strace went with it and its tracees were detached" };
    await execOk(this.#helper!, ["bash", HEAL_SCRIPT]);
    const r = await execIn(this.#helper!, ["bash", "-c", `grep -c '(DELAYED)' ${LOG} 2>/dev/null || true; grep '(DELAYED)' ${LOG} 2>/dev/null | tail -n 3 || true`]);
    const [count, ...last] = r.stdout.split("\n").filter(Boolean);
    return { delayedCalls: Number(count ?? 0), lastDelayed: last };
  }

  protected async isHealed(): Promise<Detail | undefined> {
    if (!this.#started || !(await this.#helperRunning())) return { helperGone: true };
    const t = await this.tracers();
    if (t.strace === "running") return undefined;
    return Object.values(t.tasks).every((tracer) => tracer === 0) ? { untracedThreads: Object.keys(t.tasks).length } : undefined;
  }

  protected async doCleanup(): Promise<Detail | void> {
    if (!this.#helper) return;
    await docker()
      .getContainer(this.#helper)
      .remove({ force: true })
      .catch((err) => {
        if (!gone(err)) throw err;
      });
    return { helperRemoved: true };
  }
}

// The heal script (run by heal, and by prune before it removes the helper): SIGTERM to strace,
// which detaches from every thread; wait until it is gone (a zombie counts), SIGKILL as a last
// resort (the kernel detaches a dead tracer's tracees too). Safe to run any number of times:
// no pid file, or a pid that is no longer strace, means nothing to do.
const HEAL = `p=$(cat ${PID_FILE} 2>/dev/null) || exit 0
alive() { [ "$(cat /proc/$p/comm 2>/dev/null)" = strace ] && ! grep -qs '^State:[[:space:]]*Z' /proc/$p/status; }
alive || exit 0
kill -TERM "$p" 2>/dev/null || true
for i in $(seq 150); do alive || exit 0; sleep 0.02; done
kill -KILL "$p" 2>/dev/null || true
for i in $(seq 50); do alive || exit 0; sleep 0.02; done
exit 1`;

export const slowDisk = defineFault({
  name: "slowDisk",
  family: "process",
  describe: "delay the member's file syscalls on a path by delayMs (strace --inject from a helper in its PID namespace); heal detaches strace",
  available: needsHelper,
  make: (lab: FaultLab, alias: string, opts: SlowDiskOptions) => new SlowDiskFault(lab, alias, opts),
  bench: [
    {
      label: "slow disk (strace delay_enter on a path)",
      observedBy: "TracerPid of every thread: strace / 0",
      make: (bed) => new SlowDiskFault(bed.lab, "b", { path: "/var/tmp", delayMs: 10 }),
    },
  ],
});
