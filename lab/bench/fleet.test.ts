import { describe, expect, it } from "vitest";
import { bendAt, elText, eventLoopOf, fleetSweep, fleetTable, type FleetPoint } from "./fleet.ts";
import { percentiles } from "../kits/fleet.ts";
import { fleetPlotHtml } from "./plot.ts";

const point = (version: string, n: number, memMiB: number, fanout: number[], routed = fanout.length): FleetPoint => ({
  version,
  n,
  connectS: 1,
  memMiB,
  cpuIdleCores: 0.01,
  cpuFanoutCores: 0.1,
  nodeList: percentiles([10, 20, 30]),
  health: percentiles([3]),
  fanout: percentiles(fanout),
  routed,
  nodeListBytes: 2048,
  notRouted: routed < n ? { "UNAVAILABLE: worker task capacity reached": n - routed } : {},
  eventLoop: { delayP99Ms: 21.26, utilization: 0.014, cpuCoreRatio: 0.009 },
});

describe("the fleet sweep (make bench-fleet)", () => {
  it("BENCH_FLEET: the N of the sweep, ascending, each named when it is not 1 to 1000", () => {
    expect(fleetSweep(undefined)).toEqual([10, 50, 100, 200, 500]);
    expect(fleetSweep("200 10,50 10")).toEqual([10, 50, 200]);
    expect(fleetSweep("0")).toEqual([]);
    expect(() => fleetSweep("10 2000")).toThrow(/BENCH_FLEET=10 2000: give whole numbers of scripted nodes from 1 to 1000/);
  });

  it("bends where the cost per added node is more than twice the step before's, not on a straight line", () => {
    const straight = [0, 10, 50, 100].map((n) => ({ n, v: 800 + n }));
    expect(bendAt(straight, (p: { v: number }) => p.v)).toBeUndefined();
    const bent = [{ n: 10, v: 100 }, { n: 50, v: 140 }, { n: 100, v: 190 }, { n: 200, v: 1200 }];
    expect(bendAt(bent, (p: { v: number }) => p.v)).toBe(200);
  });

  it("OpenClaw's event-loop figures wherever health puts them, in one phrase; 'not published' when absent", () => {
    expect(eventLoopOf({ eventLoop: { delayP99Ms: 3 } })).toEqual({ delayP99Ms: 3 });
    expect(eventLoopOf({ ok: true })).toBeUndefined();
    expect(elText({ delayP99Ms: 21.26, utilization: 0.014, cpuCoreRatio: 0.009 })).toBe("delay p99 21.26 ms, utilization 0.01, cpu 0.01 cores");
    expect(elText(undefined)).toBe("not published");
  });

  it("the table gives each figure with its ratio to N = 0 of the same version's lab", () => {
    const rows = fleetTable([point("2026.9.6", 0, 800, []), point("2026.9.6", 200, 1000, [100, 200], 2)]);
    expect(rows[0]).toMatch(/^\| version \| N \|/);
    expect(rows[2]).toMatch(/^\| 2026\.9\.6 \| 0 \| .* \| 800 \(1\.00x\) \|/);
    expect(rows[3]).toMatch(/^\| 2026\.9\.6 \| 200 \| .* \| 1000 \(1\.25x\) \|/);
  });

  it("the plot: one line per version in each of its four panels, no script, no external asset", () => {
    const html = fleetPlotHtml({ title: "t", points: [0, 10, 50].flatMap((n) => ["2026.9.4", "2026.9.6"].map((version) => ({ version, n, memMiB: 500 + n, fanoutP95: n * 2, nodeListP95: 20, cpuFanoutCores: 0.1 }))) });
    expect(html.match(/<polyline/g)).toHaveLength(8);
    expect(html).toContain("openclaw@2026.9.4");
    expect(html.replaceAll("http://www.w3.org/2000/svg", "")).not.toMatch(/<script|https?:\/\//);
  });
});
