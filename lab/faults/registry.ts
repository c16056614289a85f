// Every fault kind, once (after etcd robustness' `allFailpoints`). The faults API
// (index.ts: faults.kill, faults.wire.close, ...) and `make bench` are built from this list;
// a kind that is not listed here does not exist. Order: how they are shown and benched.
import { bandwidth } from "./bandwidth.ts";
import { disconnect } from "./disconnect.ts";
import { kill } from "./kill.ts";
import { killInside } from "./kill-inside.ts";
import type { AnyFaultKind, Family, LabTraits } from "./kind.ts";
import { loss } from "./loss.ts";
import { partition } from "./partition.ts";
import { pause } from "./pause.ts";
import { restart } from "./restart.ts";
import { slowDisk } from "./slow-disk.ts";
import { stop } from "./stop.ts";
import { wireClose, wireDelay, wireDrop, wireFreeze, wireHalfOpen, wireInject, wireRespond, wireWithholdPong } from "./wire.ts";

export const allFaults = [
  // process: the engine API on the member's container
  kill,
  killInside,
  stop,
  pause,
  restart,
  slowDisk,
  // network: the engine (disconnect), or iptables/tc from a helper in the member's namespace
  disconnect,
  partition,
  loss,
  bandwidth,
  // wire: rules in the tap between a node host and the gateway
  wireDelay,
  wireDrop,
  wireClose,
  wireHalfOpen,
  wireWithholdPong,
  wireFreeze,
  wireRespond,
  wireInject,
] as const;

export type RegisteredFault = (typeof allFaults)[number];

/** The kind registered as `name` ("kill", "wire.close"). */
export function faultKind(name: string): AnyFaultKind | undefined {
  return (allFaults as readonly AnyFaultKind[]).find((k) => k.name === name);
}

/** Kinds of one family. */
export function faultsOf(family: Family): AnyFaultKind[] {
  return allFaults.filter((k) => k.family === family);
}

/** Each kind with whether this lab can have it: true, or the reason it cannot. */
export function availability(lab: LabTraits): { name: string; family: Family; available: true | string }[] {
  return allFaults.map((k) => ({ name: k.name, family: k.family, available: k.available(lab) }));
}
