// `--json`: what each command prints is one document of the schema in lab/commands/json.ts, built
// by a pure function of what the command stored. Here each is built from real stored runs
// (fixtures/runs/: run.json and each scenario's verdict.json of runs on openclaw@2026.9.6) and
// parsed against the schema, so these tests cover exactly what `fleetlab run --json`,
// `report --json`, `repro --json`, `matrix --json`, `soak --json`, `merge --json` and `bisect --json` print
// (the commands call these builders on the records they just wrote).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { readRunRecord, type RunRecord } from "../evidence/run.ts";
import { mergeRuns } from "../evidence/merge.ts";
import { exitCodeOf } from "../definitions/verdict.ts";
import type { ScenarioResult } from "../run/runner.ts";
import { BisectDocument, JsonDocument, MatrixDocument, ReproDocument, RunDocument, SCHEMA_VERSION, SoakDocument, jsonText, listDocument, mergeDocument, runDocument } from "./json.ts";
import { cellOf, matrixDocument, matrixExitCode, type MatrixRecord } from "./matrix.ts";
import { roundFromRunDir, soakDocument, soakExitCode, soakTable, type SoakRecord } from "./soak.ts";
import { attemptName, bugChecks, classify, reproDocument, tally, type Attempt } from "./repro.ts";
import { bisect, bisectDocument, type BisectRecord } from "./bisect.ts";

const RUNS = path.join(ROOT, "fixtures", "runs");
const SMOKE = "20261203-080420-2186bf82e3d37dab";
const SUITE = ["20261203-080743-1a6a77508bbf4eb8", "20261203-081130-1661a84754823526"];
const NEVER_RAN = "20261203-072500-b7d7453a26bdd606";

const record = (id: string): RunRecord => readRunRecord(path.join(RUNS, id, "run.json"));
/** A scenario's result as the runner handed it to the command (its verdict.json). */
const result = (id: string, name: string): ScenarioResult => JSON.parse(fs.readFileSync(path.join(RUNS, id, "scenarios", name, "verdict.json"), "utf8")) as ScenarioResult;
/** As printed, read back: one line of JSON that parses against the schema. */
const printed = (doc: Parameters<typeof jsonText>[0]) => {
  const text = jsonText(doc);
  expect(text.endsWith("\n")).toBe(true);
  expect(text.trim().split("\n")).toHaveLength(1);
  return JsonDocument.parse(JSON.parse(text));
};

describe("run --json and report --json: the stored run as its verdict table says it", () => {
  it("fleetlab run smoke --json: the README's smoke run (PASS) parses, exit 0 as the run's", () => {
    const doc = RunDocument.parse(printed(runDocument(record(SMOKE), `.lab/runs/${SMOKE}`)));
    expect(doc).toMatchObject({ schemaVersion: SCHEMA_VERSION, command: "run", exitCode: 0 });
    expect(doc.run).toMatchObject({ id: SMOKE, dir: `.lab/runs/${SMOKE}`, openclaw: { version: "2026.9.6" }, problems: [], counts: { total: 1, pass: 1, fail: 0, notRun: 0 } });
    expect(doc.run.scenarios).toEqual([expect.objectContaining({ name: "smoke", verdict: "pass", evidence: "scenarios/smoke" })]);
    expect(doc.run.report).toBe(`.lab/runs/${SMOKE}/report.html`);
  });

  it("a run with a known finding: the finding under its scenario, lab-wide records never judged listed, exit 0 (accepted)", () => {
    const rec = record(SUITE[1]!);
    const doc = RunDocument.parse(printed(runDocument(rec, SUITE[1]!, "report")));
    expect(doc.command).toBe("report");
    expect(doc.exitCode).toBe(exitCodeOf(rec.scenarios.map((s) => s.verdict)));
    expect(doc.exitCode).toBe(0);
    expect(doc.run.counts).toMatchObject({ total: 4, pass: 3, knownFinding: 1 });
    const ack = doc.run.scenarios.find((s) => s.name === "abort-lost-ack")!;
    expect(ack.verdict).toBe("known-finding");
    expect(ack.findings.map((f) => `${f.outcome} ${f.id}`)).toContain("known-finding R-abort-lost-ack-environment-stop");
    expect(doc.run.unexercised.length).toBeGreaterThan(0);
  });

  it("a run folder that never ran: no scenario, a problem said, exit 3 (never a pass)", () => {
    const doc = RunDocument.parse(printed(runDocument(record(NEVER_RAN), NEVER_RAN, "report")));
    expect(doc.exitCode).toBe(3);
    expect(doc.run.scenarios).toEqual([]);
    expect(doc.run.problems.join("\n")).toMatch(/never recorded its end/);
  });
});

describe("matrix --json: the cells of matrix.json", () => {
  /** A matrix as the command keeps it, its column made of a real run's results (cellOf, as matrixCommand does). */
  const matrix = (extra: Partial<MatrixRecord> = {}): MatrixRecord => {
    const run = SUITE[1]!;
    const names = record(run).scenarios.map((s) => s.name);
    const m: MatrixRecord = { id: "matrix-20261203-081130-test", startedAt: "2026-12-03T08:11:30.000Z", endedAt: "2026-12-03T08:40:00.000Z", versions: ["2026.9.6"], scenarios: names, cells: {}, runs: { "2026.9.6": { run, seconds: 1700 } }, ...extra };
    for (const n of names) (m.cells[n] ??= {})["2026.9.6"] = cellOf(result(run, n), run, n === "abort-lost-ack" ? ["R-abort-lost-ack-environment-stop"] : []);
    return m;
  };

  it("fleetlab matrix ... --json: every cell scenario by scenario, each version's run; exit 0 when every cell is accepted", () => {
    const m = matrix();
    const doc = MatrixDocument.parse(printed(matrixDocument(m, ".lab/runs/matrix-x")));
    expect(doc.exitCode).toBe(0);
    expect(doc.exitCode).toBe(matrixExitCode(m));
    expect(doc.cells.map((c) => [c.scenario, c.version, c.verdict])).toEqual(m.scenarios.map((s) => [s, "2026.9.6", m.cells[s]!["2026.9.6"]!.verdict]));
    expect(doc.cells.find((c) => c.scenario === "abort-lost-ack")).toMatchObject({ verdict: "known-finding", bug: { class: "reproduced" }, run: SUITE[1] });
    expect(doc.runs).toEqual([{ version: "2026.9.6", run: SUITE[1], seconds: 1700 }]);
  });

  it("a version that could not run: its error in runs, no cells for it, exit 3", () => {
    const m = matrix({ versions: ["2026.9.5", "2026.9.6"] });
    m.runs["2026.9.5"] = { error: "npm install openclaw@2026.9.5 failed", seconds: 3 };
    const doc = MatrixDocument.parse(printed(matrixDocument(m, "m")));
    expect(doc.exitCode).toBe(3);
    expect(doc.runs[0]).toEqual({ version: "2026.9.5", error: "npm install openclaw@2026.9.5 failed", seconds: 3 });
    expect(doc.cells.every((c) => c.version === "2026.9.6")).toBe(true);
  });
});

describe("soak --json: the rows of the stability table", () => {
  it("two stored rounds of the same four scenarios: a row each, what moved, exit 1 when one moved else the verdicts'", () => {
    const rounds = SUITE.map((id) => roundFromRunDir(path.join(RUNS, id)));
    const rec: SoakRecord = { id: "soak-test", startedAt: "2026-12-03T08:07:43.000Z", endedAt: "2026-12-03T08:40:00.000Z", version: rounds[0]!.version, asked: 2, scenarios: ["pair-and-run", "bundle-reuse", "abort-lost-ack", "smoke"], rounds: rounds.map((r) => r.run), table: soakTable(rounds) };
    const doc = SoakDocument.parse(printed(soakDocument(rec, ".lab/runs/soak-test")));
    expect(doc.version).toBe("2026.9.6");
    expect(doc.rows.map((r) => r.scenario).sort()).toEqual(["abort-lost-ack", "bundle-reuse", "pair-and-run", "smoke"]);
    expect(doc.rows.every((r) => r.rounds === 2)).toBe(true);
    expect(doc.exitCode).toBe(soakExitCode(rec));
    expect(doc.exitCode).toBe(rec.table.some((r) => r.moved) ? 1 : 0);
  });
});

describe("repro --json: the loop's classes and attempts from its run.json", () => {
  it("an attempt made of a stored known finding reads reproduced; exit 0 (the bug showed)", () => {
    // The repro field as reproLoop writes it, for one attempt whose result is the stored abort-lost-ack row.
    const base = record(SUITE[1]!);
    const r = result(SUITE[1]!, "abort-lost-ack");
    const bug = bugChecks({ bug: ["R-abort-lost-ack-environment-stop"] });
    const name = attemptName({ name: "abort-lost-ack" }, 1, 1);
    const c = classify(r.verdict, r.checks, bug);
    const a: Attempt = { index: 1, verdict: r.verdict, class: c.class, why: c.why, seconds: r.seconds, evidence: `scenarios/${name}` };
    const t = tally("abort-lost-ack", 1, [a]);
    const rec: RunRecord = {
      ...base,
      plan: [name],
      scenarios: [{ ...base.scenarios.find((s) => s.name === "abort-lost-ack")!, name, evidence: `scenarios/${name}` }],
      findings: (base.findings ?? []).filter((f) => f.scenario === "abort-lost-ack").map((f) => ({ ...f, scenario: name })),
      repro: { scenario: "abort-lost-ack", asked: 1, until: false, ran: t.ran, reproduced: t.reproduced, differs: t.differs, newSignature: t.newSignature, failedOtherwise: t.failedOtherwise, notReproduced: t.notReproduced, unknown: t.unknown, hits: t.hits, attempts: [{ index: 1, verdict: a.verdict, class: a.class, ...(a.why ? { why: a.why } : {}) }] },
    };
    const doc = ReproDocument.parse(printed(reproDocument(rec, "r")));
    expect(doc.exitCode).toBe(0);
    expect(doc.repro.classes).toMatchObject({ reproduced: 1, "not reproduced": 0, "could not tell": 0 });
    expect(doc.repro.attempts).toEqual([expect.objectContaining({ index: 1, name, class: "reproduced", evidence: `scenarios/${name}`, seconds: r.seconds })]);
    expect(doc.run.scenarios[0]!.findings.length).toBeGreaterThan(0);
  });
});

describe("bisect --json: bisect.json's steps and answer", () => {
  it("a search whose every step is a stored run's verdict: each step, the answer, exit 0 found / 3 while none", async () => {
    // GOOD reads as the stored abort-lost-ack (known finding); the versions after it as the stored smoke (pass).
    const ack = result(SUITE[1]!, "abort-lost-ack");
    const smoke = result(SMOKE, "smoke");
    const versions = ["2026.9.4", "2026.9.5", "2026.9.6"];
    const runStep = async (v: string) => {
      const r = v === "2026.9.4" ? ack : smoke;
      return { attempts: [{ verdict: r.verdict, evidence: r.evidence }], run: v === "2026.9.4" ? SUITE[1] : SMOKE };
    };
    const rec: BisectRecord = { id: "bisect-test", startedAt: "2026-12-03T09:00:00.000Z", scenario: "abort-lost-ack", good: "2026.9.4", bad: "2026.9.6", n: 1, pre: false, seed: 7, versions, steps: [] };
    expect(BisectDocument.parse(printed(bisectDocument(rec, "b"))).exitCode).toBe(3); // no answer yet
    const found = await bisect(versions, runStep, (step) => rec.steps.push(step));
    rec.answer = found.answer;
    rec.endedAt = "2026-12-03T09:10:00.000Z";
    const doc = BisectDocument.parse(printed(bisectDocument(rec, ".lab/runs/bisect-test")));
    expect(doc.exitCode).toBe(0);
    expect(doc.answer).toEqual({ result: "found", good: "2026.9.4", goodReads: "known-finding", first: "2026.9.5", firstReads: "pass", lastGood: "2026.9.4" });
    expect(doc.steps.map((x) => [x.version, x.reads, x.run])).toEqual(rec.steps.map((x) => [x.version, x.reads, x.run]));
  });
});

describe("list --json and merge --json", () => {
  it("list: each scenario's name, lab and what it proves", () => {
    const doc = printed(listDocument([{ name: "smoke", topology: "shared", proves: "a turn answers" }]));
    expect(doc).toEqual({ schemaVersion: SCHEMA_VERSION, command: "list", exitCode: 0, scenarios: [{ name: "smoke", topology: "shared", proves: "a turn answers" }] });
  });

  it("merge: each version's merged run with its shards; a run folder that never ran makes it 3", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-json-merge-"));
    try {
      const m = mergeRuns(out, [path.join(RUNS, SMOKE)]);
      const doc = printed(mergeDocument(m));
      expect(doc).toMatchObject({ command: "merge", exitCode: 0, versions: [{ version: "2026.9.6", run: { counts: { pass: 1 } } }] });
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("the schema is held to", () => {
  it("a document that does not match it is never printed: the field is named", () => {
    const doc = runDocument(record(SMOKE), "d");
    (doc.run as { seed: unknown }).seed = "7";
    expect(() => jsonText(doc)).toThrow(/run document does not match its schema: run\.seed/);
  });

  it("docs/reference/json.md describes every field of every document, and the schema version", () => {
    const text = fs.readFileSync(path.join(ROOT, "docs", "reference", "json.md"), "utf8");
    expect(text).toContain(`"schemaVersion": ${SCHEMA_VERSION}`);
    const fields = new Set<string>();
    const walk = (shape: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(shape)) {
        fields.add(k);
        let t = v as { def?: { type?: string; innerType?: unknown; element?: unknown; shape?: Record<string, unknown> }; shape?: Record<string, unknown> };
        while (t?.def?.innerType) t = t.def.innerType as typeof t;
        if (t?.def?.type === "array") t = t.def.element as typeof t;
        if (t?.shape) walk(t.shape);
      }
    };
    for (const d of [JsonDocument.options].flat()) walk(d.shape as Record<string, unknown>);
    expect([...fields]).toEqual(expect.arrayContaining(["runsByVerdict", "classes", "notAffected", "neverRan", "counts", "knownFinding"])); // the walk reaches nested objects
    const missing = [...fields].filter((f) => !text.includes(`\`${f}\``));
    expect(missing).toEqual([]);
  });
});
