// What the registry (registry.ts) lists about a fault kind, after etcd's failpoints: its name,
// family, one line on what it does, where it is available, how to make one, and what the bench
// measures of it. Each kind file exports its entry made with defineFault().
import type { TapControl } from "../clients/tap.ts";
import type { Fault, FaultLab } from "./fault.ts";

export type Family = "process" | "network" | "wire";
export const FAMILIES: readonly Family[] = ["process", "network", "wire"];

/** What `available` looks at. Lab (lab/topology/lab.ts) has this shape; so do the test beds. */
export interface LabTraits {
  /** The topology, when there is one (wire kinds look at spec.tap.enabled). */
  spec?: { tap: { enabled: boolean } };
  /** The base image, which helper containers run on. */
  images?: { base?: { tag: string } };
  /** The wire tap in front of a node host (Lab; the bench's loopback tap). */
  tap?(node: string): unknown;
}

/** What the bench hands each recipe: members "a" and "b" (base-image echo servers on an
 * internal network) and a loopback wire tap. */
export interface BenchBed {
  lab: FaultLab;
  /** A tap as a wire fault takes it ({ lab, node }: steps in the bed's timeline, heal on its teardown). */
  tap: { lab: FaultLab & { tap(node: string): TapControl }; node: string };
}

/** One row of `make bench`: inject -> in effect and heal -> healed of this fault, repeated. */
export interface BenchRecipe {
  /** Row label, e.g. "partition one way (out)". */
  label: string;
  /** What "in effect" and "healed" are observed by. */
  observedBy: string;
  make(bed: BenchBed): Fault;
}

export interface FaultKind<N extends string = string, M extends (...args: never[]) => Fault = (...args: never[]) => Fault> {
  /** Its name in the registry and the API: "kill" is faults.kill, "wire.close" is faults.wire.close. */
  readonly name: N;
  readonly family: Family;
  /** One line: what it does and what heals it. */
  readonly describe: string;
  /** true, or why this lab cannot have it (faults.<name> throws that reason). */
  available(lab: LabTraits): true | string;
  /** A new fault of this kind, not yet prepared. */
  readonly make: M;
  /** What `make bench` measures of it (at least one recipe). */
  readonly bench: readonly BenchRecipe[];
}

/** Any registry entry. */
export type AnyFaultKind = FaultKind<string, (...args: never[]) => Fault>;

const KIND = Symbol.for("fleetlab.faultKind");

/** A kind file's registry entry (the name is kept as a literal type for the faults API). */
export function defineFault<const N extends string, M extends (...args: never[]) => Fault>(kind: FaultKind<N, M>): FaultKind<N, M> {
  return Object.freeze(Object.assign(kind, { [KIND]: true }));
}

export const isFaultKind = (x: unknown): x is AnyFaultKind => typeof x === "object" && x !== null && KIND in x;

// ---- where kinds are available ----

/** Process kinds and disconnect: the engine API on any lab member. */
export const anywhere = (): true => true;

/** Kinds that run iptables/tc from a helper container (the base image, NET_ADMIN). */
export const needsHelper = (lab: LabTraits): true | string =>
  lab.images?.base?.tag ? true : "needs the base image for its helper container (lab.images.base is not set)";

/** Wire kinds: rules in the wire tap in front of a node host. */
export const needsTap = (lab: LabTraits): true | string => {
  if (lab.spec && !lab.spec.tap.enabled) return "needs wire taps: this topology has tap.enabled false";
  return typeof lab.tap === "function" ? true : "needs a wire tap (a lab with tap.enabled, or a TapControl)";
};

/** The lab a maker's first argument belongs to: a lab itself, or the lab of { lab, node }
 * (undefined for a bare TapControl: nothing to check). */
function labOf(first: unknown): LabTraits | undefined {
  if (typeof first !== "object" || first === null) return undefined;
  if ("lab" in first && "node" in first) return (first as { lab: LabTraits }).lab;
  return "member" in first ? (first as LabTraits) : undefined;
}

/** The kind's maker, refusing (with the reason) where the kind is not available. */
export function checkedMake<K extends AnyFaultKind>(kind: K): K["make"] {
  const make = kind.make as unknown as (...args: unknown[]) => Fault;
  return ((...args: unknown[]) => {
    const lab = labOf(args[0]);
    const why = lab ? kind.available(lab) : true;
    if (why !== true) throw new Error(`fault ${kind.name} is not available here: ${why}`);
    return make(...args);
  }) as unknown as K["make"];
}
