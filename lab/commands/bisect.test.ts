import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LabError } from "../core/log.ts";
import type { Verdict } from "../definitions/verdict.ts";
import { answerLine, bisect, bisectAgain, bisectExitCode, bisectVersions, checkGoodBad, maxSteps, stepLine, stepVerdict, writeBisect, type StepRun } from "./bisect.ts";

// As `npm view openclaw versions --json` lists them (its order is not trusted: sorted by compareVersions).
const published = ["2026.8.1-beta.1", "2026.8.1", "2026.8.2", "2026.9.1-beta.1", "2026.9.1-beta.2", "2026.9.1", "2026.9.4", "2026.9.10", "2026.9.5", "2026.9.6"];

/** A fake step runner: each version's attempts as given (default: `verdict` for every attempt), and the versions it was asked for. */
function steps(reads: Record<string, Verdict[] | string>, fallback?: (v: string) => Verdict[]) {
  const asked: string[] = [];
  const runStep = async (v: string): Promise<StepRun> => {
    asked.push(v);
    const r = reads[v] ?? fallback?.(v);
    if (r === undefined) throw new Error(`no reading for ${v}`);
    if (typeof r === "string") return { attempts: [], run: `run-${v}`, error: r };
    return { attempts: r.map((verdict, i) => ({ verdict, evidence: `scenarios/s~${i + 1}` })), run: `run-${v}` };
  };
  return { asked, runStep };
}

/** The verdict of each version by where it lies against a boundary: `before` older than `first`, `after` from it on. */
const boundary = (versions: string[], first: string, before: Verdict, after: Verdict) => (v: string) => (versions.indexOf(v) < versions.indexOf(first) ? [before, before, before] : [after, after, after]);

function refusal(fn: () => unknown): LabError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).exitCode).toBe(2);
    return err as LabError;
  }
  throw new Error("no refusal");
}

describe("the versions to search", () => {
  it("the published releases from GOOD to BAD inclusive, oldest first by compareVersions (2026.9.10 after 2026.9.6)", () => {
    expect(bisectVersions(published, "2026.8.2", "2026.9.10")).toEqual(["2026.8.2", "2026.9.1", "2026.9.4", "2026.9.5", "2026.9.6", "2026.9.10"]);
    expect(bisectVersions(published, "2026.9.4", "2026.9.5")).toEqual(["2026.9.4", "2026.9.5"]);
    // Listed twice: once.
    expect(bisectVersions([...published, "2026.9.5"], "2026.9.4", "2026.9.6")).toEqual(["2026.9.4", "2026.9.5", "2026.9.6"]);
  });

  it("pre-releases only when asked; then in their place, before their release", () => {
    expect(bisectVersions(published, "2026.8.1", "2026.9.4")).toEqual(["2026.8.1", "2026.8.2", "2026.9.1", "2026.9.4"]);
    expect(bisectVersions(published, "2026.8.1", "2026.9.4", true)).toEqual(["2026.8.1", "2026.8.2", "2026.9.1-beta.1", "2026.9.1-beta.2", "2026.9.1", "2026.9.4"]);
    expect(bisectVersions(published, "2026.9.1-beta.1", "2026.9.1", true)).toEqual(["2026.9.1-beta.1", "2026.9.1-beta.2", "2026.9.1"]);
  });

  it("bad input is refused (exit 2) naming the fix", () => {
    expect(refusal(() => bisectVersions(published, "2026.9.7", "2026.9.10")).message).toBe("GOOD=2026.9.7: openclaw@2026.9.7 is not published. Recent versions: 2026.9.1, 2026.9.4, 2026.9.5, 2026.9.6, 2026.9.10.");
    expect(refusal(() => bisectVersions(published, "2026.9.4", "2026.9.99")).message).toMatch(/^BAD=2026\.9\.99: openclaw@2026\.9\.99 is not published/);
    expect(refusal(() => bisectVersions(published, "latest", "2026.9.6")).message).toMatch(/^GOOD=latest is not an exact version/);
    expect(refusal(() => bisectVersions(published, "2026.9.6", "2026.9.4")).message).toMatch(/GOOD=2026\.9\.6 is newer than BAD=2026\.9\.4: .*swap them/);
    expect(refusal(() => bisectVersions(published, "2026.9.5", "2026.9.5")).message).toMatch(/GOOD and BAD are the same version \(2026\.9\.5\)/);
    expect(refusal(() => bisectVersions(published, "2026.9.1-beta.1", "2026.9.4")).message).toMatch(/GOOD=2026\.9\.1-beta\.1 is a pre-release: add --pre \(make bisect PRE=1\)/);
    expect(refusal(() => bisectVersions([], "2026.9.4", "2026.9.6")).message).toBe("GOOD=2026.9.4: openclaw@2026.9.4 is not published.");
  });

  it("the form and order of GOOD and BAD are checked before npm is asked (checkGoodBad)", () => {
    expect(() => checkGoodBad("2026.9.4", "2026.9.6")).not.toThrow();
    expect(() => checkGoodBad("2026.9.1-beta.1", "2026.9.1", true)).not.toThrow();
    expect(refusal(() => checkGoodBad("2026.9.4", "2026.9")).message).toMatch(/^BAD=2026\.9 is not an exact version/);
    expect(refusal(() => checkGoodBad("2026.9.4", ">=2026.9.6")).message).toMatch(/^BAD=>=2026\.9\.6 is not an exact version/);
    expect(refusal(() => checkGoodBad("2026.9.4", "2026.9.6-rc.1")).message).toMatch(/BAD=2026\.9\.6-rc\.1 is a pre-release: add --pre/);
    expect(refusal(() => checkGoodBad("2026.9.10", "2026.9.9")).message).toMatch(/GOOD=2026\.9\.10 is newer than BAD=2026\.9\.9/);
    expect(refusal(() => checkGoodBad("2026.9.6", "2026.9.6-rc.1", true)).message).toMatch(/GOOD=2026\.9\.6 is newer than BAD=2026\.9\.6-rc\.1/);
  });
});

describe("a step's verdict from its attempts", () => {
  it("one verdict when the attempts agree, unknown set aside", () => {
    expect(stepVerdict(["known-finding", "known-finding", "known-finding"])).toBe("known-finding");
    expect(stepVerdict(["pass", "unknown", "pass"])).toBe("pass");
    expect(stepVerdict(["unknown", "unknown", "fail"])).toBe("fail");
    expect(stepVerdict(["n/a"])).toBe("n/a");
  });

  it("could not tell when they disagree or none is left", () => {
    expect(stepVerdict(["pass", "known-finding", "pass"])).toBe("could not tell");
    expect(stepVerdict(["pass", "unknown", "fail"])).toBe("could not tell");
    expect(stepVerdict(["unknown", "unknown", "unknown"])).toBe("could not tell");
    expect(stepVerdict([])).toBe("could not tell");
  });
});

describe("the search", () => {
  const vs = ["2026.9.1", "2026.9.2", "2026.9.3", "2026.9.4", "2026.9.5", "2026.9.6", "2026.9.7", "2026.9.8", "2026.9.9"];

  it("GOOD and BAD reading the same: 'same' after those two steps (the command refuses)", async () => {
    const { asked, runStep } = steps({}, () => ["known-finding", "unknown", "known-finding"]);
    const r = await bisect(vs, runStep);
    expect(r.answer).toEqual({ result: "same", reads: "known-finding" });
    expect(asked).toEqual(["2026.9.1", "2026.9.9"]);
    expect(bisectExitCode(r.answer)).toBe(1);
  });

  it("adjacent versions: GOOD and BAD only, BAD the answer", async () => {
    const { asked, runStep } = steps({ "2026.9.4": ["known-finding", "known-finding", "known-finding"], "2026.9.5": ["pass", "pass", "pass"] });
    const r = await bisect(["2026.9.4", "2026.9.5"], runStep);
    expect(r.answer).toEqual({ result: "found", good: "2026.9.4", goodReads: "known-finding", first: "2026.9.5", firstReads: "pass", lastGood: "2026.9.4" });
    expect(asked).toEqual(["2026.9.4", "2026.9.5"]);
    expect(bisectExitCode(r.answer)).toBe(0);
  });

  it("finds every boundary by halving, the first and last in-between version included, in at most maxSteps steps", async () => {
    for (const first of vs.slice(1)) {
      const { asked, runStep } = steps({}, boundary(vs, first, "pass", "fail"));
      const r = await bisect(vs, runStep);
      expect(r.answer).toMatchObject({ result: "found", first, firstReads: "fail", lastGood: vs[vs.indexOf(first) - 1] });
      expect(asked.slice(0, 2)).toEqual(["2026.9.1", "2026.9.9"]);
      expect(new Set(asked).size).toBe(asked.length); // no version twice
      expect(asked.length).toBeLessThanOrEqual(maxSteps(vs.length));
    }
  });

  it("the boundary at the first in-between version: the steps walk down to it", async () => {
    const { asked, runStep } = steps({}, boundary(vs, "2026.9.2", "known-finding", "pass"));
    const r = await bisect(vs, runStep);
    expect(r.answer).toMatchObject({ result: "found", first: "2026.9.2", firstReads: "pass", lastGood: "2026.9.1" });
    expect(asked).toEqual(["2026.9.1", "2026.9.9", "2026.9.5", "2026.9.3", "2026.9.2"]);
  });

  it("the boundary at the last in-between version: BAD is the answer", async () => {
    const { asked, runStep } = steps({}, boundary(vs, "2026.9.9", "pass", "known-finding"));
    const r = await bisect(vs, runStep);
    expect(r.answer).toMatchObject({ result: "found", first: "2026.9.9", lastGood: "2026.9.8" });
    expect(asked).toEqual(["2026.9.1", "2026.9.9", "2026.9.5", "2026.9.7", "2026.9.8"]);
  });

  it("a third verdict in between differs from GOOD's as much as BAD's does", async () => {
    const { runStep } = steps({ "2026.9.1": ["pass"], "2026.9.2": ["n/a"], "2026.9.3": ["fail"] });
    expect((await bisect(["2026.9.1", "2026.9.2", "2026.9.3"], runStep)).answer).toMatchObject({ result: "found", first: "2026.9.2", firstReads: "n/a" });
  });

  it("every step is kept: its version, the verdicts of its attempts, its reading, run and evidence", async () => {
    const heard: string[] = [];
    const { runStep } = steps({ "2026.9.1": ["pass", "unknown", "pass"], "2026.9.2": ["pass", "pass", "pass"], "2026.9.3": ["fail", "fail", "fail"] });
    const r = await bisect(["2026.9.1", "2026.9.2", "2026.9.3"], runStep, (s) => heard.push(s.version));
    expect(heard).toEqual(["2026.9.1", "2026.9.3", "2026.9.2"]);
    expect(r.steps[0]).toEqual({ version: "2026.9.1", verdicts: ["pass", "unknown", "pass"], reads: "pass", run: "run-2026.9.1", evidence: ["scenarios/s~1", "scenarios/s~2", "scenarios/s~3"] });
    expect(r.steps.map((s) => s.reads)).toEqual(["pass", "fail", "pass"]);
    expect(r.answer).toMatchObject({ result: "found", first: "2026.9.3", lastGood: "2026.9.2" });
  });

  it("a step whose attempts disagree: could not tell, naming that step, and the search stops there", async () => {
    const { asked, runStep } = steps({ "2026.9.1": ["pass", "pass", "pass"], "2026.9.9": ["fail", "fail", "fail"], "2026.9.5": ["pass", "fail", "pass"] });
    const r = await bisect(vs, runStep);
    expect(r.answer).toEqual({ result: "could not tell", at: "2026.9.5", verdicts: ["pass", "fail", "pass"] });
    expect(asked).toEqual(["2026.9.1", "2026.9.9", "2026.9.5"]);
    expect(bisectExitCode(r.answer)).toBe(3);
  });

  it("GOOD that could not tell (every attempt unknown): stops before BAD is run", async () => {
    const { asked, runStep } = steps({ "2026.9.1": ["unknown", "unknown", "unknown"] });
    const r = await bisect(vs, runStep);
    expect(r.answer).toEqual({ result: "could not tell", at: "2026.9.1", verdicts: ["unknown", "unknown", "unknown"] });
    expect(asked).toEqual(["2026.9.1"]);
  });

  it("BAD that could not tell: could not tell, not 'same'", async () => {
    const { runStep } = steps({ "2026.9.1": ["pass", "pass", "pass"], "2026.9.9": ["pass", "fail", "unknown"] });
    expect((await bisect(vs, runStep)).answer).toMatchObject({ result: "could not tell", at: "2026.9.9" });
  });

  it("a step that could not run (its set-up failed): could not tell with the reason", async () => {
    const { runStep } = steps({ "2026.9.1": ["pass"], "2026.9.9": ["fail"], "2026.9.5": "set-up failed before any scenario ran: npm install openclaw@2026.9.5 failed" });
    const r = await bisect(vs, runStep);
    expect(r.answer).toEqual({ result: "could not tell", at: "2026.9.5", verdicts: [], error: "set-up failed before any scenario ran: npm install openclaw@2026.9.5 failed" });
    expect(r.steps.at(-1)).toMatchObject({ version: "2026.9.5", reads: "could not tell", run: "run-2026.9.5" });
  });

  it("fewer than two versions is refused", async () => {
    await expect(bisect(["2026.9.4"], steps({}).runStep)).rejects.toThrow(/at least two versions/);
  });

  it("maxSteps: GOOD, BAD and the halvings", () => {
    expect([2, 3, 4, 5, 9, 10, 17].map(maxSteps)).toEqual([2, 3, 4, 4, 5, 6, 6]);
  });
});

describe("what it prints and keeps", () => {
  const q = { scenario: "repro-155333", good: "2026.9.4", bad: "2026.9.6" };

  it("a line per step and the answer", () => {
    expect(stepLine({ version: "2026.9.5", verdicts: ["known-finding", "known-finding", "known-finding"], reads: "known-finding", run: "20261201-1", evidence: [] })).toBe(
      "2026.9.5  known-finding known-finding known-finding  -> known-finding   run 20261201-1",
    );
    expect(stepLine({ version: "2026.9.5", verdicts: [], reads: "could not tell", run: "r", evidence: [], error: "set-up failed\nmore" }, 10)).toBe("2026.9.5    (no attempt ended)  -> could not tell   run r  (set-up failed)");
    expect(answerLine({ result: "found", good: "2026.9.4", goodReads: "known-finding", first: "2026.9.5", firstReads: "pass", lastGood: "2026.9.4" }, q)).toBe("first version that differs from GOOD (2026.9.4: known-finding): 2026.9.5 (pass)");
    expect(answerLine({ result: "same", reads: "pass" }, q)).toMatch(/^GOOD 2026\.9\.4 and BAD 2026\.9\.6 both read pass: nothing to bisect \(refused\)/);
    expect(answerLine({ result: "could not tell", at: "2026.9.5", verdicts: ["pass", "fail"] }, q)).toMatch(/^could not tell: the step on 2026\.9\.5 has attempts that disagree \(pass fail\); .*make repro NAME=repro-155333 OPENCLAW_VERSION=2026\.9\.5/);
    expect(answerLine({ result: "could not tell", at: "2026.9.5", verdicts: ["unknown", "unknown"] }, q)).toMatch(/read unknown in every attempt/);
  });

  it("the make command that runs it again", () => {
    expect(bisectAgain({ scenario: "smoke", good: "2026.9.4", bad: "2026.9.6", n: 3, pre: false, seed: 7 })).toBe("make bisect NAME=smoke GOOD=2026.9.4 BAD=2026.9.6 N=3 SEED=7");
    expect(bisectAgain({ scenario: "smoke", good: "2026.9.4", bad: "2026.9.6", n: 5, pre: true, seed: 7, nodes: "3", topology: '{"nodes":{"capacity":1}}' })).toBe(
      `make bisect NAME=smoke GOOD=2026.9.4 BAD=2026.9.6 N=5 PRE=1 SEED=7 NODES=3 TOPOLOGY='{"nodes":{"capacity":1}}'`,
    );
  });

  it("bisect.json is validated and written into its folder", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bisect-"));
    try {
      const file = writeBisect(path.join(dir, "bisect-x"), {
        id: "bisect-x",
        startedAt: "2026-12-01T00:00:00.000Z",
        scenario: "smoke",
        good: "2026.9.4",
        bad: "2026.9.5",
        n: 3,
        pre: false,
        versions: ["2026.9.4", "2026.9.5"],
        steps: [{ version: "2026.9.4", verdicts: ["pass"], reads: "pass", run: "r1", evidence: ["scenarios/smoke~1"] }],
        answer: { result: "same", reads: "pass" },
      });
      expect(JSON.parse(fs.readFileSync(file, "utf8"))).toMatchObject({ id: "bisect-x", answer: { result: "same" } });
      expect(() => writeBisect(dir, { id: "x" } as never)).toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
