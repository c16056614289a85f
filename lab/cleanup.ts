// Clean-up without ryuk. Every resource carries fleetlab.run/fleetlab.kind plus the owning
// process (pid@host); a run removes its own at the end (pass, fail, Ctrl-C, SIGTERM), and the
// next run or `fleetlab prune` removes what a run killed outright left behind.
import os from "node:os";
import { docker, LABEL_HOST, LABEL_KIND, LABEL_PID, LABEL_RUN } from "./docker.ts";
import { info } from "./log.ts";

export function runLabels(runId: string, kind: string): Record<string, string> {
  return { [LABEL_RUN]: runId, [LABEL_KIND]: kind, [LABEL_PID]: String(process.pid), [LABEL_HOST]: os.hostname() };
}

type Cleanup = { name: string; fn: () => Promise<void> };
const cleanups: Cleanup[] = [];
let handlersInstalled = false;
let exiting = false;

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

async function runCleanups(): Promise<void> {
  // Last registered first: faults are healed before their containers are removed.
  while (cleanups.length) {
    const c = cleanups.pop()!;
    try {
      await c.fn();
    } catch (err) {
      process.stderr.write(`fleetlab: clean-up '${c.name}' failed: ${(err as Error).message}\n`);
    }
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    process.on(sig, () => {
      if (exiting) return; // a second Ctrl-C while cleaning: keep cleaning
      exiting = true;
      if (cleanups.length) process.stderr.write(`\nfleetlab: ${sig}: healing faults and removing this run's containers ...\n`);
      void runCleanups().finally(() => process.exit(code));
    });
  }
}

function alive(pid: number): boolean {
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
}

/**
 * Remove lab resources. `runId` given: that run's. Otherwise: every run whose owning process
 * on this host is gone (all runs, live ones too, when `all` is set).
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
    // Another host's runs are never judged dead from here; only explicit asks remove them.
    const deadHere = l[LABEL_HOST] === os.hostname() && pid !== process.pid && (!pid || !alive(pid));
    if (opts.runId || opts.all || deadHere) doomed.add(run);
  }
  const res: PruneResult = { runs: [...doomed], containers: 0, networks: 0, volumes: 0 };
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
    await d.getContainer(c.Id).remove({ force: true, v: false }).catch(ignoreGone);
    res.containers++;
  }
  for (const n of networks.filter((n) => inRun(n.Labels))) {
    await d.getNetwork(n.Id).remove().catch(ignoreGone);
    res.networks++;
  }
  for (const v of volumes.filter((v) => inRun(v.Labels))) {
    await d.getVolume(v.Name).remove().catch(ignoreGone);
    res.volumes++;
  }
  return res;
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

/** Prune what dead runs left, saying so when there was something. */
export async function pruneDeadRuns(): Promise<void> {
  const r = await prune();
  if (r.runs.length) info(`removed leftovers of ${r.runs.length} dead run(s): ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes`);
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
      const t = setTimeout(resolve, timeoutMs);
      const done = () => (clearTimeout(t), resolve());
      stream.on("end", done);
      stream.on("close", done);
      stream.on("error", done);
    });
  } catch {
    /* the helper is removed next either way */
  }
}

function ignoreGone(err: { statusCode?: number }): void {
  if (err.statusCode !== 404 && err.statusCode !== 409) throw err;
}
