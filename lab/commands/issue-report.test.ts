import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScenarios } from "../../scenarios/index.ts";
import { LabError } from "../core/log.ts";
import type { MatrixRecord } from "./matrix.ts";
import type { Excerpt } from "../findings/excerpt.ts";
import type { FindingRecord } from "../findings/findings.ts";
import {
  MEASURED,
  REPORTS_DIR,
  closeIds,
  findFinding,
  headerComment,
  issueCommand,
  issueReport,
  measure,
  readExcerpt,
  registeredFindings,
  reportFile,
  versionRows,
  withoutMeasured,
} from "./issue-report.ts";

const scenarios = await loadScenarios();
const all = registeredFindings(scenarios);

let tmp: string;
beforeAll(() => void (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-issue-test-"))));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("the committed bug reports (fixtures/findings/reports/)", () => {
  it("one per registered finding, and none for a finding no longer registered", () => {
    const want = all.map((f) => reportFile(f.record.id)).sort();
    expect(fs.readdirSync(REPORTS_DIR).filter((f) => f.endsWith(".md")).sort()).toEqual(want);
  });

  it("each is current: written again from the record, the scenario file and the excerpt, it reads the same outside the parts measured on a machine (make issue ALL=1)", () => {
    const empty = fs.mkdtempSync(path.join(tmp, "runs-"));
    const stale: string[] = [];
    for (const f of all) {
      const file = path.join(REPORTS_DIR, reportFile(f.record.id));
      if (!fs.existsSync(file)) continue;
      const ex = readExcerpt(f.record.id);
      const again = issueReport(f, ex, measure(f, ex, empty));
      if (withoutMeasured(fs.readFileSync(file, "utf8")) !== withoutMeasured(again)) stale.push(f.record.id);
    }
    expect(stale, "write them again: make issue ALL=1").toEqual([]);
  });

  it("each quotes its excerpt's raw evidence when the excerpt has some", () => {
    for (const f of all) {
      const ex = readExcerpt(f.record.id);
      const text = fs.readFileSync(path.join(REPORTS_DIR, reportFile(f.record.id)), "utf8");
      if (ex?.logs.length) expect(text, f.record.id).toContain(ex.logs[0]!.slice(0, 60));
      expect(text.startsWith("# [Bug]: "), f.record.id).toBe(true);
    }
  });
});

describe("a report follows OpenClaw's bug form", () => {
  const rec: FindingRecord = {
    id: "R-x-refused",
    expectation: "every patch succeeds, however slowly",
    signature: { refused: [{ code: "UNAVAILABLE" }] },
    versions: ["2026.9.6"],
    variants: [{ versions: "2026.9.5", signature: { refused: [] }, note: "nothing refused, but slower" }],
    kind: "shortfall",
    evidence: "fixtures/findings/R-x-refused.json",
  };
  const excerpt: Excerpt = {
    id: rec.id,
    scenario: "repro-155359",
    version: "2026.9.6",
    run: "20261201-000000-abcd",
    outcome: "known-finding",
    expectation: rec.expectation,
    observed: rec.signature,
    scenarioLog: ["2026-12-01T00:00:01Z check R-x-refused: known-finding"],
    logs: ["gateway.stderr.log: 2026-12-01T00:00:00Z database is locked token=supersecretvalue123"],
    frames: [{ file: "operator.jsonl", t: Date.parse("2026-12-01T00:00:00Z"), dir: "in", method: "sessions.patch", carries: ["UNAVAILABLE"], text: '{"ok":false,"error":{"code":"UNAVAILABLE"}}' }],
    needles: ["UNAVAILABLE"],
  };
  const f = { record: rec, scenario: "repro-155359" };

  it("its fields in the form's order, the steps from the scenario's header, the evidence redacted", () => {
    const text = issueReport(f, excerpt);
    const heads = [...text.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
    expect(heads).toEqual(["Bug type", "Summary", "Steps to reproduce", "Expected behavior", "Actual behavior", "OpenClaw version", "Operating system", "Install method", "Logs, screenshots, and evidence", "Impact and severity", "Additional information"]);
    expect(text.split("\n")[0]).toBe("# [Bug]: not met on openclaw@2026.9.6: every patch succeeds, however slowly");
    expect(text).toContain("   > openclaw#155359"); // the header of scenarios/repro/repro-155359.ts
    expect(text).toContain("make repro NAME=repro-155359 N=5 OPENCLAW_VERSION=2026.9.6");
    expect(text).toContain("- 2026.9.5: `{\"refused\":[]}` (nothing refused, but slower)");
    expect(text).toContain('# 2025-12-01T00:00:00.000Z'.replace("2025", "2026"));
    expect(text).toContain("database is locked token=[redacted]");
    expect(text).not.toContain("supersecretvalue123");
  });

  it("a finding seen on a build of one's own is said as the build, with OPENCLAW_PACKAGE in its steps, never as the published version", () => {
    const text = issueReport(f, { ...excerpt, version: "2026.9.6+0123456789" });
    expect(text.split("\n")[0]).toBe("# [Bug]: not met on build openclaw@2026.9.6+0123456789: every patch succeeds, however slowly");
    expect(text).toContain("1. A build of openclaw 2026.9.6 (`2026.9.6+0123456789`: packed from a branch, not the published package)");
    expect(text).toContain("make repro NAME=repro-155359 N=5 OPENCLAW_PACKAGE=<the build's .tgz>");
    expect(text).not.toContain("Real, published");
  });

  it("from this machine's runs: versions affected and not from the newest matrix, k/N from the newest repro loop, a regression's bounds", () => {
    const runs = fs.mkdtempSync(path.join(tmp, "runs-"));
    const cell = (verdict: string, findings: string[], more: Partial<MatrixRecord["cells"][string][string]> = {}) => ({ verdict, seconds: 1, findings, run: "r", ...more });
    const m: MatrixRecord = {
      id: "matrix-20261201-1",
      startedAt: "",
      versions: ["2026.9.4", "2026.9.5", "2026.9.6"],
      scenarios: ["repro-155359"],
      cells: { "repro-155359": { "2026.9.4": cell("pass", [], { notAffected: ["R-x-refused"] }), "2026.9.5": cell("known-finding", ["known-finding R-x-refused [variant 2026.9.5]"], { variants: { "R-x-refused": "2026.9.5" } }), "2026.9.6": cell("known-finding", ["known-finding R-x-refused [variant base]"]) } },
      runs: {},
    };
    fs.mkdirSync(path.join(runs, m.id));
    fs.writeFileSync(path.join(runs, m.id, "matrix.json"), JSON.stringify(m));
    expect(versionRows(m, "repro-155359", "R-x-refused").map((r) => [r.version, r.status, r.detail])).toEqual([
      ["2026.9.4", "not affected", undefined],
      ["2026.9.5", "affected", "variant 2026.9.5"],
      ["2026.9.6", "affected", undefined],
    ]);
    const run = "20261201-120000-abcd";
    fs.mkdirSync(path.join(runs, run));
    fs.writeFileSync(
      path.join(runs, run, "run.json"),
      JSON.stringify({ id: run, startedAt: "", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 8, node: "v24.1.0" }, engine: { version: "28.1.1", apiVersion: "1.49" }, topology: { openclawVersion: "2026.9.6" }, timings: {}, scenarios: [], repro: { scenario: "repro-155359", asked: 10, until: false, ran: 10, reproduced: 7, newSignature: 0, failedOtherwise: 0, notReproduced: 3, unknown: 0, hits: [] } }),
    );
    // A newer premise self-test of the same scenario (--aim-off) is no reproduction loop: skipped.
    const selfTest = "20261201-130000-abcd";
    fs.mkdirSync(path.join(runs, selfTest));
    fs.writeFileSync(
      path.join(runs, selfTest, "run.json"),
      JSON.stringify({ id: selfTest, startedAt: "", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 8, node: "v24.1.0" }, topology: { openclawVersion: "2026.9.6" }, timings: {}, scenarios: [], repro: { scenario: "repro-155359", asked: 1, until: false, aimOff: true, caught: 1, ran: 1, reproduced: 0, newSignature: 0, failedOtherwise: 0, notReproduced: 0, unknown: 1, hits: [] } }),
    );
    const text = issueReport(f, { ...excerpt, run }, measure(f, { ...excerpt, run }, runs));
    expect(text).not.toContain("could not tell 1");
    expect(text).toContain("Regression (worked before, now fails)");
    expect(text).toContain("| 2026.9.5 | affected (variant 2026.9.5) |");
    expect(text).toContain("Affected: 2026.9.5, 2026.9.6. Not affected: 2026.9.4.");
    expect(text).toContain("make repro NAME=repro-155359 N=10 OPENCLAW_VERSION=2026.9.6");
    expect(text).toContain("reproduced 7/10 (registered signature), not reproduced 3");
    expect(text).toContain("Last known good version 2026.9.4, first known bad version 2026.9.5");
    expect(text).toContain("linux-x64, Docker 28.1.1 (API 1.49), Node v24.1.0");
    // What a machine measured is between the markers, and only there.
    expect(withoutMeasured(text)).not.toContain("7/10");
    expect(withoutMeasured(text)).not.toContain(MEASURED);
    expect(withoutMeasured(text)).toBe(withoutMeasured(issueReport(f, { ...excerpt, run }, {})));
  });

  it("the header comment is the first block of two or more // lines, after the imports or not", () => {
    expect(headerComment('import x from "y";\n// a\n//\n// b\nconst z = 1;\n// c\n')).toEqual(["a", "", "b"]);
    expect(headerComment("// one\nimport x;\n")).toEqual([]);
  });
});

describe("fleetlab issue", () => {
  it("an unknown id is refused, naming the close ones; an id is also known by its file name", () => {
    expect(() => findFinding(all, "F-midturn-loss-slot")).toThrow(LabError);
    expect(() => findFinding(all, "F-midturn-loss-slot")).toThrow(/no finding is registered as 'F-midturn-loss-slot'\. Close ones: F-midturn-loss-slot-reserved/);
    expect(findFinding(all, "F-protocol-drift-event-agent-lane").record.id).toBe("F-protocol-drift event agent lane");
    expect(closeIds(["R-155359-patch-beside-slow-write", "F-capacity-turn-fails-while-slots-full"], "155359 patch")).toEqual(["R-155359-patch-beside-slow-write"]);
  });

  it("ID writes and prints one report; --all writes every one; neither, or both, is bad input", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "reports-"));
    const runs = fs.mkdtempSync(path.join(tmp, "runs-"));
    let out = "";
    expect(issueCommand(["R-155359-patch-beside-slow-write"], false, scenarios, (t) => void (out += t), { dir, runs })).toBe(0);
    expect(out).toMatch(/^# \[Bug\]: not met on openclaw@2026\.9\.6: every sessions\.patch/);
    expect(fs.readdirSync(dir)).toEqual(["R-155359-patch-beside-slow-write.md"]);
    out = "";
    issueCommand([], true, scenarios, (t) => void (out += t), { dir, runs });
    expect(fs.readdirSync(dir)).toHaveLength(all.length);
    expect(out).toContain(`${all.length} report(s) in`);
    expect(() => issueCommand([], false, scenarios, () => {})).toThrow(/issue needs one finding id or --all/);
    expect(() => issueCommand(["x"], true, scenarios, () => {})).toThrow(/issue needs one finding id or --all/);
  });
});
