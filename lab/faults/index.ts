// The fault library: every fault has one life cycle (prepare, inject, in effect, heal,
// healed, clean up) timed into the run's timeline (faults.jsonl), and is healed when the run
// ends however it ends.
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
import type { FaultLab, FaultOptions } from "./fault.ts";
import { BandwidthFault, DisconnectFault, LossFault, PartitionFault, type BandwidthOptions, type LossOptions, type PartitionOptions } from "./network.ts";
import { KillFault, PauseFault, RestartFault, StopFault } from "./process.ts";
import * as trigger from "./trigger.ts";
import * as wire from "./wire.ts";
import type { TappedLab } from "./wire.ts";
import { timelineOf } from "./timeline.ts";

export { Fault, FaultAborted, defaultTimeline, type FaultLab, type FaultOptions, type InjectTimings, type HealTimings } from "./fault.ts";
export { FaultTimeline, timelineOf, TIMELINE_FILE, type TimelineEntry, type FaultStep } from "./timeline.ts";
export { KillFault, StopFault, PauseFault, RestartFault } from "./process.ts";
export { DisconnectFault, PartitionFault, LossFault, BandwidthFault, type Direction, type PartitionOptions, type LossOptions, type BandwidthOptions } from "./network.ts";
export { WireFault, type TapHost, type TappedLab, type WireOptions } from "./wire.ts";
export { injectWhen, type Trigger, type ArmedFault, type Triggered } from "./trigger.ts";

const list = (x: string | string[]) => (Array.isArray(x) ? x : [x]);

export const faults = {
  // process (engine API)
  kill: (lab: FaultLab, alias: string, opts: FaultOptions & { signal?: string } = {}) => new KillFault(lab, alias, opts.signal ?? "SIGKILL", opts),
  stop: (lab: FaultLab, alias: string, opts: FaultOptions & { timeoutSeconds?: number } = {}) => new StopFault(lab, alias, opts.timeoutSeconds ?? 10, opts),
  pause: (lab: FaultLab, alias: string, opts: FaultOptions = {}) => new PauseFault(lab, alias, opts),
  restart: (lab: FaultLab, alias: string, opts: FaultOptions & { timeoutSeconds?: number } = {}) => new RestartFault(lab, alias, opts.timeoutSeconds ?? 10, opts),
  // network
  disconnect: (lab: FaultLab, alias: string, opts: FaultOptions = {}) => new DisconnectFault(lab, alias, opts),
  partition: (lab: FaultLab, alias: string, peers: string | string[], opts: PartitionOptions = {}) => new PartitionFault(lab, alias, list(peers), opts),
  loss: (lab: FaultLab, alias: string, probability: number, opts: LossOptions = {}) => new LossFault(lab, alias, probability, opts),
  bandwidth: (lab: FaultLab, alias: string, rate: string, opts: BandwidthOptions = {}) => new BandwidthFault(lab, alias, rate, opts),
  // wire (the tap's rules)
  wire,
  // triggers
  when: { poll: trigger.poll, stream: trigger.stream, tapFrame: trigger.tapFrame, tapFrames: trigger.tapFrames, modelToolCalls: trigger.modelToolCalls, modelHeld: trigger.modelHeld, after: trigger.after },
  injectWhen: trigger.injectWhen,
  timelineOf,
};


// Compile-time check that the lab scenarios get is a FaultLab (no runtime import of Lab).
export type LabIsFaultLab = Lab extends FaultLab & TappedLab ? true : never;
const labIsFaultLab: LabIsFaultLab = true;
void labIsFaultLab;
