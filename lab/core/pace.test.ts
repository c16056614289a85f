import { describe, expect, it } from "vitest";
import { MAX_FACTOR, PaceMonitor, PacedBudget, machineBusyIn, paceFactor, paceFromEnv, paceLine } from "./pace.ts";
import { WaitTimeout, waitFor } from "./wait.ts";

describe("the machine's pace", () => {
  it("is 1 on an idle machine as fast as the reference, never below", () => {
    expect(paceFactor(52, 0, 2, 52)).toBe(1);
    expect(paceFactor(30, 0, 2, 52)).toBe(1);
    expect(paceFactor(52, 0.1, 2, 52)).toBe(1.05);
  });
  it("follows the slower of CPU and load: a 2.3x slower CPU, two busy loops on two cores", () => {
    expect(paceFactor(120, 0, 2, 52)).toBe(2.31);
    expect(paceFactor(52, 2, 2, 52)).toBe(2);
    expect(paceFactor(104, 4, 2, 52)).toBe(3);
  });
  it("is capped, so a hang still ends", () => {
    expect(paceFactor(1000, 20, 2, 52)).toBe(MAX_FACTOR);
  });
  it("FLEETLAB_PACE sets it; a bad value is refused naming the variable and the range", () => {
    expect(paceFromEnv({})).toBeUndefined();
    expect(paceFromEnv({ FLEETLAB_PACE: "2.5" })).toBe(2.5);
    expect(() => paceFromEnv({ FLEETLAB_PACE: "fast" })).toThrow(/FLEETLAB_PACE=fast is not a factor from 1 to 6/);
    expect(() => paceFromEnv({ FLEETLAB_PACE: "0.5" })).toThrow(/FLEETLAB_PACE=0.5/);
  });
  it("says what it measured in the run header", () => {
    expect(paceLine({ factor: 2, calibrationMs: 60, referenceMs: 52, load: 2, cores: 2, source: "measured" })).toBe(
      "pace 2.00x (calibration 60 ms against 52 ms; load 2 on 2 cores): lab-side deadlines x2.00 now, following the machine (sampled every 2 s, up to 6x)",
    );
  });
});

describe("the pace follows the machine while the run goes on", () => {
  // Samples at t (ms): load on 2 cores, calibration ratio.
  const mon = (samples: [number, number, number?][]) => {
    const m = new PaceMonitor(2);
    for (const [t, load, cpu] of samples) m.record(t, load, cpu);
    return m;
  };
  it("spends a deadline at the pace of each stretch: 10 s quiet then 10 s at load 4 (3x) spend 10 + 3.3 s", () => {
    const m = mon([[0, 0, 1], [10_000, 4]]);
    expect(m.factorAt(5_000)).toBe(1);
    expect(m.factorAt(15_000)).toBe(3);
    expect(Math.round(m.spent(0, 20_000))).toBe(13_333);
  });
  it("a reading at the start is not enough: the load that comes later stretches the rest of the wait", () => {
    const m = mon([[0, 0, 1], [1_000, 10]]);
    // 1 s at 1x, then 6x (load 10 on 2 cores is 6x, the plan's limit)
    expect(Math.round(m.spent(0, 61_000))).toBe(11_000);
  });
  it("is clamped at the plan's limit, and a window slower than that is named as busier than planned, with the load", () => {
    const m = mon([[0, 0, 1], [10_000, 16]]);
    expect(m.factorAt(20_000)).toBe(MAX_FACTOR);
    expect(m.busierThanPlanned(0, 9_000)).toBeUndefined();
    expect(m.busierThanPlanned(0, 20_000)).toMatch(/busier than the lab plans for: pace 9.00x at worst \(load 16 on 2 cores/);
    // The reading in force at a window's start counts, so a short window inside a busy stretch is named too.
    expect(m.busierThanPlanned(12_000, 13_000)).toMatch(/pace 9.00x/);
  });
  it("with the lab's CPU share claimed, the lab's own load counts, not the machine's: load 13 beside it, own 2 on 2 cores is 2x; own 14 is beyond the plan and named", () => {
    const m = new PaceMonitor(2);
    expect(m.record(0, 13, 1, 2)).toMatchObject({ load: 13, own: 2, raw: 2 });
    expect(m.busierThanPlanned(0, 1_000)).toBeUndefined();
    m.record(2_000, 13, 1, 14);
    expect(m.busierThanPlanned(0, 3_000)).toMatch(/pace 8.00x at worst \(the lab's own load 14 with its CPU share, the machine's 13, on 2 cores/);
  });
  it("the CPU calibration counts as well as the load (median of the last five)", () => {
    const m = mon([[0, 0, 3], [1, 0, 3], [2, 0, 1], [3, 0, 3], [4, 0, 8]]);
    expect(m.factorAt(4)).toBe(3);
  });
  it("FLEETLAB_PACE fixes the factor whatever is measured", () => {
    const m = new PaceMonitor(2, 1.5);
    m.record(0, 20, 1);
    expect(m.factorAt(0)).toBe(1.5);
  });
  it("a budget that is the expectation is wall time and never names the machine", () => {
    const b = new PacedBudget(1_000, true, mon([[0, 20, 1]]));
    expect(b.busy()).toBeUndefined();
    expect(b.describe()).toMatch(/fixed bound: the expectation/);
  });
});

describe("waits on a machine busier than planned", () => {
  it("a lab-side wait that runs out names the load and carries it for the verdict (unknown, not fail); an expectation does not", async () => {
    const { monitor } = await import("./pace.ts");
    const m = monitor();
    const real = Date.now();
    m.record(real, 1000, 1); // a reading far beyond the plan, in force for the next waits
    const err = await waitFor("nothing", () => false, { timeoutMs: 50, intervalMs: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    expect(machineBusyIn(err)).toMatch(/busier than the lab plans for/);
    expect((err as Error).message).toMatch(/load 1000 on/);
    const fixed = await waitFor("nothing", () => false, { timeoutMs: 50, intervalMs: 10, bound: "expectation" }).catch((e: unknown) => e);
    expect(fixed).toBeInstanceOf(WaitTimeout);
    expect(machineBusyIn(fixed)).toBeUndefined();
    m.record(Date.now(), 0, 1);
  });
  it("machineBusyIn finds the reason anywhere in a cause chain", () => {
    const inner = Object.assign(new Error("TIMEOUT"), { machineBusy: "load 20" });
    expect(machineBusyIn(new Error("outer", { cause: new Error("mid", { cause: inner }) }))).toBe("load 20");
    expect(machineBusyIn(new Error("plain"))).toBeUndefined();
  });
});

describe("the start order of a lab's members", async () => {
  const { nodesBesideGateway, startOrder } = await import("../topology/lab.ts");
  it("is cores unless FLEETLAB_START_ORDER says all or gateway-first; anything else is refused naming them", () => {
    expect(startOrder({})).toBe("cores");
    expect(startOrder({ FLEETLAB_START_ORDER: "cores" })).toBe("cores");
    expect(startOrder({ FLEETLAB_START_ORDER: "all" })).toBe("all");
    expect(startOrder({ FLEETLAB_START_ORDER: "gateway-first" })).toBe("gateway-first");
    expect(() => startOrder({ FLEETLAB_START_ORDER: "nodes-first" })).toThrow(/FLEETLAB_START_ORDER=nodes-first is not a start order: use cores \(the default\), all or gateway-first/);
  });
  it("starts as many node hosts with the gateway as there are cores, by default", () => {
    expect([1, 2, 4, 8].map((n) => nodesBesideGateway("cores", n, 2))).toEqual([1, 2, 2, 2]);
    expect(nodesBesideGateway("all", 8, 2)).toBe(8);
    expect(nodesBesideGateway("gateway-first", 8, 2)).toBe(0);
  });
});
