// The partition's observation, parsed: probe lines, DROP counters per peer, the probe timeout
// taken from the pre-fault baseline.
import { describe, expect, it } from "vitest";
import { dropCounts, parseProbes, probeScript, probeTimeoutFor } from "./partition.ts";

describe("partition observation", () => {
  it("probe timeout: 10x the slowest pre-fault answer, at least 50 ms, at most 250 ms (no answer before: 250 ms)", () => {
    expect(probeTimeoutFor(1.2)).toBe(50);
    expect(probeTimeoutFor(7.3)).toBe(73);
    expect(probeTimeoutFor(40)).toBe(250);
    expect(probeTimeoutFor(undefined)).toBe(250);
  });

  it("reads '<ip> <result> <microseconds>' probe lines", () => {
    const m = parseProbes("10.0.0.3 refused 1834\n10.0.0.4 timeout 51230\n");
    expect(m.get("10.0.0.3")).toEqual({ result: "refused", ms: 1.8 });
    expect(m.get("10.0.0.4")).toEqual({ result: "timeout", ms: 51.2 });
  });

  it("counts DROP packets per peer in this fault's chains only (iptables -v -S)", () => {
    const lines = [
      "-P INPUT ACCEPT -c 0 0",
      "-N FL-1-f1-in",
      "-N FL-1-f1-out",
      "-A INPUT -m comment --comment fleetlab-fault -c 3 180 -j FL-1-f1-in",
      "-A FL-1-f1-in -s 10.0.0.3/32 -c 2 120 -j DROP",
      "-A FL-1-f1-out -d 10.0.0.3/32 -c 1 60 -j DROP",
      "-A FL-1-f12-out -d 10.0.0.3/32 -c 9 540 -j DROP",
    ];
    expect(dropCounts(lines, ["FL-1-f1-in", "FL-1-f1-out"])).toEqual(new Map([["10.0.0.3", 3]]));
  });

  it("the probe script gives its timeout in seconds and probes every peer in parallel", () => {
    const s = probeScript(["10.0.0.3", "10.0.0.4"], 9, 50);
    expect(s).toContain("timeout 0.050 bash");
    expect(s).toMatch(/probe 10\.0\.0\.3 &\nprobe 10\.0\.0\.4 &\nwait$/);
  });
});
