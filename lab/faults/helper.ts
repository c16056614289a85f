// The helper container privileged faults run from: the base image, joined to the target's
// network namespace (NetworkMode container:<target>), with NET_ADMIN. The system under test
// never gets extra capabilities; the helper has them and nothing else runs in it.
//
// Life: started at prepare, removed at clean-up (after heal). It is labelled
// fleetlab.kind=fault-helper with the target's run and lab, so `prune` removes it (first) with
// the run; before removing it, prune runs its heal script (label fleetlab.heal), so a fault
// is undone even when the target outlives the dead run. The rules themselves live in the
// target's namespace: removing the target (as prune does with the rest of the run) takes them
// with it, and so does a restart of the target (a new namespace; see NetworkFault).
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { docker } from "../docker.ts";
import { LABEL_HEAL, runLabels } from "../cleanup.ts";

/** Where a helper keeps the script that undoes its fault (run by heal and by prune). */
export const HEAL_SCRIPT = "/fleetlab/heal.sh";
export { LABEL_HEAL };

export interface ExecOut {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Run a command in a container through the engine (no TTY), collecting its output. */
export async function execIn(containerId: string, cmd: string[], opts: { stdin?: string } = {}): Promise<ExecOut> {
  const c = docker().getContainer(containerId);
  const exec = await c.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, AttachStdin: opts.stdin !== undefined });
  const stream = await exec.start({ hijack: true, stdin: opts.stdin !== undefined });
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = "";
  let stderr = "";
  out.on("data", (d: Buffer) => (stdout += d));
  err.on("data", (d: Buffer) => (stderr += d));
  docker().modem.demuxStream(stream, out, err);
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("close", resolve);
    stream.on("error", reject);
  });
  if (opts.stdin !== undefined) stream.end(opts.stdin);
  await ended;
  const info = await exec.inspect();
  return { exitCode: info.ExitCode ?? -1, stdout, stderr };
}

/** Like execIn, but a non-zero exit is an error naming the command and its stderr. */
export async function execOk(containerId: string, cmd: string[], opts: { stdin?: string } = {}): Promise<ExecOut> {
  const r = await execIn(containerId, cmd, opts);
  if (r.exitCode !== 0) throw new Error(`'${cmd.join(" ").slice(0, 200)}' exited ${r.exitCode} in ${containerId.slice(0, 12)}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
  return r;
}

/** The identity of a container's network namespace as far as faults care: its current start. */
export interface NetnsIdentity {
  pid: number;
  startedAt: string;
}

export async function netnsOf(containerId: string): Promise<NetnsIdentity & { running: boolean }> {
  const st = (await docker().getContainer(containerId).inspect()).State;
  return { pid: st.Pid, startedAt: st.StartedAt, running: st.Running };
}

export interface HelperOwner {
  run: { id: string };
  lab: string;
  faultId: string;
  target: string;
}

export class Helper {
  private constructor(
    readonly id: string,
    readonly targetId: string,
    /** The target's namespace the helper joined (a restarted target has a new one). */
    readonly netns: NetnsIdentity,
  ) {}

  /** Start a helper in the target's network namespace (the target must be running). */
  static async start(image: string, targetId: string, owner: HelperOwner): Promise<Helper> {
    const d = docker();
    const netns = await netnsOf(targetId);
    if (!netns.running) throw new Error(`cannot start a fault helper for ${owner.target}: its container is not running`);
    const c = await d.createContainer({
      // Named for the evidence (Lab.down saves logs of everything labelled with its lab).
      name: `fleetlab-${owner.lab}-fault-${owner.faultId}-${owner.target}-${randomBytes(2).toString("hex")}`.replace(/[^a-zA-Z0-9_.-]/g, "-"),
      Image: image,
      // The base image is an imported rootfs with no command; the helper only waits for execs.
      Cmd: ["sleep", "infinity"],
      Labels: {
        ...runLabels(owner.run.id, "fault-helper"),
        "fleetlab.lab": owner.lab,
        "fleetlab.fault": owner.faultId,
        "fleetlab.target": owner.target,
        [LABEL_HEAL]: HEAL_SCRIPT,
      },
      HostConfig: {
        NetworkMode: `container:${targetId}`,
        CapAdd: ["NET_ADMIN"],
        // The helper holds a reference to the target's namespace, nothing else: keep it small.
        Memory: 64 * 2 ** 20,
      },
    });
    try {
      await c.start();
    } catch (err) {
      await c.remove({ force: true }).catch(() => {});
      throw err;
    }
    return new Helper(c.id, targetId, { pid: netns.pid, startedAt: netns.startedAt });
  }

  exec(cmd: string[], opts: { stdin?: string } = {}): Promise<ExecOut> {
    return execIn(this.id, cmd, opts);
  }

  /** Run a shell script (bash, fails on the first failing command). */
  sh(script: string): Promise<ExecOut> {
    return execOk(this.id, ["bash", "-c", `set -euo pipefail\n${script}`]);
  }

  /** True while the target still runs in the namespace this helper joined. */
  async sameNetns(): Promise<boolean> {
    const now = await netnsOf(this.targetId).catch(() => undefined);
    return !!now && now.running && now.pid === this.netns.pid && now.startedAt === this.netns.startedAt;
  }

  async remove(): Promise<void> {
    await docker()
      .getContainer(this.id)
      .remove({ force: true })
      .catch((err: { statusCode?: number }) => {
        if (err.statusCode !== 404 && err.statusCode !== 409) throw err;
      });
  }
}

/** Single-quote a string for a shell script. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
