import { describe, expect, it } from "vitest";
import { LabError } from "../core/log.ts";
import type { RunRecord } from "../evidence/run.ts";
import { CostsSchema, loadCosts, parseShard, planShards, selectShard, costsFromRuns, type Costs, type Splittable } from "./shard.ts";

const own = (name: string): Splittable => ({ name, topology: "own" });
const shared = (name: string): Splittable => ({ name, topology: "shared" });
const costs = (scenarios: Record<string, number>, sharedLab = 60, defaultSeconds = 90): Costs => ({ defaultSeconds, sharedLab: { seconds: sharedLab }, scenarios });

/** Every scenario in exactly one shard. */
function expectPartition(shards: string[][], list: Splittable[]) {
  expect(shards.flat().sort()).toEqual(list.map((s) => s.name).sort());
}

describe("SHARD=K/N", () => {
  it("reads K of N", () => {
    expect(parseShard("2/4")).toEqual({ index: 2, total: 4 });
    expect(parseShard(" 1 / 1 ")).toEqual({ index: 1, total: 1 });
  });

  it.each([
    ["5/4", "K must be between 1 and 4"],
    ["0/3", "K must be between 1 and 3"],
    ["1/0", "N must be at least 1"],
    ["x", "is not K/N"],
    ["2/", "is not K/N"],
    ["-1/3", "is not K/N"],
    ["1.5/3", "is not K/N"],
  ])("refuses %s as bad input (exit 2): %s", (text, why) => {
    let err: unknown;
    try {
      parseShard(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).exitCode).toBe(2);
    expect((err as LabError).message).toContain(`SHARD=${text}: ${why}`);
  });
});

describe("splitting the suite by measured cost", () => {
  it("goes by seconds, not by count: one long scenario gets a shard to itself", () => {
    const list = [own("long"), own("a"), own("b"), own("c")];
    const plan = planShards(list, 2, costs({ long: 300, a: 100, b: 100, c: 100 }));
    expect(plan.shards).toEqual([["long"], ["a", "b", "c"]]);
    expect(plan.seconds).toEqual([300, 300]);
  });

  it("keeps shared-lab scenarios on one lab when a second bring-up would not shorten the night", () => {
    const list = [shared("x"), shared("y"), shared("z"), own("o")];
    const plan = planShards(list, 2, costs({ x: 20, y: 20, z: 20, o: 200 }, 60));
    expect(plan.sharedGroups).toBe(1);
    expect(plan.shards).toEqual([["o"], ["x", "y", "z"]]);
    expect(plan.seconds).toEqual([200, 120]); // 3 x 20 s + one bring-up of 60 s
  });

  it("splits shared-lab scenarios into groups, each paying its own bring-up, when that is shorter", () => {
    const list = ["a", "b", "c", "d", "e", "f"].map(shared);
    const plan = planShards(list, 3, costs(Object.fromEntries(list.map((s) => [s.name, 100])), 30));
    expect(plan.sharedGroups).toBe(3);
    expect(plan.seconds).toEqual([230, 230, 230]);
    expectPartition(plan.shards, list);
  });

  it("never puts two shared groups in one shard (a shard brings up one shared lab)", () => {
    const list = [...["a", "b", "c", "d"].map(shared), own("big")];
    const plan = planShards(list, 2, costs({ a: 50, b: 50, c: 50, d: 50, big: 500 }, 10));
    const withShared = plan.shards.filter((s) => s.some((n) => ["a", "b", "c", "d"].includes(n)));
    expect(withShared.length).toBe(plan.sharedGroups);
    expectPartition(plan.shards, list);
  });

  it("gives a scenario with no measurement the default cost", () => {
    const plan = planShards([own("measured"), own("new-one")], 2, costs({ measured: 10 }, 60, 77));
    expect(plan.shards).toEqual([["new-one"], ["measured"]]);
    expect(plan.seconds).toEqual([77, 10]);
  });

  it("is deterministic: the same inputs in any order give the same shards, and every scenario lands in exactly one", () => {
    const names = Array.from({ length: 23 }, (_, i) => `s${String(i).padStart(2, "0")}`);
    const list = names.map((n, i) => (i % 3 ? own(n) : shared(n)));
    const c = costs(Object.fromEntries(names.map((n, i) => [n, 20 + ((i * 37) % 150)])), 45);
    for (const total of [1, 2, 3, 4, 7, 30]) {
      const a = planShards(list, total, c);
      const b = planShards([...list].reverse(), total, c);
      expect(b).toEqual(a);
      expect(a.shards.length).toBe(total);
      expectPartition(a.shards, list);
      // And selecting shard by shard gives back the whole suite, once.
      const picked = Array.from({ length: total }, (_, k) => selectShard(list, { index: k + 1, total }, c).chosen.map((s) => s.name));
      expect(picked.flat().sort()).toEqual([...names].sort());
    }
  });

  it("more shards than scenarios leaves some shards empty", () => {
    const plan = planShards([own("a")], 3, costs({ a: 5 }));
    expect(plan.shards).toEqual([["a"], [], []]);
  });

  it("the committed scenarios/costs.json is valid", () => {
    expect(() => CostsSchema.parse(loadCosts())).not.toThrow();
  });
});

describe("refreshing costs from a run", () => {
  const row = (name: string, seconds: number, startedAt: string, verdict: RunRecord["scenarios"][number]["verdict"] = "pass", evidence = `scenarios/${name}`) => ({ name, verdict, seconds, startedAt, evidence });
  const lab = (evidence: string, up: number, down: number) => ({ evidence, spec: {}, network: { name: "n", id: "i", subnet: "s" }, members: [], timings: { up, down } });
  const record = (over: Partial<RunRecord>): RunRecord => ({ id: "r1", startedAt: "2026-11-30T00:00:00.000Z", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 24, node: "v24" }, timings: {}, scenarios: [], ...over });

  it("takes the shared lab's bring-up off the first shared scenario, keeps own-lab times whole, skips unknown verdicts", () => {
    const rec = record({
      scenarios: [row("p", 60, "2026-11-30T00:01:00Z"), row("q", 10, "2026-11-30T00:02:00Z"), row("o", 90, "2026-11-30T00:03:00Z"), row("broken", 6, "2026-11-30T00:04:00Z", "unknown")],
      labs: { "r1-1": lab("shared-lab", 40, 2), "r1-2": lab("scenarios/o/lab", 30, 2) },
    });
    const topo: Record<string, "shared" | "own"> = { p: "shared", q: "shared", o: "own", broken: "own" };
    const c = costsFromRuns([rec], costs({ broken: 50, other: 7 }), (n) => topo[n]);
    expect(c.scenarios).toEqual({ broken: 50, o: 90, other: 7, p: 20, q: 10 });
    expect(c.sharedLab.seconds).toBe(42);
    expect(c.measured?.runs).toEqual(["r1"]);
  });

  it("in a merged run, each shard's first shared scenario paid that shard's bring-up", () => {
    const rec = record({
      scenarios: [row("p", 50, "2026-11-30T00:01:00Z", "pass", "shards/1-of-2/scenarios/p"), row("q", 70, "2026-11-30T00:01:05Z", "pass", "shards/2-of-2/scenarios/q"), row("r", 5, "2026-11-30T00:02:00Z", "pass", "shards/2-of-2/scenarios/r")],
      labs: { a: lab("shards/1-of-2/shared-lab", 30, 1), b: lab("shards/2-of-2/shared-lab", 50, 1) },
    });
    const c = costsFromRuns([rec], costs({}), () => "shared");
    expect(c.scenarios).toEqual({ p: 20, q: 20, r: 5 });
  });
});
