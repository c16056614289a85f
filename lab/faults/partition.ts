// partition: drop packets between the target and its peers (iptables DROP by peer address in
// the target's namespace, from a helper container). Open TCP connections stall silently and
// resume on heal; nobody is told. One way ("out" / "in") or both.
import { ipOnLab } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { IptablesFault, type Direction, type DropRule } from "./helper.ts";
import { defineFault, needsHelper } from "./kind.ts";

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

export interface PartitionOptions extends FaultOptions {
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

const list = (x: string | string[]) => (Array.isArray(x) ? x : [x]);
const PROBED = "iptables -S + TCP probe from inside (250 ms probe timeout)";

export const partition = defineFault({
  name: "partition",
  family: "network",
  describe: "iptables DROP between the member and its peers, both ways or one way; open connections stall, heal removes the rules",
  available: needsHelper,
  make: (lab: FaultLab, alias: string, peers: string | string[], opts: PartitionOptions = {}) => new PartitionFault(lab, alias, list(peers), opts),
  bench: [
    { label: "partition both ways", observedBy: PROBED, make: (bed) => new PartitionFault(bed.lab, "a", ["b"]) },
    { label: "partition one way (out)", observedBy: PROBED, make: (bed) => new PartitionFault(bed.lab, "a", ["b"], { direction: "out" }) },
    { label: "partition, rules only (probe: false)", observedBy: "iptables -S", make: (bed) => new PartitionFault(bed.lab, "a", ["b"], { probe: false }) },
  ],
});
