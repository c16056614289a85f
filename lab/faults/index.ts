// The fault library: every fault has one life cycle (prepare, inject, in effect, heal,
// healed, clean up) timed into the run's timeline (faults.jsonl), and is healed when the run
// ends however it ends. The makers below come from the registry (registry.ts): one per kind,
// "kill" as faults.kill, "wire.close" as faults.wire.close.
//
//   import { faults } from "../lab/faults/index.ts";
//   const f = faults.partition(lab, "node-1", "gateway");
//   await f.inject();            // { injectMs, inEffectMs, totalMs, detail }
//   await f.heal();              // { healMs, healedMs, cleanupMs, totalMs, detail }
//   (whatever is still active when the scenario ends is healed by the lab's teardown stack)
//
//   const armed = await faults.injectWhen(faults.when.tapFrame(lab.tap("node-1"), { command: "worker.launch.v1" }), faults.kill(lab, "node-1"));
//   await armed.injected;
//
//   const cut = faults.wire.close({ lab, node: "node-1" }, 1006, { match: { command: "worker.launch.v1" } });
//   await cut.inject(); await cut.fired(); ... await cut.heal();
import type { Lab } from "../topology/lab.ts";
import type { FaultLab } from "./fault.ts";
import { checkedMake, type AnyFaultKind } from "./kind.ts";
import { allFaults, type RegisteredFault } from "./registry.ts";
import * as trigger from "./trigger.ts";
import type { TappedLab } from "./wire.ts";
import { timelineOf } from "./timeline.ts";

export { Fault, FaultAborted, defaultTimeline, type FaultLab, type FaultOptions, type InjectTimings, type HealTimings } from "./fault.ts";
export { FaultTimeline, timelineOf, TIMELINE_FILE, type TimelineEntry, type FaultStep } from "./timeline.ts";
export { type FaultKind, type Family, type LabTraits, type BenchBed, type BenchRecipe } from "./kind.ts";
export { allFaults, faultKind, faultsOf, availability } from "./registry.ts";
export { KillFault } from "./kill.ts";
export { StopFault } from "./stop.ts";
export { PauseFault } from "./pause.ts";
export { RestartFault } from "./restart.ts";
export { DisconnectFault } from "./disconnect.ts";
export { PartitionFault, type PartitionOptions } from "./partition.ts";
export { LossFault, type LossOptions } from "./loss.ts";
export { BandwidthFault, type BandwidthOptions } from "./bandwidth.ts";
export { type Direction } from "./helper.ts";
export { WireFault, type TapHost, type TappedLab, type WireOptions } from "./wire.ts";
export { injectWhen, type Trigger, type ArmedFault, type Triggered } from "./trigger.ts";

// ---- faults.<name> (and faults.<group>.<name> for "group.name") from the registry, typed ----
type Flat<K extends AnyFaultKind> = { [E in K as E["name"] extends `${string}.${string}` ? never : E["name"]]: E["make"] };
type GroupOf<N> = N extends `${infer G}.${string}` ? G : never;
type Grouped<K extends AnyFaultKind> = { [G in GroupOf<K["name"]>]: { [E in K as E["name"] extends `${G}.${infer A}` ? A : never]: E["make"] } };
export type FaultMakers<K extends AnyFaultKind = RegisteredFault> = Flat<K> & Grouped<K>;

function makers(kinds: readonly AnyFaultKind[]): FaultMakers {
  const out: Record<string, unknown> = {};
  for (const k of kinds) {
    const [group, name] = k.name.split(".", 2) as [string, string | undefined];
    if (name === undefined) out[group] = checkedMake(k);
    else ((out[group] ??= {}) as Record<string, unknown>)[name] = checkedMake(k);
  }
  return out as FaultMakers;
}

export const faults = {
  ...makers(allFaults),
  // triggers
  when: { poll: trigger.poll, stream: trigger.stream, tapFrame: trigger.tapFrame, tapFrames: trigger.tapFrames, modelToolCalls: trigger.modelToolCalls, modelHeld: trigger.modelHeld, after: trigger.after, thenBeforeInject: trigger.thenBeforeInject },
  injectWhen: trigger.injectWhen,
  timelineOf,
};

// Compile-time check that the lab scenarios get is a FaultLab (no runtime import of Lab).
export type LabIsFaultLab = Lab extends FaultLab & TappedLab ? true : never;
const labIsFaultLab: LabIsFaultLab = true;
void labIsFaultLab;
