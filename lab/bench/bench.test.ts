// The bench's pure parts: the sweep's env, the tables, the plot page, the suite table.
import { describe, expect, it } from "vitest";
import { median, ratio, scaleFromEnv, secs, table } from "./main.ts";
import { niceScale, scalePlotHtml } from "./plot.ts";
import { suiteScenarios, suiteTable, type SuiteBench } from "./suite.ts";
import { stat, wireTimingRows } from "./wire-timing.ts";
import type { Scenario } from "../scenario.ts";

describe("bench figures", () => {
  it("BENCH_SCALE: 1 2 4 8 by default, a list to shorten, 0 or empty for none", () => {
    expect(scaleFromEnv(undefined)).toEqual([1, 2, 4, 8]);
    expect(scaleFromEnv("2, 8")).toEqual([2, 8]);
    expect(scaleFromEnv("0")).toEqual([]);
    expect(scaleFromEnv("")).toEqual([]);
    expect(scaleFromEnv("9 3")).toEqual([3]); // a topology has at most 8 node hosts
  });

  it("medians, seconds and ratios; nothing measured shows as '-'", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1])).toBe(1); // the lower middle, as before
    expect(secs(0.1234)).toBe("123 ms");
    expect(secs(12.345)).toBe("12.35 s");
    expect(secs(median([]))).toBe("-");
    expect(ratio(11, 10)).toBe("1.10x");
    expect(ratio(NaN, 10)).toBe("-");
  });

  it("tables pad every column to its widest cell", () => {
    const t = table(["a", "bb"], [["xxx", "y"]]).split("\n");
    expect(t).toEqual(["a    bb", "---  --", "xxx  y"]);
  });

  it("wire rows: the tap's trigger -> action against the 20 ms target, end to end beside it", () => {
    const rows = wireTimingRows({ passMs: stat([0.5, 0.4, 0.6]), rows: [{ fault: "wire.close 1006", trials: 3, triggerToActionMs: stat([0.2, 0.5, 1]), endToEndMs: stat([1, 2, 3]), endToEndWhat: "client sees the end" }] });
    expect(rows[0]).toEqual(["wire.close 1006: trigger frame -> action", "0.50 ms (worst 1.00 ms)", "0.50 ms plain frame through the tap", "0.050 of target (worst)", "<= 20 ms"]);
    expect(rows[1]![0]).toBe("  client sees the end");
  });
});

describe("the scaling plot", () => {
  it("nice axis tops and steps", () => {
    expect(niceScale(93)).toEqual({ top: 100, step: 20 });
    expect(niceScale(0.7)).toEqual({ top: 0.8, step: 0.2 });
    expect(niceScale(0)).toEqual({ top: 1, step: 0.2 });
  });

  it("is one page with inline SVG only: a point per NODES in each panel, the baseline and the target line, no external assets", () => {
    const html = scalePlotHtml({
      title: "t <x>",
      bareGatewayReady: 12,
      targetRatio: 1.3,
      bareNodeMiB: 500,
      points: [
        { nodes: 1, freshReady: 20, snapshotReady: 14, memMedianMiB: 540, memMaxMiB: 560 },
        { nodes: 8, freshReady: 90, memMedianMiB: 545, memMaxMiB: 600 },
      ],
    });
    expect(html).toContain("t &lt;x&gt;");
    expect(html.match(/<circle /g)).toHaveLength(2 + 1 + 2 + 2); // fresh, snapshot, memory median, largest
    expect(html).toContain("target 1.3x baseline");
    expect(html).toContain("bare gateway alone (baseline) 12.0 s");
    expect(html).not.toMatch(/\b(src|href)=/);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});

describe("the suite part", () => {
  const sc = (name: string, topology: "shared" | "own" = "shared") => ({ name, topology, proves: "", timeoutMs: 1, run: async () => {} }) as unknown as Scenario;
  it("BENCH_SUITE_SCENARIOS picks scenarios by name (unknown names fail, naming the known ones); none: all, in run order", () => {
    const all = [sc("b", "own"), sc("a"), sc("smoke")];
    expect(suiteScenarios(all, "smoke").map((s) => s.name)).toEqual(["smoke"]);
    expect(suiteScenarios(all, undefined).map((s) => s.name)).toEqual(["a", "smoke", "b"]);
    expect(() => suiteScenarios(all, "nope")).toThrow(/unknown scenario: nope. Known scenarios: b, a, smoke/);
  });

  it("the per-scenario table: slowest first, then each lab's bring-up", () => {
    const b: SuiteBench = {
      run: "r",
      dir: "d",
      lanes: 2,
      wallS: 100,
      scenariosS: 90,
      results: [
        { name: "smoke", verdict: "pass", seconds: 3.21 },
        { name: "capacity", verdict: "known-finding", seconds: 40 },
      ],
      labs: [{ name: "shared-lab", nodes: 2, ready: 15.5, up: 17, snapshot: "restored" }],
    };
    expect(suiteTable(b)).toEqual([
      ["capacity", "40.0", "known-finding"],
      ["smoke", "3.2", "pass"],
      ["  lab shared-lab (2 node hosts) ready", "15.5", "restored"],
    ]);
  });
});

describe("a bench part that fails", () => {
  it("is a row saying why in one line, and the parts after it still run", async () => {
    const { benchPart } = await import("./main.ts");
    const rows: string[][] = [];
    const failed: string[] = [];
    const part = benchPart((...r) => void rows.push(r), failed);
    const ran: string[] = [];
    await part("NODES=8", async () => {
      throw new Error("timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)\n    at stack line");
    });
    await part("faults", async () => void ran.push("faults"));
    expect(rows).toEqual([["NODES=8", "FAILED: timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)", "-", "-", "-"]]);
    expect(failed).toEqual(["NODES=8: timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)"]);
    expect(ran).toEqual(["faults"]);
  });
});
