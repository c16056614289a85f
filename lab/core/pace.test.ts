import { describe, expect, it } from "vitest";
import { MAX_FACTOR, paceFactor, paceFromEnv, paceLine } from "./pace.ts";

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
    expect(() => paceFromEnv({ FLEETLAB_PACE: "fast" })).toThrow(/FLEETLAB_PACE=fast is not a factor from 1 to 4/);
    expect(() => paceFromEnv({ FLEETLAB_PACE: "0.5" })).toThrow(/FLEETLAB_PACE=0.5/);
  });
  it("says what it measured in the run header", () => {
    expect(paceLine({ factor: 2, calibrationMs: 60, referenceMs: 52, load: 2, cores: 2, source: "measured" })).toBe(
      "pace 2.00x (calibration 60 ms against 52 ms; load 2 on 2 cores): bring-up deadlines x2.00",
    );
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
