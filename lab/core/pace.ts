// The machine's pace: how much slower than the machines the lab's deadlines were measured on
// this one runs right now. Bring-up deadlines (a gateway's /readyz, a member's /healthz,
// pairing, a restarted gateway) are the measured figure times this factor, so the same lab comes
// up on a laptop or a busy CI runner two or three times slower, and a member that really broke
// still ends its wait at once (a container that exits stops the wait, whatever the deadline).
//
// The factor is the larger of two measurements, taken once per process at its first use:
// - a calibration: a fixed piece of CPU work (SHA-256 over 64 MiB, five times) timed here, against what it
//   takes on an idle machine of the kind the deadlines were measured on (REFERENCE_MS);
// - the load: 1 + the 1-minute load average per core (an idle machine: 1; two busy loops on two
//   cores: about 2), since every member of a lab competes for the same cores.
// Clamped to [1, MAX_FACTOR]: never shorter than measured, never so long that a hang takes ages.
// FLEETLAB_PACE=<factor> sets it (a machine known to be slow; 1 to switch scaling off).
import crypto from "node:crypto";
import os from "node:os";
import { LabError } from "./log.ts";

/** The calibration's median round on an idle 2-core machine of the kind the figures come from (measured 2026-12-01). */
export const REFERENCE_MS = 52;
export const MAX_FACTOR = 4;
const ROUNDS = 5;

export interface Pace {
  /** What every bring-up deadline is multiplied by. */
  factor: number;
  /** The calibration's median round here, and the reference it is compared with. */
  calibrationMs: number;
  referenceMs: number;
  /** 1-minute load average and cores when measured. */
  load: number;
  cores: number;
  /** Where the factor came from: "measured" or "FLEETLAB_PACE". */
  source: "measured" | "FLEETLAB_PACE";
}

let current: Pace | undefined;

/** Time the calibration: the median of ROUNDS rounds of SHA-256 over 64 MiB (about a quarter of a second in all). */
export function calibrate(): number {
  const chunk = Buffer.alloc(16 * 2 ** 20, 7);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    const h = crypto.createHash("sha256");
    for (let k = 0; k < 4; k++) h.update(chunk);
    h.digest();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(ROUNDS / 2)]!;
}

/** The factor from the two measurements (pure: unit-tested). */
export function paceFactor(calibrationMs: number, load: number, cores: number, referenceMs = REFERENCE_MS): number {
  const byCpu = calibrationMs / referenceMs;
  const byLoad = 1 + load / Math.max(1, cores);
  return Math.round(Math.min(MAX_FACTOR, Math.max(1, byCpu, byLoad)) * 100) / 100;
}

/** Read FLEETLAB_PACE: a number from 1 to MAX_FACTOR, or undefined. A bad value is an error naming it. */
export function paceFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env.FLEETLAB_PACE?.trim();
  if (!v) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1 || n > MAX_FACTOR) throw new LabError(`FLEETLAB_PACE=${v} is not a factor from 1 to ${MAX_FACTOR} (how much slower this machine is than the reference; unset it to measure)`);
  return n;
}

/** This process's pace, measured at the first call. */
export function pace(): Pace {
  if (current) return current;
  const cores = os.cpus().length;
  const load = Math.round(os.loadavg()[0]! * 100) / 100;
  const calibrationMs = Math.round(calibrate() * 10) / 10;
  const fixed = paceFromEnv();
  current = { factor: fixed ?? paceFactor(calibrationMs, load, cores), calibrationMs, referenceMs: REFERENCE_MS, load, cores, source: fixed ? "FLEETLAB_PACE" : "measured" };
  return current;
}

/** A deadline measured on the reference machine, for this one. */
export function deadline(ms: number): number {
  return Math.round(ms * pace().factor);
}

/** For the run header: "pace 1.00x (calibration 53 ms against 52 ms; load 0.3 on 2 cores) ...". */
export function paceLine(p: Pace = pace()): string {
  return `pace ${p.factor.toFixed(2)}x (${p.source === "FLEETLAB_PACE" ? "FLEETLAB_PACE; " : ""}calibration ${p.calibrationMs} ms against ${p.referenceMs} ms; load ${p.load} on ${p.cores} cores): bring-up deadlines x${p.factor.toFixed(2)}`;
}

/** The load per core now, to say when a wait ran out on a machine busier than planned. */
export function loadNow(): { load: number; perCore: number } {
  const load = Math.round(os.loadavg()[0]! * 100) / 100;
  return { load, perCore: Math.round((load / Math.max(1, os.cpus().length)) * 100) / 100 };
}
