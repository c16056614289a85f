import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaceMonitor } from "../core/pace.ts";
import { Run, readRunRecord } from "../evidence/run.ts";
import { aimOffExitCode, aimOffLine, aimOffOutcome, aimTargets, bugChecks, notSelfTested, classify, reproExitCode, reproLoop, tally, tallyLine, type Attempt, type AttemptClass } from "./repro.ts";
import type { CheckResult, FindingRecord } from "../findings/findings.ts";
import { LabPool, runOrder } from "../run/runner.ts";
import { defineScenario, LabInfraError, type Scenario } from "../scenario.ts";
import type { Lab } from "../topology/lab.ts";
import { parseTopology } from "../definitions/spec.ts";
import { TeardownStack } from "../topology/teardown.ts";

let root: string;
beforeAll(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-repro-test-"))));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A pool of fake labs (no Docker): `ups` counts bring-ups. */
/** A machine as quiet as the reference, whatever this one is doing while the unit tests run. */
const quiet = new PaceMonitor(2, 1);
quiet.record(0, 0, 1);

function pool() {
  const run = Run.create({ root, seed: 7 });
  const state = { ups: 0 };
  const p = new LabPool(parseTopology({}), run, {
    paceMonitor: () => quiet,
    evidenceChecks: [],
    labFindings: [],
    start: async (r, _s, plan) => void r.update((x) => void (x.plan = runOrder(plan).map((s) => s.name))),
    engineTrouble: async () => undefined,
    up: async () => {
      state.ups++;
      return { spec: parseTopology({ tap: { enabled: false } }), teardown: new TeardownStack(), down: async () => {}, leftovers: async () => [], health: async () => [], residue: async () => [] } as unknown as Lab;
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

const attempt = (index: number, cls: AttemptClass): Attempt => ({ index, verdict: "pass", class: cls, seconds: 1, evidence: `scenarios/x~${index}` });
const check = (findingId: string, outcome: CheckResult["outcome"], more: Partial<CheckResult> = {}): CheckResult => ({ findingId, scenario: "x", expectation: "e", outcome, kind: "shortfall", ...more });

describe("what an attempt showed: reproduced means the bug", () => {
  const bug = ["F-race"];
  it("the bug check with its registered signature: reproduced", () => {
    expect(classify("known-finding", [check("F-race", "known-finding")], bug)).toEqual({ class: "reproduced", why: "F-race" });
  });
  it("the bug check short with a signature no record has: new signature, with the observed value", () => {
    expect(classify("fail", [check("F-race", "fail", { observed: { lost: 2 } })], bug)).toEqual({ class: "new signature", why: 'F-race observed {"lost":2}' });
  });
  it("another check failing, or a step failing (a precondition, a time-out, a leftover): failed otherwise, even beside the bug", () => {
    expect(classify("fail", [check("F-race", "known-finding"), check("E-precondition", "fail", { note: "not met" })], bug)).toEqual({ class: "failed otherwise", why: "E-precondition: not met" });
    expect(classify("fail", [check("F-race", "known-finding")], bug).class).toBe("failed otherwise");
    expect(classify("fail", [], bug).class).toBe("failed otherwise");
    // Unregistered protocol drift seen by the evidence checks is another check.
    expect(classify("fail", [check("F-race", "known-finding"), check("F-protocol-drift x", "fail", { scope: "lab" })], bug).class).toBe("failed otherwise");
  });
  it("every bug check held: not reproduced; none judged, unknown or n/a: could not tell", () => {
    expect(classify("fixed?", [check("F-race", "fixed?")], bug).class).toBe("not reproduced");
    expect(classify("pass", [check("F-other", "pass")], bug)).toEqual({ class: "could not tell", why: "no check judged F-race" });
    expect(classify("unknown", [check("F-race", "known-finding")], bug).class).toBe("could not tell");
    expect(classify("n/a", [], bug).class).toBe("could not tell");
    // A lab-wide known finding leaves the class alone.
    expect(classify("known-finding", [check("F-race", "known-finding"), check("F-drift", "known-finding", { scope: "lab" })], bug).class).toBe("reproduced");
  });
  it("not reproduced only when every bug check was judged: one never judged could have shown it", () => {
    const two = ["F-a", "F-b"];
    expect(classify("pass", [check("F-a", "pass")], two)).toEqual({ class: "could not tell", why: "F-a held, but no check judged F-b" });
    expect(classify("pass", [check("F-a", "pass"), check("F-b", "pass")], two).class).toBe("not reproduced");
    // One of two showing the bug is a reproduction, judged or not the other.
    expect(classify("known-finding", [check("F-a", "known-finding")], two).class).toBe("reproduced");
  });
  it("a step that failed beside a bug check is failed otherwise, a new signature too: 'nothing else failed' (Judged.failedSteps)", () => {
    const threw = ["the turn never ended: gateway agent.wait failed: TIMEOUT"];
    expect(classify("fail", [check("F-race", "fail", { observed: { lost: 2 } })], bug, threw)).toEqual({ class: "failed otherwise", why: `a step failed: ${threw[0]} (besides fail F-race)` });
    expect(classify("fail", [check("F-race", "known-finding")], bug, threw).class).toBe("failed otherwise");
    // Without a failed step the same check is a new signature.
    expect(classify("fail", [check("F-race", "fail", { observed: { lost: 2 } })], bug, []).class).toBe("new signature");
  });
  it("a differs-from-reference record matched is its own class, never reproduced; a shortfall beside it is", () => {
    const differs = check("R-contract", "known-finding", { kind: "differs-from-reference" });
    expect(classify("known-finding", [differs], ["R-contract"])).toEqual({ class: "differs from reference", why: "R-contract: a differs-from-reference record (what OpenClaw documents, or a reference does otherwise), not a bug" });
    expect(classify("known-finding", [differs, check("F-race", "known-finding")], ["R-contract", "F-race"])).toEqual({ class: "reproduced", why: "F-race" });
  });
  it("the bug checks are the scenario's own (Scenario.bug), else its registered findings", () => {
    expect(bugChecks({ findings: [F] })).toEqual(["F-race"]);
    expect(bugChecks({ findings: [F], bug: ["R-x"] })).toEqual(["R-x"]);
  });
});

describe("the tally, the line and the exit code follow the classes", () => {
  it("each class counted apart; only reproduced and new signature show the bug", () => {
    const t = tally("x", 6, [attempt(1, "reproduced"), attempt(2, "not reproduced"), attempt(3, "failed otherwise"), attempt(4, "could not tell"), attempt(5, "new signature"), attempt(6, "not reproduced")]);
    expect(t).toMatchObject({ ran: 6, reproduced: 1, newSignature: 1, failedOtherwise: 1, notReproduced: 2, unknown: 1, hits: [1, 5] });
    expect(tallyLine(t)).toBe("reproduced 1/6 (registered signature), new signature 1, failed otherwise 1 (not the bug: a step or another check), not reproduced 2, could not tell 1");
    expect(reproExitCode(t)).toBe(0);
  });
  it("differs from reference is counted apart and shows no bug: exit 1 when nothing else did", () => {
    const t = tally("x", 2, [attempt(1, "differs from reference"), attempt(2, "differs from reference")]);
    expect(t).toMatchObject({ reproduced: 0, differs: 2, hits: [] });
    expect(tallyLine(t)).toMatch(/^reproduced 0\/2 \(registered signature\), differs from reference 2 \(a differs-from-reference record matched/);
    expect(reproExitCode(t)).toBe(1);
  });
  it("a loop whose every attempt failed otherwise is not a reproduction: exit 1; none could tell: 3", () => {
    expect(reproExitCode(tally("x", 2, [attempt(1, "failed otherwise"), attempt(2, "failed otherwise")]))).toBe(1);
    expect(reproExitCode(tally("x", 2, [attempt(1, "not reproduced"), attempt(2, "could not tell")]))).toBe(1);
    expect(reproExitCode(tally("x", 2, [attempt(1, "could not tell"), attempt(2, "could not tell")]))).toBe(3);
  });
});

describe("the loop", () => {
  it("an own-lab scenario: a fresh lab per attempt, every attempt with its own evidence folder, and the classes in run.json", async () => {
    const { pool: p, run, state } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(racy("own", (k) => k % 2 === 0, [5]), 6, { spec: p.spec, run, pool: p, onAttempt: (a) => seen.push(a) });
    expect(tallyLine(t)).toBe("reproduced 3/6 (registered signature), not reproduced 2, could not tell 1");
    expect(state.ups).toBe(6);
    expect(seen.map((a) => [a.verdict, a.class, a.evidence])).toEqual([
      ["fixed?", "not reproduced", "scenarios/race~1"],
      ["known-finding", "reproduced", "scenarios/race~2"],
      ["fixed?", "not reproduced", "scenarios/race~3"],
      ["known-finding", "reproduced", "scenarios/race~4"],
      ["unknown", "could not tell", "scenarios/race~5"],
      ["known-finding", "reproduced", "scenarios/race~6"],
    ]);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.repro).toMatchObject({ scenario: "race", asked: 6, until: false, ran: 6, reproduced: 3, newSignature: 0, failedOtherwise: 0, notReproduced: 2, unknown: 1, hits: [2, 4, 6] });
    expect(rec.repro?.attempts?.map((a) => a.class)).toEqual(seen.map((a) => a.class));
    expect(rec.scenarios).toHaveLength(6);
    expect(rec.endedAt).toBeDefined();
  });

  it("a scenario whose precondition check fails every time: failed otherwise, never reproduced, exit 1", async () => {
    const { pool: p, run } = pool();
    const s = defineScenario({
      name: "pre",
      proves: "pre",
      topology: "own",
      timeoutMs: 5_000,
      findings: [F],
      run: async ({ check }) => {
        check({ id: "E-fault-acted", expectation: "the fault acted on the path", holds: false, observed: { served502: 0 } });
        check({ id: "F-race", expectation: F.expectation, holds: false, observed: { lost: true } });
      },
    });
    const t = await reproLoop(s, 2, { spec: p.spec, run, pool: p });
    expect(t).toMatchObject({ reproduced: 0, failedOtherwise: 2, hits: [] });
    expect(reproExitCode(t)).toBe(1);
  });

  it("UNTIL stops at the first reproduction (the attempts not made are not 'not run'); a shared-lab scenario shares one lab", async () => {
    const { pool: p, run, state } = pool();
    const t = await reproLoop(racy("shared", (k) => k === 3), 20, { spec: p.spec, run, pool: p, until: true });
    expect(t).toMatchObject({ ran: 3, asked: 20, reproduced: 1, hits: [3] });
    expect(tallyLine(t)).toBe("reproduced 1/3 (registered signature), not reproduced 2; 17 of 20 not attempted");
    expect(state.ups).toBe(1);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.plan).toEqual(["race~01", "race~02", "race~03"]);
    expect(rec.scenarios.map((s) => s.name)).toEqual(["race~01", "race~02", "race~03"]);
  });
});

describe("the premise self-test (--aim-off): the fault aimed off its path must read unknown", () => {
  const P = { id: "P-fault-acted", what: "the fault acted on the path", aimOff: "the rule on another path" };
  /** A repro whose fault is a counter: aimed off, it counts nothing; `honest` false: its premise check ignores the count. */
  function aimable(honest: boolean): Scenario {
    return defineScenario({
      name: "aim",
      proves: "aim",
      topology: "own",
      timeoutMs: 5_000,
      findings: [F],
      premises: [P],
      run: async ({ check, premise, aimOff }) => {
        const served = aimOff ? 0 : 3;
        premise({ id: P.id, met: honest ? served > 0 : true, observed: { served } });
        check({ id: "F-race", expectation: F.expectation, holds: true });
      },
    });
  }

  it("an honest premise check: every attempt unknown with the premise unmet, caught 2/2, exit 0; run.json keeps it", async () => {
    const { pool: p, run } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(aimable(true), 2, { spec: p.spec, run, pool: p, aimOff: true, onAttempt: (a) => seen.push(a) });
    expect(seen.map((a) => [a.verdict, a.aimOff?.caught])).toEqual([
      ["unknown", true],
      ["unknown", true],
    ]);
    expect(seen[0]!.aimOff!.why).toBe('unknown: P-fault-acted unmet (observed {"served":0})');
    expect(aimOffLine(t)).toBe("premise self-test (--aim-off): caught the miss 2/2");
    expect(aimOffExitCode(t)).toBe(0);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.repro).toMatchObject({ aimOff: true, caught: 2, ran: 2 });
    expect(rec.repro?.attempts?.[0]?.aimOff).toEqual({ premise: P.id, caught: true, outcome: "caught", why: seen[0]!.aimOff!.why });
  });

  it("a premise check that cannot fail lets the miss through: the attempt reads fixed?, NOT caught, exit 1", async () => {
    const { pool: p, run } = pool();
    const t = await reproLoop(aimable(false), 1, { spec: p.spec, run, pool: p, aimOff: true });
    expect(t.caught).toBe(0);
    expect(aimOffLine(t)).toContain("caught the miss 0/1 - 1 attempt(s) NOT caught");
    expect(aimOffExitCode(t)).toBe(1);
  });

  it("the same scenario without --aim-off runs its fault on the path: the premise is met and the check judged", async () => {
    const { pool: p, run } = pool();
    const t = await reproLoop(aimable(true), 1, { spec: p.spec, run, pool: p });
    expect(t).toMatchObject({ notReproduced: 1, unknown: 0 });
    expect(t.caught).toBeUndefined();
  });

  it("unknown for another reason (the lab's own step) is not the premise catching the miss", () => {
    const r = aimOffOutcome({ verdict: "unknown", detail: "the tap did not answer", premises: [] }, [P.id]);
    expect(r).toEqual({ caught: false, outcome: "could not tell", why: "unknown before the premise was judged (the tap did not answer); P-fault-acted never proven" });
    expect(aimOffOutcome({ verdict: "unknown", premises: [{ ...P, met: false, observed: { served: 0 } }, { ...P, met: true }] }, [P.id])).toMatchObject({ caught: false, outcome: "let through" });
  });

  it("an attempt that ended before the premise was judged is 'could not tell', not 'NOT caught': exit 3 when no attempt let the miss through", () => {
    const base = { scenario: "s", asked: 2, ran: 2, reproduced: 0, differs: 0, newSignature: 0, failedOtherwise: 0, notReproduced: 0, unknown: 2, hits: [], matched: {} };
    const untold = { ...base, caught: 1, letThrough: 0, couldNotTell: 1 };
    expect(aimOffLine(untold)).toBe("premise self-test (--aim-off): caught the miss 1/2 - 1 attempt(s) could not tell (ended before the premise was judged: the lab, a member or a step failed first; run again)");
    expect(aimOffLine(untold)).not.toContain("NOT caught");
    expect(aimOffExitCode(untold)).toBe(3);
    expect(aimOffExitCode({ ...base, caught: 0, letThrough: 1, couldNotTell: 1 })).toBe(1);
    expect(aimOffExitCode({ ...base, caught: 2, letThrough: 0, couldNotTell: 0 })).toBe(0);
  });

  // Two premises, each with an aim-off. `fixed` names the premise whose check ignores its fault.
  const A = { id: "P-a", what: "fault a acted", aimOff: "a elsewhere" };
  const B = { id: "P-b", what: "fault b acted", aimOff: "b elsewhere" };
  const C = { id: "P-c", what: "the turn was in flight" };
  function twoPremises(cannotFail?: string, extra: { id: string; what: string }[] = []): Scenario {
    return defineScenario({
      name: "two",
      proves: "two",
      topology: "own",
      timeoutMs: 5_000,
      findings: [F],
      premises: [A, B, ...extra],
      run: async ({ check, premise, aimOff }) => {
        for (const p of [A, B]) premise({ id: p.id, met: cannotFail === p.id ? true : aimOff !== p.id, observed: { aimedOff: aimOff ?? null } });
        for (const p of extra) premise({ id: p.id, met: true });
        check({ id: "F-race", expectation: F.expectation, holds: true });
      },
    });
  }

  it("each premise is aimed off on its own, N attempts each, and caught on its own: caught 2/2, a line per premise", async () => {
    const { pool: p, run } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(twoPremises(undefined, [C]), 1, { spec: p.spec, run, pool: p, aimOff: true, onAttempt: (a) => seen.push(a) });
    expect(seen.map((a) => [a.aimOff?.premise, a.verdict, a.aimOff?.outcome])).toEqual([
      ["P-a", "unknown", "caught"],
      ["P-b", "unknown", "caught"],
    ]);
    expect(aimOffLine(t)).toBe("premise self-test (--aim-off): caught the miss 2/2\n  P-a aimed off: caught 1/1\n  P-b aimed off: caught 1/1\n  not self-tested (no aim-off): P-c");
    expect(aimOffExitCode(t)).toBe(0);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.repro).toMatchObject({ aimOff: true, aimed: ["P-a", "P-b"], notSelfTested: ["P-c"], asked: 2, ran: 2, caught: 2 });
    expect(rec.scenarios.map((x) => x.name)).toEqual(["two~1", "two~2"]);
  });

  it("a premise check that cannot fail no longer hides behind the other premise: P-b aimed off reads NOT caught, exit 1", async () => {
    const { pool: p, run } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(twoPremises("P-b"), 1, { spec: p.spec, run, pool: p, aimOff: true, onAttempt: (a) => seen.push(a) });
    // Aiming both off at once would have read "caught" (P-a unmet), whatever P-b's check does.
    expect(seen.map((a) => [a.aimOff?.premise, a.verdict, a.aimOff?.outcome])).toEqual([
      ["P-a", "unknown", "caught"],
      ["P-b", "fixed?", "let through"],
    ]);
    expect(aimOffLine(t)).toContain("P-b aimed off: caught 0/1, NOT caught 1");
    expect(aimOffExitCode(t)).toBe(1);
  });

  it("--premise aims off that one only; one that is not an aimable premise of the scenario is refused, naming those that are", async () => {
    const { pool: p, run, state } = pool();
    const t = await reproLoop(twoPremises(), 2, { spec: p.spec, run, pool: p, aimOff: true, premise: "P-b" });
    expect(t).toMatchObject({ ran: 2, caught: 2, perPremise: { "P-b": { ran: 2, caught: 2, letThrough: 0, couldNotTell: 0 } } });
    expect(aimTargets(twoPremises(), undefined)).toEqual(["P-a", "P-b"]);
    expect(() => aimTargets(twoPremises(undefined, [C]), "P-c")).toThrow("--premise P-c: scenario two's premise P-c has no aim-off (it is not self-tested); the ones it can aim off: P-a, P-b");
    expect(() => aimTargets(twoPremises(), "P-zz")).toThrow("--premise P-zz: scenario two declares no premise P-zz; the ones it can aim off: P-a, P-b");
    expect(notSelfTested(twoPremises(undefined, [C]))).toEqual(["P-c"]);
    expect(state.ups).toBe(2);
  });

  it("a scenario with no premise it can aim off is refused before any lab comes up", async () => {
    const { pool: p, run, state } = pool();
    await expect(reproLoop(racy("own", () => true), 1, { spec: p.spec, run, pool: p, aimOff: true })).rejects.toThrow("--aim-off: scenario race declares no premise it can aim its fault off");
    expect(state.ups).toBe(0);
  });
});

describe("a record with a signature per version range", () => {
  // The lab under test is 2026.9.6 (the default version of the fake labs).
  const V: FindingRecord = { ...F, id: "F-v", signature: { lost: true }, versions: ["2026.9.5", "2026.9.6"], variants: [{ versions: ">=2026.9.6", signature: { lost: "late" } }] };
  const scenario = (observe: (k: number) => unknown, rec = V) => {
    let k = 0;
    return defineScenario({
      name: "variants",
      proves: "variants",
      topology: "own",
      timeoutMs: 5_000,
      findings: [rec],
      run: async ({ check }) => {
        const seen = observe(++k);
        check({ id: rec.id, expectation: rec.expectation, holds: seen === undefined, observed: seen });
      },
    });
  };

  it("each attempt and the summary line name the variant that matched, and run.json keeps it in the attempt's why", async () => {
    const { pool: p, run } = pool();
    const seen: Attempt[] = [];
    const t = await reproLoop(scenario((k) => (k === 2 ? { lost: true } : { lost: "late" })), 3, { spec: p.spec, run, pool: p, onAttempt: (a) => seen.push(a) });
    expect(seen.map((a) => a.why)).toEqual(["F-v [variant >=2026.9.6]", "F-v [variant base]", "F-v [variant >=2026.9.6]"]);
    expect(tallyLine(t)).toBe("reproduced 3/3 (registered signature), not reproduced 0; matched F-v [variant >=2026.9.6] x2, F-v [variant base] x1");
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.repro?.attempts?.map((a) => a.why)).toEqual(seen.map((a) => a.why));
  });

  it("a record without variants adds nothing to the line", () => {
    const t = tally("x", 1, [{ ...attempt(1, "reproduced"), matched: ["F-race"] }]);
    expect(tallyLine(t)).toBe("reproduced 1/1 (registered signature), not reproduced 0");
  });

  it("on a version older than every version the record names, the check holding is not reproduced with 'not affected' as why", async () => {
    const { pool: p, run } = pool();
    const later = { ...V, versions: ["2027.1.1"], variants: undefined };
    const seen: Attempt[] = [];
    const t = await reproLoop(scenario(() => undefined, later), 1, { spec: p.spec, run, pool: p, onAttempt: (a) => seen.push(a) });
    expect(seen[0]).toMatchObject({ verdict: "pass", class: "not reproduced" });
    expect(seen[0]!.why).toMatch(/^not affected: 2026.9.6 is older than every version registered finding F-v names \(2027.1.1\)/);
    expect(reproExitCode(t)).toBe(1);
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
