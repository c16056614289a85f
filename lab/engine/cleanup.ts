// Clean-up without ryuk. Every resource carries fleetlab.run/fleetlab.kind plus the owning
// process (pid@host and the pid's start time); a run removes its own at the end (pass, fail,
// Ctrl-C, SIGTERM), and the next run or `fleetlab prune` removes what a run killed outright
// left behind.
import fs from "node:fs";
import os from "node:os";
import { docker, LABEL_HOST, LABEL_KIND, LABEL_PID, LABEL_PIDSTART, LABEL_RUN } from "./docker.ts";
import { info } from "../core/log.ts";
import { env } from "../core/settings.ts";

export function runLabels(runId: string, kind: string): Record<string, string> {
  const start = procStat(process.pid)?.start;
  return {
    [LABEL_RUN]: runId,
    [LABEL_KIND]: kind,
    [LABEL_PID]: String(process.pid),
    ...(start !== undefined ? { [LABEL_PIDSTART]: String(start) } : {}),
    [LABEL_HOST]: os.hostname(),
  };
}

type Cleanup = { name: string; fn: () => Promise<void> };
const cleanups: Cleanup[] = [];
let handlersInstalled = false;
/** Set by the first signal (or a fatal error of the lab's own): its exit code and the clean-up it started. */
let interruption: { signal: string; code: number; done: Promise<void>; at: number } | undefined;
/** Said once the clean-up of an early end is done (the CLI: the verdict table so far). */
let lastWords: (() => void) | undefined;

/** What to print when the process ends early, after its clean-up (the verdict table so far). */
export function onEarlyEnd(fn: () => void): void {
  lastWords = fn;
}

/**
 * End the process early because the lab itself failed (an error no scenario owns escaped):
 * heal faults and remove labs as a signal does, print the last words, exit with `code`
 * (3: the lab could not tell). A second call while this runs changes nothing.
 */
export function endEarly(why: string, code = 3): void {
  if (interruption) return;
  installHandlers();
  process.stderr.write(`\nfleetlab: ${why}\nfleetlab: healing faults and removing this run's containers, then exiting ${code} ...\n`);
  beginEarlyEnd("the lab's own error", "", code);
}

/**
 * The clean-up of an early end (a signal, the lab's own error): bounded by the budget, then the
 * last words, then the exit with `code` (through exitWhenClean). `label` prefixes its lines.
 */
function beginEarlyEnd(cause: string, label: string, code: number): void {
  const t0 = performance.now();
  // fixed: clean-up budget when interrupted (then the process exits), judges nothing
  const budget = setTimeout(() => cutShort(`the clean-up did not finish within ${cleanupBudgetMs() / 1000} s (the Docker engine may not be answering)`, code), cleanupBudgetMs());
  budget.unref();
  const done = runCleanups().then(() => {
    clearTimeout(budget);
    process.stderr.write(`fleetlab: ${label}clean-up done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    sayLastWords();
  });
  interruption = { signal: cause, code, done, at: t0 };
  exitWhenClean(code);
}

function sayLastWords(): void {
  try {
    lastWords?.();
  } catch (err) {
    process.stderr.write(`fleetlab: the verdicts so far could not be printed: ${(err as Error).message}\n`);
  }
}

/** Register work to do when the process ends early (signal); returns an unregister function. */
export function onInterrupt(name: string, fn: () => Promise<void>): () => void {
  installHandlers();
  const c = { name, fn };
  cleanups.push(c);
  return () => {
    const i = cleanups.indexOf(c);
    if (i >= 0) cleanups.splice(i, 1);
  };
}

/** True once a signal has started this process's clean-up (bring-up should stop creating things). */
export function interrupted(): boolean {
  return interruption !== undefined;
}

/**
 * End the process with `code`, unless a signal's clean-up is under way: then only once it is
 * done, and with the signal's code. A run interrupted during bring-up fails on its own too (its
 * containers vanish under it); exiting then would cut the teardown short and leave containers
 * and a network with stale endpoints behind, so every exit of the CLI goes through here.
 */
export function exitWhenClean(code: number): void {
  if (!interruption) process.exit(code);
  const { code: sigCode, done } = interruption;
  void done.finally(() => process.exit(sigCode));
}

/** The clean-up under way now (what a cut-short clean-up names as left). */
let cleaning: string | undefined;

async function runCleanups(): Promise<void> {
  // Last registered first: faults are healed before their containers are removed. A clean-up
  // registered while this runs (a lab whose bring-up was under way) is taken too.
  while (cleanups.length) {
    const c = cleanups.pop()!;
    cleaning = c.name;
    try {
      await c.fn();
    } catch (err) {
      process.stderr.write(`fleetlab: clean-up '${c.name}' failed: ${(err as Error).message}\n`);
    }
  }
  cleaning = undefined;
}

/** How long an early end's clean-up may take before the process ends anyway (FLEETLAB_CLEANUP_TIMEOUT_S, default 180 s). */
function cleanupBudgetMs(): number {
  const s = Number(env("FLEETLAB_CLEANUP_TIMEOUT_S") ?? 180);
  return (Number.isFinite(s) && s > 0 ? s : 180) * 1000;
}

/** A repeat of the first signal within this window is the same keypress (npm forwards the terminal's Ctrl-C again). */
const SAME_PRESS_MS = 1_000;

/** End now although the clean-up has not finished: say what is left and who removes it. */
function cutShort(why: string, code: number): never {
  const left = [...(cleaning ? [cleaning] : []), ...cleanups.map((c) => c.name).reverse()];
  process.stderr.write(
    `fleetlab: ${why}; exiting ${code} without waiting.${left.length ? ` Left: ${left.join("; ")}.` : ""} The next run (or 'make prune') removes what this run left on the engine; a fault still applied to a container goes with it.\n`,
  );
  sayLastWords();
  process.exit(code);
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    process.on(sig, () => {
      if (interruption) {
        // npm forwards the terminal's Ctrl-C again at once: the same keypress, keep cleaning.
        // A second one after the notice ends the process now, naming what is left.
        if (performance.now() - interruption.at < SAME_PRESS_MS) return;
        cutShort(`${sig} again during the clean-up`, interruption.code);
      }
      if (cleanups.length) process.stderr.write(`\nfleetlab: ${sig}: healing faults and removing this run's containers (up to ${cleanupBudgetMs() / 1000} s; Ctrl-C again to stop waiting) ...\n`);
      beginEarlyEnd(sig, `${sig}: `, code);
    });
  }
}

/** What /proc says about a process: its state letter (field 3) and start time in clock ticks since boot (field 22). */
export interface ProcStat {
  state: string;
  start: number;
}

/** /proc/<pid>/stat of a process; undefined when there is no such process (or no /proc). */
export function procStat(pid: number, procRoot = "/proc"): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`${procRoot}/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const start = Number(rest[19]);
  if (!rest[0] || !Number.isFinite(start)) return undefined;
  return { state: rest[0], start };
}

/**
 * Whether the process that owns lab resources still runs. A zombie (Z) or dying (X) process is
 * dead: right after `kill -9` a process stays a zombie until its parent reaps it, and
 * `kill(pid, 0)` reports it alive, so a prune at once would keep everything it left. A live
 * process with another start time than the one recorded at creation is not the owner (pid
 * reused). Without /proc (not Linux), `kill(pid, 0)` is all there is.
 */
export function ownerAlive(pid: number, start?: number, procRoot = "/proc"): boolean {
  if (!fs.existsSync(`${procRoot}/self/stat`)) return signalable(pid);
  const st = procStat(pid, procRoot);
  if (!st) return false;
  if (st.state === "Z" || st.state === "X" || st.state === "x") return false;
  return start === undefined || st.start === start;
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface PruneResult {
  runs: string[];
  containers: number;
  networks: number;
  volumes: number;
  /** Scripted nodes' identity folders of dead runs removed from the system temp folder. */
  folders?: number;
  /** What could not be removed, one line each with the fix (the run goes on). */
  stuck: string[];
}

/** How to get rid of what only an engine restart clears (a network with a stale endpoint). */
export const ENGINE_RESTART_FIX =
  "restart the Docker engine ('systemctl restart docker', or for the dockerd 'make engine' started: kill $(cat /var/run/docker.pid) && make engine), then 'make prune'";

/** The parts of a dockerode Network that removing one needs (a fake in the unit test). */
export interface RemovableNetwork {
  remove(): Promise<unknown>;
  inspect(): Promise<{ Name?: string; Containers?: Record<string, { Name?: string } | undefined> | null }>;
  disconnect(opts: { Container: string; Force: boolean }): Promise<unknown>;
}

/**
 * Remove a network. The engine refuses one that still has endpoints (403 "has active
 * endpoints"), which a container removed mid-connect can leave behind: every endpoint the
 * inspect shows is force-disconnected, by container id and by name (and `alsoDisconnect`: the
 * names of containers that were on it), and the removal retried. Never throws: returns
 * undefined when the network is gone, else one line naming it, the engine's reason and the fix.
 */
export async function removeNetwork(
  net: RemovableNetwork,
  name: string,
  opts: { alsoDisconnect?: string[]; attempts?: number; delayMs?: number } = {},
): Promise<string | undefined> {
  const attempts = opts.attempts ?? 3;
  let reason = "";
  for (let i = 0; i < attempts; i++) {
    try {
      await net.remove();
      return undefined;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      reason = engineMessage(err);
    }
    let endpoints: [string, string | undefined][] = [];
    try {
      endpoints = Object.entries((await net.inspect()).Containers ?? {}).map(([id, ep]) => [id, ep?.Name]);
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
    }
    const targets = new Set([...endpoints.flatMap(([id, n]) => (n ? [id, n] : [id])), ...(opts.alsoDisconnect ?? [])]);
    for (const t of targets) await net.disconnect({ Container: t, Force: true }).catch(() => {});
    if (i < attempts - 1) await new Promise((r) => setTimeout(r, (opts.delayMs ?? 500) * (i + 1))); // fixed: not a deadline: the back-off between removal attempts
  }
  return `network ${name} could not be removed (${reason}): ${ENGINE_RESTART_FIX}`;
}

/**
 * Remove lab resources. `runId` given: that run's. Otherwise: every run whose owning process
 * on this host is gone (all runs, live ones too, when `all` is set). Never fails on what the
 * engine refuses to remove: that is named in `stuck` (and the run that pruned goes on).
 */
export async function prune(opts: { runId?: string; all?: boolean } = {}): Promise<PruneResult> {
  const d = docker();
  const filters = { label: [opts.runId ? `${LABEL_RUN}=${opts.runId}` : LABEL_RUN] };
  const [containers, networks, volumes] = await Promise.all([
    d.listContainers({ all: true, filters }),
    d.listNetworks({ filters }),
    d.listVolumes({ filters }).then((v) => v.Volumes ?? []),
  ]);
  const labelsOf = [...containers.map((c) => c.Labels), ...networks.map((n) => n.Labels ?? {}), ...volumes.map((v) => v.Labels ?? {})];
  const doomed = new Set<string>();
  for (const l of labelsOf) {
    const run = l[LABEL_RUN];
    if (!run) continue;
    const pid = Number(l[LABEL_PID]);
    const start = l[LABEL_PIDSTART] ? Number(l[LABEL_PIDSTART]) : undefined;
    // Another host's runs are never judged dead from here; only explicit asks remove them.
    const deadHere = l[LABEL_HOST] === os.hostname() && pid !== process.pid && (!pid || !ownerAlive(pid, start));
    if (opts.runId || opts.all || deadHere) doomed.add(run);
  }
  const res: PruneResult = { runs: [...doomed], containers: 0, networks: 0, volumes: 0, stuck: [] };
  if (!opts.runId) {
    res.folders = pruneScriptedFolders({ all: opts.all });
    // Build containers a killed run left (a package image half built): on this engine only by name.
    const builds = await d.listContainers({ all: true, filters: { name: [BUILD_CONTAINER_PREFIX] } });
    for (const c of builds.filter((c) => c.Names.some((n) => buildOwnerGone(n)))) {
      if (await d.getContainer(c.Id).remove({ force: true }).then(() => true, () => false)) res.containers++;
    }
  }
  if (!doomed.size) return res;
  const inRun = (l: Record<string, string> | undefined) => !!l && doomed.has(l[LABEL_RUN]);
  // Helper containers (fault injectors) first, so faults they hold go with them.
  const order = containers
    .filter((c) => inRun(c.Labels))
    .sort((a, b) => Number(b.Labels[LABEL_KIND] === "fault-helper") - Number(a.Labels[LABEL_KIND] === "fault-helper"));
  for (const c of order) {
    // A fault helper names the script that undoes its fault (iptables/tc rules live in the
    // target's namespace, not in the helper): run it first, so the fault is healed even when
    // the target outlives this prune.
    const heal = c.Labels[LABEL_HEAL];
    if (c.Labels[LABEL_KIND] === "fault-helper" && heal && c.State === "running") await execBriefly(c.Id, ["bash", heal]);
    const failed = await d
      .getContainer(c.Id)
      .remove({ force: true, v: false })
      .then(
        () => undefined,
        (err: unknown) => (statusOf(err) === 404 ? undefined : engineMessage(err)),
      );
    if (failed) res.stuck.push(`container ${c.Names[0]?.replace(/^\//, "") ?? c.Id.slice(0, 12)} could not be removed (${failed})`);
    else res.containers++;
  }
  const containerNames = order.flatMap((c) => c.Names.map((n) => n.replace(/^\//, "")));
  for (const n of networks.filter((n) => inRun(n.Labels))) {
    const stuck = await removeNetwork(d.getNetwork(n.Id), n.Name, { alsoDisconnect: containerNames });
    if (stuck) res.stuck.push(stuck);
    else res.networks++;
  }
  for (const v of volumes.filter((v) => inRun(v.Labels))) {
    const failed = await d
      .getVolume(v.Name)
      .remove()
      .then(
        () => undefined,
        (err: unknown) => (statusOf(err) === 404 ? undefined : engineMessage(err)),
      );
    if (failed) res.stuck.push(`volume ${v.Name} could not be removed (${failed})`);
    else res.volumes++;
  }
  return res;
}

/**
 * Name prefix of an image's build container (lab/engine/images.ts, the package image). It
 * carries no run labels (a commit would pass them on to the image and every container made
 * from it); its name names its owner instead: `<prefix><pid>-<start>-<random>`.
 */
export const BUILD_CONTAINER_PREFIX = "fleetlab-build-";

/** Whether a build container's owner (from its name) is gone from this host; false for any other name. */
export function buildOwnerGone(name: string, procRoot = "/proc"): boolean {
  const m = new RegExp(`^/?${BUILD_CONTAINER_PREFIX}(\\d+)-(\\d+)-[0-9a-f]+$`).exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  const start = Number(m[2]) || undefined;
  return pid !== process.pid && !ownerAlive(pid, start, procRoot);
}

/** The file in a scripted node's identity folder that names the process owning it. */
export const OWNER_FILE = "owner.json";

/** Write `dir`/owner.json: this process (pid and start time), so a later prune can tell it is dead. */
export function claimFolder(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(`${dir}/${OWNER_FILE}`, JSON.stringify({ pid: process.pid, start: procStat(process.pid)?.start, host: os.hostname() }));
}

/**
 * Remove the scripted nodes' identity folders (`fleetlab-<lab>-scripted` in the system temp
 * folder, lab/topology/lab.ts) whose owning process is gone (every one with `all`): a run killed
 * outright leaves its throwaway keys there. A folder without a readable owner file is the
 * owner's only while it is young (an hour): it may be in the middle of being made.
 */
export function pruneScriptedFolders(opts: { all?: boolean; root?: string; procRoot?: string; now?: number } = {}): number {
  const root = opts.root ?? os.tmpdir();
  let removed = 0;
  let names: string[] = [];
  try {
    names = fs.readdirSync(root).filter((n) => /^fleetlab-.+-scripted$/.test(n));
  } catch {
    return 0;
  }
  for (const n of names) {
    const dir = `${root}/${n}`;
    let dead = !!opts.all;
    if (!dead) {
      try {
        const o = JSON.parse(fs.readFileSync(`${dir}/${OWNER_FILE}`, "utf8")) as { pid?: number; start?: number; host?: string };
        dead = o.host === os.hostname() && o.pid !== process.pid && (!o.pid || !ownerAlive(o.pid, o.start, opts.procRoot));
      } catch {
        dead = (opts.now ?? Date.now()) - (fs.statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > 3_600_000;
      }
    }
    if (!dead) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/** Everything still labelled for a run (empty when clean-up was complete). */
export async function leftovers(of: { run?: string; lab?: string }): Promise<string[]> {
  const d = docker();
  const filters = { label: [of.lab ? `fleetlab.lab=${of.lab}` : `${LABEL_RUN}=${of.run}`] };
  const [c, n, v] = await Promise.all([
    d.listContainers({ all: true, filters }),
    d.listNetworks({ filters }),
    d.listVolumes({ filters }).then((x) => x.Volumes ?? []),
  ]);
  return [...c.map((x) => `container ${x.Names[0]}`), ...n.map((x) => `network ${x.Name}`), ...v.map((x) => `volume ${x.Name}`)];
}

/**
 * Prune what dead runs left, saying so when there was something. Never fails the run that
 * calls it: what the engine will not remove is named, one line each, with the fix.
 */
export async function pruneDeadRuns(): Promise<void> {
  let r: PruneResult;
  try {
    r = await prune();
  } catch (err) {
    info(`fleetlab: could not prune what dead runs left (${engineMessage(err)}); going on`);
    return;
  }
  if (r.runs.length) info(`removed leftovers of ${r.runs.length} dead run(s): ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes`);
  if (r.folders) info(`removed ${r.folders} scripted node identity folder(s) of dead runs from the system temp folder`);
  for (const s of r.stuck) info(`fleetlab: ${s}`);
}

/** Label of a fault helper: path of its heal script inside it (lab/faults/helper.ts). */
export const LABEL_HEAL = "fleetlab.heal";

/** Run a command in a container, giving up after a few seconds; never throws. */
async function execBriefly(id: string, cmd: string[], timeoutMs = 5000): Promise<void> {
  try {
    const exec = await docker().getContainer(id).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    stream.resume();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, timeoutMs); // fixed: not a deadline: a clean-up exec given a few seconds, never throws, judges nothing
      const done = () => (clearTimeout(t), resolve());
      stream.on("end", done);
      stream.on("close", done);
      stream.on("error", done);
    });
  } catch {
    /* the helper is removed next either way */
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number } | undefined)?.statusCode;
}

/** The engine's own words for a failed call (dockerode wraps them in "(HTTP code N) ..."), on one line. */
export function engineMessage(err: unknown): string {
  const e = err as { statusCode?: number; json?: { message?: string }; message?: string };
  const msg = (e?.json?.message ?? e?.message ?? String(err)).replace(/\s+/g, " ").trim();
  return e?.statusCode ? `HTTP ${e.statusCode}: ${msg.replace(/^\(HTTP code \d+\)\s*\S+\s*-\s*/, "")}` : msg;
}
