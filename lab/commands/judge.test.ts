import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Run } from "../evidence/run.ts";
import { writeJson } from "../evidence/write.ts";
import { addJudged, emptyHistory, judgeHistory, HISTORY_FILE, type ScenarioHistory } from "../judge/history.ts";
import { defineScenario, type Scenario } from "../scenario.ts";
import type { FindingRecord } from "../findings/findings.ts";
import { changesText, judgeRun, keepFixtures, readHistory, writeJudged } from "./judge.ts";

const V = "2026.9.6";
const rec = (id: string, signature: unknown): FindingRecord => ({ id, expectation: "e", signature, versions: [V], kind: "shortfall", evidence: "x" });
const scenario = (findings: FindingRecord[] = []): Scenario =>
  defineScenario<{ code?: number }>({
    name: "s",
    proves: "p",
    topology: "shared",
    timeoutMs: 1000,
    findings,
    checks: [{ id: "F-code", expectation: "code 0", judge: (h) => (h.code === undefined ? undefined : { holds: h.code === 0, observed: { code: h.code } }) }],
    async run() {},
  });

/** A run folder as the runner leaves it: history.json beside the row it judged (with the same judgeHistory). */
function storedRun(h: ScenarioHistory, s: Scenario): { dir: string; run: Run } {
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-judge-")) });
  const evidence = "scenarios/s";
  const j = judgeHistory(h, s, []);
  writeJson(path.join(run.dir, evidence, HISTORY_FILE), { ...h, derived: j.derived });
  writeJson(path.join(run.dir, evidence, "verdict.json"), { verdict: j.verdict, detail: j.detail });
  run.update((r) => {
    r.plan = ["s"];
    r.scenarios.push({ name: "s", verdict: j.verdict, seconds: 1, detail: j.detail, evidence });
    addJudged(r, "s", j);
    r.endedAt = new Date().toISOString();
  });
  return { dir: run.dir, run };
}

describe("fleetlab judge: a stored run judged again", () => {
  const h = { ...emptyHistory("s", V, { own: [], labWide: [] }), bodyReturned: true, observations: { code: 7 } };

  it("with the same checks and records it reproduces the table exactly and says nothing changed", () => {
    const { dir, run } = storedRun(h, scenario());
    const j = judgeRun(dir, run.record, [scenario()], []);
    expect(j.rows.map((r) => [r.name, r.before.verdict, r.after.verdict, r.changed])).toEqual([["s", "fail", "fail", false]]);
    expect(j.record.scenarios[0]).toMatchObject({ verdict: "fail", detail: run.record.scenarios[0]!.detail });
    expect(changesText(j)).toBe("no verdict changed: 1 scenario(s) judged again read as the run read them");
  });

  it("one more finding record changes exactly that scenario's verdict, and says why; the new table goes beside the old", () => {
    const { dir, run } = storedRun(h, scenario());
    const j = judgeRun(dir, run.record, [scenario([rec("F-code", { code: 7 })])], []);
    expect(j.rows[0]).toMatchObject({ changed: true, before: { verdict: "fail" }, after: { verdict: "known-finding", detail: "known-finding F-code" }, why: ["F-code: fail -> known-finding (record F-code added)"] });
    const at = new Date("2026-12-04T19:00:00Z");
    const out = writeJudged(dir, j, at);
    expect(path.relative(dir, out)).toBe(path.join("judged", "20261204-190000"));
    expect(fs.readFileSync(path.join(out, "verdicts.md"), "utf8")).toContain("s: FAIL -> KNOWN-FINDING");
    expect(JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")).scenarios[0].verdict).toBe("known-finding");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "run.json"), "utf8")).scenarios[0].verdict).toBe("fail"); // the run's own stays
    expect(path.basename(writeJudged(dir, j, at))).toBe("20261204-190000-2");
  });

  it("the run's record is rebuilt by the run's own rule: the findings, exercised and unexercised records as they read now", () => {
    const { dir, run } = storedRun(h, scenario([rec("F-other", { x: 1 })]));
    expect([run.record.findings?.map((f) => f.outcome), run.record.unexercised]).toEqual([["fail"], [{ id: "F-other", scenario: "s" }]]);
    const labWide = rec("E-lab", { frame: "x" });
    const j = judgeRun(dir, run.record, [scenario([rec("F-code", { code: 7 })])], [labWide]);
    expect(j.record.findings?.map((f) => [f.findingId, f.outcome])).toEqual([["F-code", "known-finding"]]);
    expect(j.record.exercised).toEqual(["F-code"]);
    expect(j.record.unexercised).toEqual([{ id: "E-lab" }]); // F-other is no record of today's; the lab-wide one no scenario saw
  });

  it("--keep keeps the histories as judged once, with today's verdict and the run's when it differs", () => {
    const { dir, run } = storedRun(h, scenario());
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-keep-"));
    const j = judgeRun(dir, run.record, [scenario([rec("F-code", { code: 7 })])], []);
    expect(keepFixtures(dir, j, [], out)).toMatchObject([{ scenario: "s", file: path.join(out, "s.json") }]);
    const kept = JSON.parse(fs.readFileSync(path.join(out, "s.json"), "utf8"));
    expect([kept.verdict, kept.ran.verdict, kept.history.observations]).toEqual(["known-finding", "fail", { code: 7 }]);
    expect(() => keepFixtures(dir, j, ["nope"], out)).toThrow(/has no scenario nope; it ran s/);
  });

  it("a row with no history, or a scenario the suite no longer has, is kept as recorded and said", () => {
    const { dir, run } = storedRun(h, scenario());
    expect(judgeRun(dir, run.record, [], []).rows[0]).toMatchObject({ rejudged: false, reason: "no scenario of that name in today's suite: kept as recorded" });
    fs.rmSync(path.join(dir, "scenarios/s", HISTORY_FILE));
    const j = judgeRun(dir, run.record, [scenario()], []);
    expect(j.rows[0]).toMatchObject({ rejudged: false, changed: false });
    expect(changesText(j)).toMatch(/^no verdict changed: 0 scenario\(s\) judged again read as the run read them\ns: not judged again: no history.json in its evidence folder/);
    fs.writeFileSync(path.join(dir, "scenarios/s", HISTORY_FILE), "{");
    expect(readHistory(path.join(dir, "scenarios/s", HISTORY_FILE))).toMatch(/could not be read/);
  });
});
