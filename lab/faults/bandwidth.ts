// bandwidth: limit what the target sends on its lab interface (tc tbf on egress), from a helper
// container; heal removes the shaper.
import { ipOnLab } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { HelperFault } from "./helper.ts";
import { defineFault, needsHelper } from "./kind.ts";

export interface BandwidthOptions extends FaultOptions {
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

  readonly rate: string;
  private readonly bopts: BandwidthOptions;
  constructor(
    lab: FaultLab,
    alias: string,
    rate: string,
    bopts: BandwidthOptions = {},
  ) {
    super(lab, alias, alias, bopts);
    this.rate = rate;
    this.bopts = bopts;
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

export const bandwidth = defineFault({
  name: "bandwidth",
  family: "network",
  describe: "limit what the member sends (tc tbf on egress, e.g. \"1mbit\"); heal removes the shaper",
  available: needsHelper,
  make: (lab: FaultLab, alias: string, rate: string, opts: BandwidthOptions = {}) => new BandwidthFault(lab, alias, rate, opts),
  bench: [{ label: "bandwidth 1mbit (tbf)", observedBy: "tc qdisc show", make: (bed) => new BandwidthFault(bed.lab, "a", "1mbit") }],
});
