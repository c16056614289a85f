// The helper container privileged faults run from: the base image, joined to the target's
// network namespace (NetworkMode container:<target>), with NET_ADMIN. The system under test
// never gets extra capabilities; the helper has them and nothing else runs in it.
//
// Life: started at prepare, removed at clean-up (after heal). It is labelled
// fleetlab.kind=fault-helper with the target's run and lab, so `prune` removes it (first) with
// the run; before removing it, prune runs its heal script (label fleetlab.heal), so a fault
// is undone even when the target outlives the dead run. The rules themselves live in the
// target's namespace: removing the target (as prune does with the rest of the run) takes them
// with it, and so does a restart of the target (a new namespace): a fault whose target
// restarted is gone, and heal records it as "vanished".
//
// Below the helper: the base classes of the kinds that run from one (HelperFault: heal script
// written before any rule is set; IptablesFault: DROP rules in chains of their own).
// This kernel has no netem: latency is the wire tap's job (wire.ts).
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { docker } from "../engine/docker.ts";
import { LABEL_HEAL, runLabels } from "../engine/cleanup.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";
import { cpuShare } from "../core/cpu-share.ts";

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
  readonly id: string;
  readonly targetId: string;
  /** The target's namespace the helper joined (a restarted target has a new one). */
  readonly netns: NetnsIdentity;
  private constructor(
    id: string,
    targetId: string,
    netns: NetnsIdentity,
  ) {
    this.id = id;
    this.targetId = targetId;
    this.netns = netns;
  }

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
        // Under the lab's CPU share when the run claimed it (lab/core/cpu-share.ts).
        ...(cpuShare().parent ? { CgroupParent: cpuShare().parent } : {}),
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

// ---------------------------------------------------------------- faults run from a helper

export type Direction = "both" | "out" | "in";

/** A fault set with iptables/tc from a helper in the target's namespace (partition, loss, bandwidth). */
export abstract class HelperFault extends Fault {
  protected helper?: Helper;
  /** iptables chain / tc handle owner name, unique per process and fault. */
  protected readonly chain = `FL-${process.pid}-${this.id}`;
  protected readonly targetId: string;

  protected readonly lab: FaultLab;
  protected readonly alias: string;
  constructor(
    lab: FaultLab,
    alias: string,
    target: string,
    opts: FaultOptions,
  ) {
    super(target, { ...opts, run: lab.run }, lab.teardown);
    this.lab = lab;
    this.alias = alias;
    this.targetId = lab.member(alias).id;
  }

  /** Commands that undo the fault; each must tolerate that it is not (or no longer) there. */
  protected abstract healCommands(): string[];
  protected abstract applyCommands(): string[];
  /** A detail when the rules are present (and, for partitions, the probe agrees). */
  protected abstract present(): Promise<Detail | undefined>;
  protected abstract absent(): Promise<Detail | undefined>;
  protected async prepareMore(): Promise<Detail | void> {}

  protected async doPrepare(): Promise<Detail> {
    const more = await this.prepareMore();
    this.helper = await Helper.start(this.lab.images.base.tag, this.targetId, { run: this.lab.run, lab: this.lab.id, faultId: this.id, target: this.alias });
    return { helper: this.helper.id.slice(0, 12), ...more };
  }

  protected async doInject(): Promise<Detail> {
    // The heal script is written before any rule is set, so a run killed half-way through
    // can still be healed from it (heal() here, or prune before it removes the helper).
    const heal = this.healCommands().map((c) => `${c} 2>/dev/null || true`).join("\n");
    await this.helper!.sh(`mkdir -p ${shq(HEAL_SCRIPT.replace(/\/[^/]+$/, ""))}\ncat > ${HEAL_SCRIPT} <<'FLEETLAB_EOF'\n${heal}\nFLEETLAB_EOF\n${this.applyCommands().join("\n")}`);
    return {};
  }

  protected inEffect(): Promise<Detail | undefined> {
    return this.present();
  }

  protected async doHeal(): Promise<Detail> {
    if (!this.helper) return {};
    if (!(await this.helper.sameNetns())) return { vanished: "the target restarted or stopped; its namespace and the rules in it are gone" };
    await this.helper.sh(`bash ${HEAL_SCRIPT}`);
    return {};
  }

  protected async isHealed(): Promise<Detail | undefined> {
    if (!this.helper || !(await this.helper.sameNetns())) return { vanished: true };
    return this.absent();
  }

  protected async doCleanup(): Promise<void> {
    await this.helper?.remove();
  }
}

// ---------------------------------------------------------------- iptables book-keeping

export type Hook = "INPUT" | "OUTPUT";
/** One DROP rule: the hook it sits in and its match (e.g. "-s 10.0.0.3/32"). */
export interface DropRule {
  hook: Hook;
  match: string;
}

/**
 * DROP rules in chains of their own, one per hook (FL-<pid>-<fault>-in / -out), jumped to
 * first from INPUT / OUTPUT. One chain per hook matters: a chain shared by both hooks would
 * run incoming packets through the outgoing rules too (`! -o lo` matches an incoming packet,
 * which has no output interface), doubling the loss.
 */
export abstract class IptablesFault extends HelperFault {
  protected abstract dropRules(): DropRule[];

  protected chainOf(hook: Hook): string {
    return `${this.chain}-${hook === "INPUT" ? "in" : "out"}`;
  }
  #hooks(): Hook[] {
    return (["INPUT", "OUTPUT"] as const).filter((h) => this.dropRules().some((r) => r.hook === h));
  }
  protected applyCommands(): string[] {
    const hooks = this.#hooks();
    return [
      ...hooks.map((h) => `iptables -w -N ${this.chainOf(h)}`),
      ...this.dropRules().map((r) => `iptables -w -A ${this.chainOf(r.hook)} ${r.match} -j DROP`),
      // First in the hook, so nothing set up earlier accepts the traffic before us.
      ...hooks.map((h) => `iptables -w -I ${h} 1 -m comment --comment fleetlab-fault -j ${this.chainOf(h)}`),
    ];
  }
  protected healCommands(): string[] {
    return (["INPUT", "OUTPUT"] as const).flatMap((h) => [
      `iptables -w -D ${h} -m comment --comment fleetlab-fault -j ${this.chainOf(h)}`,
      `iptables -w -F ${this.chainOf(h)}`,
      `iptables -w -X ${this.chainOf(h)}`,
    ]);
  }
  protected async iptablesRules(): Promise<string[]> {
    return (await this.helper!.sh("iptables -w -S")).stdout.split("\n").filter(Boolean);
  }
  /** In `iptables -S` output: every rule of ours and every jump to our chains. */
  protected rulesPresent(all: string[]): boolean {
    return this.#hooks().every((h) => {
      const chain = this.chainOf(h);
      const mine = all.filter((l) => l.startsWith(`-A ${chain} `)).length;
      const jumped = all.some((l) => l.startsWith(`-A ${h} `) && l.split(/\s+/).includes(chain));
      return jumped && mine === this.dropRules().filter((r) => r.hook === h).length;
    });
  }
  /** An iptables -S line about one of our chains (as a word: FL-1-f1-in is not FL-1-f12-in). */
  protected mentions(line: string): boolean {
    const words = line.split(/\s+/);
    return words.includes(this.chainOf("INPUT")) || words.includes(this.chainOf("OUTPUT"));
  }
  protected async present(): Promise<Detail | undefined> {
    return this.rulesPresent(await this.iptablesRules()) ? {} : undefined;
  }
  protected async absent(): Promise<Detail | undefined> {
    return (await this.iptablesRules()).some((l) => this.mentions(l)) ? undefined : {};
  }
  /** Packets dropped so far by this fault's rules (rule counters of both chains). */
  async dropped(): Promise<number> {
    const out = (await this.helper!.sh(this.#hooks().map((h) => `iptables -w -L ${this.chainOf(h)} -n -v -x`).join("\n"))).stdout;
    return out
      .split("\n")
      .filter((l) => /\bDROP\b/.test(l))
      .reduce((n, l) => n + Number(l.trim().split(/\s+/)[0] || 0), 0);
  }
}
