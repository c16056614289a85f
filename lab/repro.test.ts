import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Run, readRunRecord } from "./evidence/run.ts";
import { reproExitCode, reproLoop, tally, tallyLine, type Attempt } from "./repro.ts";
import { LabPool, runOrder } from "./runner.ts";
import { defineScenario, LabInfraError, type Scenario } from "./scenario.ts";
import type { Lab } from "./topology/lab.ts";
import { parseTopology } from "./spec.ts";
import { TeardownStack } from "./topology/teardown.ts";
import type { Verdict } from "./verdict.ts";

let root: string;
beforeAll(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-repro-test-"))));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A pool of fake labs (no Docker): `ups` counts bring-ups. */
function pool() {
  const run = Run.create({ root, seed: 7 });
  const state = { ups: 0 };
  const p = new LabPool(parseTopology({}), run, {
    evidenceChecks: [],
    labFindings: [],
    start: async (r, _s, plan) => void r.update((x) => void (x.plan = runOrder(plan).map((s) => s.name))),
    up: async () => {
      state.ups++;
      return { spec: parseTopology({ tap: { enabled: false } }), teardown: new TeardownStack(), down: async () => {}, leftovers: async () => [], health: async () => [] } as unknown as Lab;
    },
  });
  return { pool: p, run, state };
}

const F = { id: "F-race", expectation: "the result arrives", signature: { lost: true }, versions: ["2026.9.6"], kind: "shortfall" as const, evidence: "x" };

/** A racy bug: attempt k shows it when `hits(k)`; `unknownAt` attempts cannot tell. */
function racy(topology: "shared" | "own", hits: (k: number) => boolean, unknownAt: number[] = []): Scenario {
  let k = 0;
  return defineScenario({
    name: "race",
    proves: "race",
    topology,
    timeoutMs: 5_000,
    findings: [F],
    run: async ({ check }) => {
      k++;
      if (unknownAt.includes(k)) throw new LabInfraError("the tap did not answer");
      check({ id: "F-race", expectation: F.expectation, holds: !hits(k), observed: hits(k) ? { lost: true } : undefined });
    },
  });
}

const attempt = (index: number, verdict: Verdict): Attempt => ({ index, verdict, seconds: 1, evidence: `scenarios/x~${index}` });

describe("reproduced k/N", () => {
  it("a known finding or a fail reproduced; pass and fixed? did not; unknown is counted apart", () => {
    const t = tally("x", 5, [attempt(1, "known-finding"), attempt(2, "pass"), attempt(3, "fail"), attempt(4, "unknown"), attempt(5, "fixed?")]);
    expect(t).toMatchObject({ ran: 5, reproduced: 2, unknown: 1, hits: [1, 3] });
    expect(tallyLine(t)).toBe("reproduced 2/5 (50% of 4 judged), 1 unknown (the lab could not tell)");
    expect(reproExitCode(t)).toBe(0);
    expect(reproExitCode(tally("x", 2, [attempt(1, "pass"), attempt(2, "pass")]))).toBe(1);
    expect(reproExitCode(tally("x", 2, [attempt(1, "pass"), attempt(2, "unknown")]))).toBe(3);
  });

  it("an own-lab scenario: a fresh lab per attempt, every attempt with its own evidence folder, and the tally in run.json", async () => {
    const { pool: p, run, state } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(racy("own", (k) => k % 2 === 0, [5]), 6, { spec: p.spec, run, pool: p, onAttempt: (a) => seen.push(a) });
    expect(tallyLine(t)).toBe("reproduced 3/6 (60% of 5 judged), 1 unknown (the lab could not tell)");
    expect(state.ups).toBe(6);
    expect(seen.map((a) => [a.verdict, a.evidence])).toEqual([
      ["fixed?", "scenarios/race~1"], // the registered bug did not show: not reproduced
      ["known-finding", "scenarios/race~2"],
      ["fixed?", "scenarios/race~3"],
      ["known-finding", "scenarios/race~4"],
      ["unknown", "scenarios/race~5"],
      ["known-finding", "scenarios/race~6"],
    ]);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.repro).toEqual({ scenario: "race", asked: 6, until: false, ran: 6, reproduced: 3, unknown: 1, hits: [2, 4, 6] });
    expect(rec.scenarios).toHaveLength(6);
    expect(rec.endedAt).toBeDefined();
  });

  it("UNTIL stops at the first reproduction (the attempts not made are not 'not run'); a shared-lab scenario shares one lab", async () => {
    const { pool: p, run, state } = pool();
    const t = await reproLoop(racy("shared", (k) => k === 3), 20, { spec: p.spec, run, pool: p, until: true });
    expect(t).toMatchObject({ ran: 3, asked: 20, reproduced: 1, hits: [3] });
    expect(tallyLine(t)).toBe("reproduced 1/3 (33% of 3 judged); 17 of 20 not attempted");
    expect(state.ups).toBe(1);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.plan).toEqual(["race~01", "race~02", "race~03"]);
    expect(rec.scenarios.map((s) => s.name)).toEqual(["race~01", "race~02", "race~03"]);
  });
});

describe("what a run prints to run it again", () => {
  it("the header counts the nodes of the labs the chosen scenarios really get; the reproduce line keeps version and topology", async () => {
    const { reproduceCommand, topologyLine } = await import("./cli.ts");
    const spec = parseTopology({ openclawVersion: "2026.9.4" });
    const own = (name: string, nodes?: number): Scenario => defineScenario({ name, proves: name, topology: "own", timeoutMs: 1, ...(nodes === undefined ? {} : { spec: { nodes: { count: nodes } } }), run: async () => {} });
    const shared = defineScenario({ name: "s", proves: "s", topology: "shared", timeoutMs: 1, run: async () => {} });
    expect(topologyLine(spec, [own("gw-only", 0)])).toBe("gw-only nodes=0");
    expect(topologyLine(spec, [shared, own("a"), own("b", 1)])).toBe("shared lab nodes=2, 1 own lab(s) nodes=2, b nodes=1");
    const env = { ...process.env };
    try {
      process.env.NODES = "4";
      process.env.TOPOLOGY = `{"nodes":{"capacity":1}}`;
      expect(reproduceCommand(spec, 42, ["a", "b"])).toBe(`make lab SEED=42 OPENCLAW_VERSION=2026.9.4 NODES=4 TOPOLOGY='{"nodes":{"capacity":1}}' SCENARIOS="a b"`);
    } finally {
      process.env = env;
    }
  });
});
