// Wire faults: thin wrappers over the wire tap's rules (lab/clients/tap.ts), in the same life
// cycle as every other fault. Inject adds the rule; it is in effect once the tap lists it
// active (an immediate rule, e.g. a freeze with no match, once it has fired). The rule records
// when it fired: fired() waits for that and puts it in the timeline. Heal removes the rule,
// which also undoes what it held (half-open connections, a freeze, delayed frames).
//
// One class, one kind per tap action: the registry lists wire.delay, wire.drop, wire.close,
// wire.halfOpen, wire.withholdPong, wire.freeze, wire.respond and wire.inject each as its own
// entry (below). wire.inject is the one that writes: a frame of the tap's own into a live
// connection, recorded with action "inject" in the tap transcript.
import { closeCodeProblem, type CloseCode, type TapAction, type TapControl, type TapMatch, type TapRule, type TapRuleSpec } from "../clients/tap.ts";
import type { TeardownStack } from "../topology/teardown.ts";
import { waitFor, WaitTimeout } from "../core/wait.ts";
import { Fault, type Detail, type FaultOptions } from "./fault.ts";
import { defineFault, needsTap, type BenchRecipe } from "./kind.ts";
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

  readonly spec: Omit<TapRuleSpec, "id">;
  constructor(
    on: TapHost,
    spec: Omit<TapRuleSpec, "id">,
    opts: WireOptions = {},
  ) {
    const { tap, run, teardown, node } = unpack(on);
    const match = spec.match && Object.keys(spec.match).length ? ` ${JSON.stringify(spec.match)}` : "";
    super(opts.label ?? `tap${node ? ` ${node}` : ""}${match}`, { ...opts, run: opts.run ?? run }, teardown);
    this.spec = spec;
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
    let r: TapRule | undefined;
    try {
      r = await waitFor(`${this} rule ${this.ruleId} to fire`, async () => {
        const now = await this.tap.rule(this.ruleId);
        return now?.firstFired ? now : undefined;
      }, { timeoutMs, intervalMs: 25, signal: this.lifetime });
    } catch (err) {
      if (this.lifetime.aborted) throw new Error(`${this} was healed before its rule fired`, { cause: err });
      if (err instanceof WaitTimeout) throw new Error(`${this}: rule ${this.ruleId} did not fire within ${timeoutMs} ms (now ${nowMs()})`, { cause: err });
      throw err;
    }
    const first = r.firstFired!;
    this.rule = r;
    this.record("fired", first.t, this.injectedAt ? first.t - this.injectedAt : 0, { seq: first.seq, conn: first.conn, hits: r.hits });
    return first;
  }
}

// ---------------------------------------------------------------- the kinds, one per action

const RULE_LISTED = "tap lists the rule (loopback tap)";
const bench = (label: string, make: BenchRecipe["make"], observedBy = RULE_LISTED): BenchRecipe[] => [{ label: `wire: ${label}`, observedBy, make }];

/** Hold matching frames `ms` before forwarding them (later frames queue behind, order kept). */
const delay = (on: TapHost, ms: number, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { delay: { ms } } }, opts);
export const wireDelay = defineFault({
  name: "wire.delay",
  family: "wire",
  describe: "hold matching frames for ms before forwarding them (order kept); heal forwards what is held",
  available: needsTap,
  make: delay,
  bench: bench("delay 100 ms", (bed) => delay(bed.tap, 100, { method: "worker.launch.v1" })),
});

/** Drop the matching frame and the next count-1 in that direction of that connection. */
const drop = (on: TapHost, match: TapMatch, opts: WireOptions & { count?: number } = {}) =>
  new WireFault(on, { match, action: { drop: opts.count ? { count: opts.count } : {} } }, opts);
export const wireDrop = defineFault({
  name: "wire.drop",
  family: "wire",
  describe: "drop the matching frame (and the next count-1 that way on that connection)",
  available: needsTap,
  make: drop,
  bench: bench("drop at a frame", (bed) => drop(bed.tap, { method: "worker.launch.v1" })),
});

/** Close the connection at the matching frame: any sendable close code (1000-1003, 1007-1014,
 * 3000-4999; e.g. 1001 going away, 1011 internal error, 1012 service restart) sends a close frame
 * with it to `side`, 1006 aborts the sockets without one; the other side hears nothing until heal
 * or its timeouts. Any other code (1004, 1005, 1015, out of range) is refused here, when the
 * fault is made, with the reason. */
const close = (on: TapHost, code: CloseCode, opts: WireOptions & { side?: "node" | "gw" | "both"; match?: TapMatch; after?: boolean } = {}) => {
  const bad = closeCodeProblem(code);
  if (bad) throw new Error(`faults.wire.close: ${bad}`);
  return new WireFault(on, { match: opts.match, action: { close: { code, side: opts.side ?? "both", ...(opts.after ? { after: true } : {}) } } }, opts);
};
export const wireClose = defineFault({
  name: "wire.close",
  family: "wire",
  describe: "close the connection at the matching frame (a close frame with any sendable code, or 1006: the sockets aborted; after: the frame first)",
  available: needsTap,
  make: close,
  bench: bench("close 1006 at a frame", (bed) => close(bed.tap, 1006, { match: { method: "worker.launch.v1" } })),
});

/** Stop forwarding both ways on the matching connection; sockets stay open; held frames are
 * delivered on heal. */
const halfOpen = (on: TapHost, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { halfOpen: {} } }, opts);
export const wireHalfOpen = defineFault({
  name: "wire.halfOpen",
  family: "wire",
  describe: "stop forwarding both ways on the matching connection, sockets open; heal delivers what was held",
  available: needsTap,
  make: halfOpen,
  bench: bench("half-open", (bed) => halfOpen(bed.tap, { path: "/" })),
});

/** Drop pong frames from `dir`'s sender (e.g. "node->gw": the node's pongs never arrive). */
const withholdPong = (on: TapHost, dir: "node->gw" | "gw->node", match: Omit<TapMatch, "dir"> = {}, opts?: WireOptions) =>
  new WireFault(on, { match: { ...match, dir }, action: { withholdPong: {} } }, opts);
export const wireWithholdPong = defineFault({
  name: "wire.withholdPong",
  family: "wire",
  describe: "drop the pongs one side sends (keepalives fail while data still flows)",
  available: needsTap,
  make: withholdPong,
  bench: bench("withhold pongs", (bed) => withholdPong(bed.tap, "node->gw")),
});

/** Half-open every connection, new ones too (no match: at once). */
const freeze = (on: TapHost, match?: TapMatch, opts?: WireOptions) => new WireFault(on, { match, action: { freeze: {} } }, opts);
export const wireFreeze = defineFault({
  name: "wire.freeze",
  family: "wire",
  describe: "half-open every connection through the tap, new ones too (no match: at once); heal delivers what was held",
  available: needsTap,
  make: freeze,
  bench: bench("freeze (immediate)", (bed) => freeze(bed.tap), "the rule fired (loopback tap)"),
});

/** Answer the node's matching HTTP request (e.g. its WebSocket upgrade) with `status` from the
 * tap itself, as a reverse proxy whose gateway is down would (502), and close; the gateway never
 * sees the request. Until heal (or once, with once: true) every matching request gets it. */
const respond = (on: TapHost, status: number, match: Omit<TapMatch, "kind"> = {}, opts?: WireOptions) =>
  new WireFault(on, { match: { ...match, kind: "http" }, action: { respond: { status } } }, opts);
export const wireRespond = defineFault({
  name: "wire.respond",
  family: "wire",
  describe: "answer the node's matching HTTP request (its upgrade) with a status such as 502 from the tap, and close",
  available: needsTap,
  make: respond,
  bench: bench("respond 502 to the upgrade", (bed) => respond(bed.tap, 502, { path: "/" })),
});

/** Write a frame of the tap's own (`text`, one text frame) to `to` on the connection of the
 * matching frame, right after it (before: true, right before it); the trigger frame goes on as
 * usual and the written frame is in the tap transcript with action "inject". Once by default
 * (one frame); the answer, if the receiver sends one, is forwarded like any frame. */
const inject = (on: TapHost, to: "node" | "gw", text: string, match: TapMatch, opts: WireOptions & { before?: boolean } = {}) =>
  new WireFault(on, { match, action: { inject: { to, text, ...(opts.before ? { before: true } : {}) } }, once: opts.once ?? true }, opts);
export const wireInject = defineFault({
  name: "wire.inject",
  family: "wire",
  describe: "write a frame of the tap's own to the node or the gateway at the matching frame (a stale epoch, a result after revocation, a malformed field)",
  available: needsTap,
  make: inject,
  bench: bench("inject a frame", (bed) => inject(bed.tap, "node", JSON.stringify({ type: "event", event: "fleetlab.bench", payload: {} }), { method: "worker.launch.v1" })),
});
