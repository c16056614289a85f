// Wire faults: thin wrappers over the wire tap's rules (lab/clients/tap.ts), in the same life
// cycle as every other fault. Inject adds the rule; it is in effect once the tap lists it
// active (an immediate rule, e.g. a freeze with no match, once it has fired). The rule records
// when it fired: fired() waits for that and puts it in the timeline. Heal removes the rule,
// which also undoes what it held (half-open connections, a freeze, delayed frames).
import type { TapAction, TapControl, TapMatch, TapRule, TapRuleSpec } from "../clients/tap.ts";
import type { TeardownStack } from "../topology/teardown.ts";
import { Fault, type Detail, type FaultOptions } from "./fault.ts";
import { nowMs, type RunLike } from "./timeline.ts";

/** The lab side of a tap: Lab has one tap per node host (lab.tap(node)). */
export interface TappedLab {
  id: string;
  run: RunLike;
  teardown: TeardownStack;
  tap(node: string): TapControl;
}

/**
 * Which tap: a TapControl on its own, or { lab, node } for the tap in front of that node host
 * (then the lab's run timeline records the steps and the lab's teardown heals the fault).
 */
export type TapHost = TapControl | { lab: TappedLab; node: string };

function unpack(on: TapHost): { tap: TapControl; run?: RunLike; teardown?: TeardownStack; node?: string } {
  return "lab" in on ? { tap: on.lab.tap(on.node), run: on.lab.run, teardown: on.lab.teardown, node: on.node } : { tap: on };
}

const actionName = (a: TapAction): string => Object.keys(a)[0]!;

export interface WireOptions extends FaultOptions {
  /** Spend the rule on its first firing (the tap keeps it listed, inactive). */
  once?: boolean;
  /** Shown as the fault's target in the timeline (default: the match, briefly). */
  label?: string;
  /** The run whose timeline records the steps (default: the host's run, else memory only). */
  run?: RunLike;
}

export class WireFault extends Fault {
  readonly kind: string;
  readonly tap: TapControl;
  readonly ruleId: string;
  /** The rule as the tap last reported it (after heal: just before its removal). */
  rule?: TapRule;

  constructor(
    on: TapHost,
    readonly spec: Omit<TapRuleSpec, "id">,
    opts: WireOptions = {},
  ) {
    const { tap, run, teardown, node } = unpack(on);
    const match = spec.match && Object.keys(spec.match).length ? ` ${JSON.stringify(spec.match)}` : "";
    super(opts.label ?? `tap${node ? ` ${node}` : ""}${match}`, { ...opts, run: opts.run ?? run }, teardown);
    this.tap = tap;
    this.kind = `wire.${actionName(spec.action)}`;
    this.ruleId = `fleetlab-${process.pid}-${this.id}`;
    if (opts.once !== undefined) this.spec = { ...spec, once: opts.once };
  }

  get #immediate(): boolean {
    return actionName(this.spec.action) === "freeze" && !Object.keys(this.spec.match ?? {}).length;
  }

  protected async doPrepare(): Promise<Detail> {
    const h = await this.tap.health();
    return { upstream: h.upstream };
  }
  protected async doInject(): Promise<Detail> {
    this.rule = await this.tap.addRule({ ...this.spec, id: this.ruleId });
    return { rule: this.ruleId, createdAt: this.rule.createdAt };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const r = await this.tap.rule(this.ruleId);
    if (!r) throw new Error(`the tap does not list rule ${this.ruleId}`);
    this.rule = r;
    if (this.#immediate) return r.firstFired ? { fired: r.firstFired } : undefined;
    return r.active || r.firstFired ? {} : undefined;
  }
  protected async doHeal(): Promise<Detail> {
    const r = await this.tap.rule(this.ruleId);
    if (!r) return { alreadyRemoved: true };
    this.rule = r;
    await this.tap.removeRule(this.ruleId);
    return { hits: r.hits, firstFired: r.firstFired, lastFired: r.lastFired };
  }
  protected async isHealed(): Promise<Detail | undefined> {
    return (await this.tap.rule(this.ruleId)) ? undefined : {};
  }

  /**
   * Wait until the rule has fired (on the frame that matched it) and record that in the
   * timeline: t is the tap's time of the trigger frame, ms the time since inject.
   */
  async fired(timeoutMs = 30_000): Promise<NonNullable<TapRule["firstFired"]>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.lifetime.aborted) throw new Error(`${this} was healed before its rule fired`);
      const r = await this.tap.rule(this.ruleId);
      if (r?.firstFired) {
        this.rule = r;
        this.record("fired", r.firstFired.t, this.injectedAt ? r.firstFired.t - this.injectedAt : 0, { seq: r.firstFired.seq, conn: r.firstFired.conn, hits: r.hits });
        return r.firstFired;
      }
      if (Date.now() >= deadline) throw new Error(`${this}: rule ${this.ruleId} did not fire within ${timeoutMs} ms (now ${nowMs()})`);
      await new Promise((res) => setTimeout(res, 25));
    }
  }
}

/** Hold matching frames `ms` before forwarding them (later frames queue behind, order kept). */
export const delay = (on: TapHost, ms: number, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { delay: { ms } } }, opts);

/** Drop the matching frame and the next count-1 in that direction of that connection. */
export const drop = (on: TapHost, match: TapMatch, opts: WireOptions & { count?: number } = {}) =>
  new WireFault(on, { match, action: { drop: opts.count ? { count: opts.count } : {} } }, opts);

/** Close the connection at the matching frame: 1001/1011 send a close frame to `side`, 1006
 * aborts the sockets without one; the other side hears nothing until heal or its timeouts. */
export const close = (on: TapHost, code: 1001 | 1006 | 1011, opts: WireOptions & { side?: "node" | "gw" | "both"; match?: TapMatch } = {}) =>
  new WireFault(on, { match: opts.match, action: { close: { code, side: opts.side ?? "both" } } }, opts);

/** Stop forwarding both ways on the matching connection; sockets stay open; held frames are
 * delivered on heal. */
export const halfOpen = (on: TapHost, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { halfOpen: {} } }, opts);

/** Drop pong frames from `dir`'s sender (e.g. "node->gw": the node's pongs never arrive). */
export const withholdPong = (on: TapHost, dir: "node->gw" | "gw->node", match: Omit<TapMatch, "dir"> = {}, opts?: WireOptions) =>
  new WireFault(on, { match: { ...match, dir }, action: { withholdPong: {} } }, opts);

/** Half-open every connection, new ones too (no match: at once). */
export const freeze = (on: TapHost, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { freeze: {} } }, opts);
