import { describe, expect, it } from "vitest";
import { admit, memoryNeed, noHeadroom, starvedStart, type Machine } from "./admission.ts";
import { SystemUnderTestError } from "../definitions/verdict.ts";
import { WaitTimeout } from "../core/wait.ts";

const GiB = 2 ** 30;
const machine = (raw: number, load: number, othersUp = 0, memGiB = 20, cpu = 1): Machine => ({ sample: { t: 0, load, cpu, raw }, cores: 2, memAvailable: memGiB * GiB, othersUp });

describe("admission: a lab comes up only with the headroom the lab plans for", () => {
  it("a quiet machine admits at once, a second lab too", () => {
    expect(noHeadroom(machine(1.2, 0.4), memoryNeed(2))).toBeUndefined();
    expect(noHeadroom(machine(2.5, 3, 1), memoryNeed(2))).toBeUndefined();
  });
  it("beside another lab, only while a thread of the lab gets the CPU: lanes narrow while the machine is busy", () => {
    expect(noHeadroom(machine(4.5, 7, 1, 20, 2.6), memoryNeed(2))).toBe("CPU 2.60x slower than the reference (load 7 on 2 cores) with 1 other lab(s) running; another comes up beside them at 2x or less");
    expect(noHeadroom(machine(4.5, 7, 0, 20, 2.6), memoryNeed(2))).toBeUndefined();
    // The load average trails the machine by a minute: a quiet machine whose other lane just went down still reads load 6.
    expect(noHeadroom(machine(4, 6, 1, 20, 1.1), memoryNeed(2))).toBeUndefined();
  });
  it("never beyond the plan, nor without the memory its members need", () => {
    expect(noHeadroom(machine(9, 16), memoryNeed(2))).toMatch(/pace 9.00x \(load 16 on 2 cores\), beyond the 6x the lab plans for/);
    expect(noHeadroom(machine(1, 0, 0, 2), memoryNeed(2))).toBe("free memory 2.0 GiB, the lab needs 3.1 GiB");
  });
  it("waits, saying what for, and goes on once there is headroom; after its bound it goes on anyway and says so", async () => {
    const seen = [machine(4.5, 7, 1, 20, 3), machine(4.2, 6.5, 1, 20, 2.5), machine(2, 2, 0)];
    const a = await admit("lab x", 2, { machine: async () => seen.shift()!, pollMs: 1 });
    expect(a.note).toBeUndefined();
    expect(seen).toHaveLength(0);
    const b = await admit("lab y", 2, { machine: async () => machine(9, 16), pollMs: 1, maxWaitMs: 20 });
    expect(b.note).toMatch(/came up without the headroom the lab plans for after waiting \d+ s \(pace 9.00x/);
  });
});

describe("start attempts: what counts as the machine starving OpenClaw's start", () => {
  const lease = new SystemUnderTestError("gateway /readyz: the container exited (code 78); last log lines: state lease heartbeat did not become ready (phase=startup, trigger=timeout)");
  it("OpenClaw giving up its start (code 78, state lease) on a busy machine: tried again; on a quiet one: its own failure", () => {
    expect(starvedStart(lease, 5)).toMatch(/OpenClaw gave up its own start \(state lease heartbeat did not become ready\) on a machine at pace 5.00x/);
    // What a quiet two-lane run reads (most of it the lab's own containers): OpenClaw's failure.
    expect(starvedStart(lease, 3.8)).toBeUndefined();
    expect(starvedStart(lease, 1.1)).toBeUndefined();
  });
  it("a readiness deadline that passed beyond the plan: tried again; one that passed within it, or another exit: not", () => {
    const late = new SystemUnderTestError("gateway /readyz", { cause: new WaitTimeout("gateway /readyz", 90_000, "", "the machine was busier than the lab plans for: pace 8x") });
    expect(starvedStart(late, 8)).toMatch(/pace 8x/);
    expect(starvedStart(new SystemUnderTestError("gateway /readyz", { cause: new WaitTimeout("gateway /readyz", 90_000, "") }), 3)).toBeUndefined();
    expect(starvedStart(new SystemUnderTestError("node host node-1 exited (code 1)"), 8)).toBeUndefined();
  });
});
