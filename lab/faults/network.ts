// Network faults. Disconnect/reconnect goes through the engine; the rest (partition, packet
// loss, bandwidth) are iptables/tc rules set from a helper container in the target's network
// namespace (helper.ts). This kernel has no netem: latency is the wire tap's job (wire.ts).
//
// Rules live in the target's namespace, not in the helper: removing the target container (as
// prune does with the rest of a dead run) removes them; so does restarting or re-starting the
// target, which gets a fresh namespace. A network fault whose target restarted is therefore
// gone: heal notices (the target's start time changed) and records it as "vanished".
import type Docker from "dockerode";
import { docker } from "../docker.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";
import { Helper, HEAL_SCRIPT, shq } from "./helper.ts";
import { refreshIp } from "./process.ts";

async function ipOnLab(lab: FaultLab, alias: string): Promise<string> {
  const info = await docker().getContainer(lab.member(alias).id).inspect();
  const ip = info.NetworkSettings.Networks?.[lab.network.name]?.IPAddress;
  if (!ip) throw new Error(`${alias} has no address on ${lab.network.name} (disconnected or stopped?)`);
  return ip;
}

// ---------------------------------------------------------------- disconnect

/** `docker network disconnect` from the lab network; heal reconnects under the same aliases. */
export class DisconnectFault extends Fault {
  readonly kind = "disconnect";
  readonly #id: string;
  #aliases: string[] = [];
  #ip = "";

  constructor(
    private readonly lab: FaultLab,
    private readonly alias: string,
    opts: FaultOptions = {},
  ) {
    super(alias, { ...opts, run: lab.run }, lab.teardown);
    this.#id = lab.member(alias).id;
  }

  async #endpoint(): Promise<Docker.NetworkInfo | undefined> {
    return (await docker().getContainer(this.#id).inspect()).NetworkSettings.Networks?.[this.lab.network.name];
  }

  protected async doPrepare(): Promise<Detail> {
    const ep = await this.#endpoint();
    if (!ep) throw new Error(`${this.alias} is not on ${this.lab.network.name}`);
    // The engine lists the container's short id (12 hex) among the aliases and adds it back
    // itself. (Only that: an alias such as "b" may well be a prefix of the id.)
    this.#aliases = ((ep.Aliases ?? []) as string[]).filter((a) => !(a.length >= 12 && this.#id.startsWith(a)));
    this.#ip = ep.IPAddress;
    return { aliases: this.#aliases, ip: this.#ip };
  }
  protected async doInject(): Promise<void> {
    await docker().getNetwork(this.lab.network.id).disconnect({ Container: this.#id, Force: true });
  }
  protected async inEffect(): Promise<Detail | undefined> {
    return (await this.#endpoint()) ? undefined : {};
  }
  protected async doHeal(): Promise<Detail> {
    if (await this.#endpoint().catch(() => undefined)) return { alreadyConnected: true };
    try {
      await docker()
        .getNetwork(this.lab.network.id)
        .connect({ Container: this.#id, EndpointConfig: { Aliases: this.#aliases } });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return { gone: true };
      throw err;
    }
    return {};
  }
  protected async isHealed(): Promise<Detail | undefined> {
    let ep: Docker.NetworkInfo | undefined;
    try {
      ep = await this.#endpoint();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return { gone: true };
      throw err;
    }
    // A stopped container is connected but has no address until it starts.
    if (!ep) return undefined;
    const aliases = (ep.Aliases ?? []) as string[];
    const missing = this.#aliases.filter((a) => !aliases.includes(a));
    if (missing.length) throw new Error(`reconnected without aliases ${missing.join(", ")}`);
    return { aliases: this.#aliases, ...(ep.IPAddress ? await refreshIp(this.lab, this.alias) : { stopped: true }) };
  }
}

// ---------------------------------------------------------------- helper-based faults

export type Direction = "both" | "out" | "in";

/** A probe from inside the target's namespace: can it reach ip:port? */
export type ProbeResult = "open" | "refused" | "timeout" | "error";
const reachable = (r: ProbeResult) => r === "open" || r === "refused";

/** Bash that prints "<ip> <result>" per address, probing all at once. */
function probeScript(ips: string[], port: number, timeoutS: number): string {
  return [
    `probe() { local out rc; out=$(timeout ${timeoutS} bash -c "exec 3<>/dev/tcp/$1/${port}" 2>&1) && rc=0 || rc=$?`,
    `  if [ $rc -eq 0 ]; then echo "$1 open"; elif [ $rc -eq 124 ]; then echo "$1 timeout";`,
    `  elif [[ $out == *refused* ]]; then echo "$1 refused"; else echo "$1 error"; fi; }`,
    ...ips.map((ip) => `probe ${ip} &`),
    "wait",
  ].join("\n");
}

function parseProbes(out: string): Map<string, ProbeResult> {
  const m = new Map<string, ProbeResult>();
  for (const line of out.split("\n")) {
    const [ip, r] = line.trim().split(/\s+/);
    if (ip && r) m.set(ip, r as ProbeResult);
  }
  return m;
}

export interface HelperFaultOptions extends FaultOptions {}

abstract class HelperFault extends Fault {
  protected helper?: Helper;
  /** iptables chain / tc handle owner name, unique per process and fault. */
  protected readonly chain = `FL-${process.pid}-${this.id}`;
  protected readonly targetId: string;

  constructor(
    protected readonly lab: FaultLab,
    protected readonly alias: string,
    target: string,
    opts: FaultOptions,
  ) {
    super(target, { ...opts, run: lab.run }, lab.teardown);
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

// ---------------------------------------------------------------- iptables faults

type Hook = "INPUT" | "OUTPUT";
/** One DROP rule: the hook it sits in and its match (e.g. "-s 10.0.0.3/32"). */
interface DropRule {
  hook: Hook;
  match: string;
}

/**
 * DROP rules in chains of their own, one per hook (FL-<pid>-<fault>-in / -out), jumped to
 * first from INPUT / OUTPUT. One chain per hook matters: a chain shared by both hooks would
 * run incoming packets through the outgoing rules too (`! -o lo` matches an incoming packet,
 * which has no output interface), doubling the loss.
 */
abstract class IptablesFault extends HelperFault {
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

// ---------------------------------------------------------------- partition

export interface PartitionOptions extends HelperFaultOptions {
  /** "both" (default): no packets either way; "out": target -> peers dropped; "in": peers -> target dropped. */
  direction?: Direction;
  /** Port the probe connects to on each peer (default 9: nothing listens, so a reachable peer
   * answers with a reset at once; a partitioned one does not answer). */
  probePort?: number;
  /** How long the probe waits for an answer (default 250 ms; lab RTTs are well under 1 ms). */
  probeTimeoutMs?: number;
  /** Skip the probe: rules present = in effect. */
  probe?: boolean;
}

/**
 * Drop packets between the target and the peers (iptables DROP by peer address in the target's
 * namespace). Open TCP connections stall silently and resume on heal; nobody is told.
 * In effect: the rules are listed and a TCP connect from inside the target to every peer gets
 * no answer. Healed: the rules are gone and every peer answers again.
 */
export class PartitionFault extends IptablesFault {
  readonly kind: string;
  readonly direction: Direction;
  #peerIps = new Map<string, string>();

  constructor(
    lab: FaultLab,
    alias: string,
    readonly peers: string[],
    private readonly popts: PartitionOptions = {},
  ) {
    const direction = popts.direction ?? "both";
    const arrow = direction === "both" ? "<->" : direction === "out" ? "->" : "<-";
    super(lab, alias, `${alias}${arrow}${peers.join(",")}`, popts);
    if (!peers.length) throw new Error("partition: name at least one peer");
    if (peers.includes(alias)) throw new Error(`partition: ${alias} cannot be partitioned from itself`);
    this.direction = direction;
    this.kind = direction === "both" ? "partition" : `partition.${direction}`;
  }

  protected async prepareMore(): Promise<Detail> {
    for (const p of this.peers) this.#peerIps.set(p, await ipOnLab(this.lab, p));
    return { peers: Object.fromEntries(this.#peerIps), direction: this.direction };
  }
  protected dropRules(): DropRule[] {
    return [...this.#peerIps.values()].flatMap((ip) => [
      ...(this.direction !== "in" ? [{ hook: "OUTPUT" as const, match: `-d ${ip}/32` }] : []),
      ...(this.direction !== "out" ? [{ hook: "INPUT" as const, match: `-s ${ip}/32` }] : []),
    ]);
  }
  /** Probe every peer from inside the target's namespace (TCP connect; see probePort). */
  async probe(): Promise<Map<string, ProbeResult>> {
    return (await this.#observe(false)).probes;
  }

  /** The iptables rules and (unless probing is off) the probes, in one exec. */
  async #observe(rules = true): Promise<{ rules: string[]; probes: Map<string, ProbeResult> }> {
    const timeoutS = (this.popts.probeTimeoutMs ?? 250) / 1000;
    const probing = this.popts.probe !== false;
    const script = [rules ? "iptables -w -S" : "", "echo ---", probing ? probeScript([...this.#peerIps.values()], this.popts.probePort ?? 9, timeoutS) : ""].join("\n");
    const out = (await this.helper!.sh(script)).stdout;
    const [before, after = ""] = out.split("---\n");
    return { rules: before!.split("\n").filter(Boolean), probes: parseProbes(after) };
  }

  protected override async present(): Promise<Detail | undefined> {
    const { rules, probes } = await this.#observe();
    if (!this.rulesPresent(rules)) return undefined;
    if (this.popts.probe === false) return { probe: "skipped" };
    // Every peer must have been probed and none may answer.
    if (![...this.#peerIps.values()].every((ip) => probes.has(ip) && !reachable(probes.get(ip)!))) return undefined;
    return { probe: Object.fromEntries(probes) };
  }
  protected override async absent(): Promise<Detail | undefined> {
    const { rules, probes } = await this.#observe();
    if (rules.some((l) => this.mentions(l))) return undefined;
    if (this.popts.probe === false) return { probe: "skipped" };
    if (![...this.#peerIps.values()].every((ip) => reachable(probes.get(ip) ?? "error"))) return undefined;
    return { probe: Object.fromEntries(probes) };
  }
}

// ---------------------------------------------------------------- packet loss

export interface LossOptions extends HelperFaultOptions {
  /** Only traffic with these members (default: all traffic but loopback). */
  peers?: string[];
  /** "both" (default): each packet either way is dropped with the probability. */
  direction?: Direction;
}

/**
 * Random packet loss (iptables statistic match), in the target's namespace. In effect: the
 * rules are listed (loss is statistical; no single probe proves it).
 */
export class LossFault extends IptablesFault {
  readonly kind = "loss";
  readonly direction: Direction;
  #peerIps: string[] = [];

  constructor(
    lab: FaultLab,
    alias: string,
    readonly probability: number,
    private readonly lopts: LossOptions = {},
  ) {
    super(lab, alias, lopts.peers?.length ? `${alias}~${lopts.peers.join(",")}` : alias, lopts);
    if (!(probability > 0 && probability <= 1)) throw new Error(`loss: probability must be in (0, 1], got ${probability}`);
    this.direction = lopts.direction ?? "both";
  }
  protected async prepareMore(): Promise<Detail> {
    for (const p of this.lopts.peers ?? []) this.#peerIps.push(await ipOnLab(this.lab, p));
    return { probability: this.probability, direction: this.direction, ...(this.#peerIps.length ? { peers: this.#peerIps } : {}) };
  }
  protected dropRules(): DropRule[] {
    const stat = `-m statistic --mode random --probability ${this.probability}`;
    const hooks: Hook[] = this.direction === "both" ? ["INPUT", "OUTPUT"] : this.direction === "out" ? ["OUTPUT"] : ["INPUT"];
    return hooks.flatMap((hook) => {
      // Never loopback: the engine's DNS answers on 127.0.0.11 inside the namespace.
      const iface = hook === "INPUT" ? "! -i lo" : "! -o lo";
      const who = hook === "INPUT" ? "-s" : "-d";
      return this.#peerIps.length ? this.#peerIps.map((ip) => ({ hook, match: `${iface} ${who} ${ip}/32 ${stat}` })) : [{ hook, match: `${iface} ${stat}` }];
    });
  }
}

// ---------------------------------------------------------------- bandwidth

export interface BandwidthOptions extends HelperFaultOptions {
  /** tbf burst in bytes (default: rate/100 per second, at least 4 KiB). */
  burstBytes?: number;
  /** Longest a packet may wait in the shaper before it is dropped (default 1000 ms). */
  latencyMs?: number;
}

const RATE = /^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)$/;
const UNIT = { bit: 1, kbit: 1e3, mbit: 1e6, gbit: 1e9 } as const;

/** Bits per second of a tc rate such as "1mbit". */
export function rateBits(rate: string): number {
  const m = RATE.exec(rate.toLowerCase());
  if (!m) throw new Error(`bandwidth: rate must look like 512kbit, 1mbit, 1.5mbit, got ${JSON.stringify(rate)}`);
  return Number(m[1]) * UNIT[m[2] as keyof typeof UNIT];
}

/**
 * Limit what the target sends on its lab interface (tc tbf on egress). This kernel has no
 * ingress policing and no ifb: to slow what the target receives, limit its peer's egress.
 * In effect: the qdisc is listed.
 */
export class BandwidthFault extends HelperFault {
  readonly kind = "bandwidth";
  #iface = "";
  static readonly HANDLE = "f1a:";

  constructor(
    lab: FaultLab,
    alias: string,
    readonly rate: string,
    private readonly bopts: BandwidthOptions = {},
  ) {
    super(lab, alias, alias, bopts);
    rateBits(rate);
  }
  protected async prepareMore(): Promise<Detail> {
    return { rate: this.rate };
  }
  protected override async doPrepare(): Promise<Detail> {
    const d = await super.doPrepare();
    const ip = await ipOnLab(this.lab, this.alias);
    const out = (await this.helper!.sh("ip -o -4 addr show")).stdout;
    const line = out.split("\n").find((l) => l.includes(` ${ip}/`));
    const iface = line?.split(/\s+/)[1]?.replace(/@.*$/, "");
    if (!iface) throw new Error(`bandwidth: no interface with ${ip} in ${this.alias}'s namespace`);
    this.#iface = iface;
    return { ...d, iface };
  }
  protected applyCommands(): string[] {
    const bps = rateBits(this.rate) / 8;
    const burst = this.bopts.burstBytes ?? Math.max(4096, Math.ceil(bps / 100));
    return [`tc qdisc add dev ${this.#iface} root handle ${BandwidthFault.HANDLE} tbf rate ${this.rate} burst ${burst} latency ${this.bopts.latencyMs ?? 1000}ms`];
  }
  protected healCommands(): string[] {
    // Only our qdisc: the grep keeps a shaper someone else set.
    return [`tc qdisc show dev ${this.#iface} 2>/dev/null | grep -q 'qdisc tbf ${BandwidthFault.HANDLE} root' && tc qdisc del dev ${this.#iface} root`];
  }
  /** The root qdiscs of our interface; undefined when the interface is gone (a disconnect
   * removes it, and a reconnect brings a new one, e.g. eth1, without the shaper). */
  async #qdisc(): Promise<string | undefined> {
    const out = (await this.helper!.sh(`ip link show dev ${this.#iface} >/dev/null 2>&1 || { echo GONE; exit 0; }\ntc qdisc show dev ${this.#iface}`)).stdout;
    return out.trim() === "GONE" ? undefined : out;
  }
  protected async present(): Promise<Detail | undefined> {
    const q = await this.#qdisc();
    const line = q?.split("\n").find((l) => l.startsWith(`qdisc tbf ${BandwidthFault.HANDLE} root`));
    return line ? { qdisc: line.trim() } : undefined;
  }
  protected async absent(): Promise<Detail | undefined> {
    const q = await this.#qdisc();
    if (q === undefined) return { vanished: `${this.#iface} is gone (the target was disconnected); its shaper went with it` };
    return q.includes(`qdisc tbf ${BandwidthFault.HANDLE} root`) ? undefined : {};
  }
}
