// loss: random packet loss (iptables statistic match) in the target's namespace, from a helper
// container; all traffic but loopback, or only with some peers; heal removes the rules.
import { ipOnLab } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { IptablesFault, type Direction, type DropRule, type Hook } from "./helper.ts";
import { defineFault, needsHelper } from "./kind.ts";

export interface LossOptions extends FaultOptions {
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

  readonly probability: number;
  private readonly lopts: LossOptions;
  constructor(
    lab: FaultLab,
    alias: string,
    probability: number,
    lopts: LossOptions = {},
  ) {
    super(lab, alias, lopts.peers?.length ? `${alias}~${lopts.peers.join(",")}` : alias, lopts);
    this.probability = probability;
    this.lopts = lopts;
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

export const loss = defineFault({
  name: "loss",
  family: "network",
  describe: "drop each packet with a probability (iptables statistic), all traffic or with some peers; heal removes the rules",
  available: needsHelper,
  make: (lab: FaultLab, alias: string, probability: number, opts: LossOptions = {}) => new LossFault(lab, alias, probability, opts),
  bench: [{ label: "packet loss 30 %", observedBy: "iptables -S", make: (bed) => new LossFault(bed.lab, "a", 0.3) }],
});
