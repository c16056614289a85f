import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NOT_RUN, findRun, notAcceptedLines, reportRows, runDir, runExitCode, runProblems, verdictTable } from "./report.ts";
import { LATEST, Run, checkGivenRunId, linkLatest, type RunRecord } from "./run.ts";

const cut: RunRecord = {
  id: "r1",
  startedAt: "2026-11-30T06:00:00.000Z",
  seed: 7,
  host: { platform: "linux-x64", cpus: 2, memGiB: 24, node: "v24" },
  timings: {},
  plan: ["pair", "capacity", "smoke"],
  scenarios: [
    { name: "pair", verdict: "pass", seconds: 12.5 },
    { name: "capacity", verdict: "known-finding", seconds: 80 },
  ],
};

describe("report of a run", () => {
  it("a cut run's planned scenarios that never ran are rows of their own, marked not run", () => {
    expect(reportRows(cut).map((r) => [r.name, r.verdict])).toEqual([
      ["pair", "pass"],
      ["capacity", "known-finding"],
      ["smoke", NOT_RUN],
    ]);
    const table = verdictTable(reportRows(cut));
    expect(table).toMatch(/^smoke\s+NOT RUN\s+-\s+the run was cut before this scenario$/m);
    expect(table).toContain("3 scenario(s): 1 pass, 0 fail, 0 unknown, 1 known finding, 1 not run");
  });

  it("says what makes run.json partial; a finished run has nothing to say", () => {
    expect(runProblems(cut)).toEqual(["partial: the run never recorded its end (cut, killed, or still running)", "not run: smoke (the run was cut before them)"]);
    expect(runProblems({ ...cut, plan: undefined, endedAt: "x" })).toEqual(["partial: the run recorded no plan, so scenarios it never reached cannot be named"]);
    expect(runProblems({ ...cut, plan: ["pair", "capacity"], endedAt: "x" })).toEqual([]);
  });
});

describe("the not-accepted lines (a failed suite's last lines in a CI log)", () => {
  it("name each scenario not accepted with its whole detail, its attempts and the checks that decided it; accepted ones and passing checks are not said", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-na-"));
    try {
      fs.mkdirSync(path.join(dir, "scenarios/gateway-restart"), { recursive: true });
      const checks = [
        { findingId: "R-gateway-restart-pairing", outcome: "pass" },
        { findingId: "R-gateway-restart-turns", outcome: "fail", observed: { nodes: 2, completed: 1 } },
        { findingId: "R-gateway-restart-bundles", outcome: "known-finding", observed: { nodes: 2 } },
      ];
      fs.writeFileSync(path.join(dir, "scenarios/gateway-restart/findings.json"), JSON.stringify(checks));
      const long = `R-gateway-restart-turns: expectation not met ${"x".repeat(200)}`;
      const record: RunRecord = {
        ...cut,
        scenarios: [
          { name: "pair", verdict: "pass", seconds: 12.5 },
          { name: "gateway-restart", verdict: "fail", seconds: 81.3, detail: long, evidence: "scenarios/gateway-restart" },
          { name: "capacity", verdict: "unknown", seconds: 9, detail: "attempt 2 of 2", attempts: [{ verdict: "unknown", seconds: 4, detail: "the machine was busy" }] },
        ],
      };
      expect(notAcceptedLines(record, dir)).toEqual([
        `NOT ACCEPTED gateway-restart: FAIL after 81.3 s: ${long}`,
        '  check R-gateway-restart-turns: fail; observed {"nodes":2,"completed":1}',
        `  evidence: ${path.join(dir, "scenarios/gateway-restart")}`,
        "NOT ACCEPTED capacity: UNKNOWN after 9.0 s: attempt 2 of 2",
        "  attempt: unknown after 4.0 s: the machine was busy",
        "NOT ACCEPTED smoke: NOT RUN: the run was cut before this scenario",
      ]);
      expect(notAcceptedLines({ ...record, scenarios: [record.scenarios[0]!], plan: ["pair"] }, dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the exit code a stored run reads as (fleetlab report, and run at its end)", () => {
  const ended = { ...cut, endedAt: "2026-11-30T06:05:00.000Z" };
  it("1 a fail; 3 an unknown or a planned scenario never run; 0 every verdict accepted", () => {
    expect(runExitCode({ ...ended, plan: ["pair", "capacity"] })).toBe(0);
    expect(runExitCode(ended)).toBe(3); // smoke never ran
    expect(runExitCode({ ...ended, scenarios: [...cut.scenarios, { name: "smoke", verdict: "fail", seconds: 1 }] })).toBe(1);
    expect(runExitCode({ ...ended, plan: ["pair"], scenarios: [{ name: "pair", verdict: "unknown", seconds: 1 }] })).toBe(3);
  });

  it("a run folder that never ran (no plan, no scenario) is 3, never a pass; a run that planned nothing and ended is 0", () => {
    const never: RunRecord = { id: "r0", startedAt: "2026-12-03T07:25:00.932Z", seed: 1, host: cut.host, timings: {}, scenarios: [] };
    expect(runExitCode(never)).toBe(3);
    expect(runExitCode({ ...never, endedAt: "x" })).toBe(3);
    expect(runExitCode({ ...never, plan: [], endedAt: "x" })).toBe(0); // a shard with no scenario
    // No plan recorded and no end: what never ran cannot be named.
    expect(runExitCode({ ...cut, plan: undefined })).toBe(3);
    expect(runExitCode({ ...cut, plan: undefined, endedAt: "x" })).toBe(0);
  });
});

describe("latest: the link to the newest run folder", () => {
  it("Run.create points <runs>/latest at the folder it made, by a relative link; findRun and runDir take latest", () => {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-latest-"));
    try {
      const a = Run.create({ root: runs, seed: 1 });
      expect(fs.readlinkSync(path.join(runs, LATEST))).toBe(a.id);
      const b = Run.create({ root: runs, seed: 2, id: "zz-second" });
      expect(fs.readlinkSync(path.join(runs, LATEST))).toBe("zz-second");
      expect(runDir(LATEST, runs)).toBe(b.dir);
      expect(findRun(LATEST, runs).record.seed).toBe(2);
      // The newest by name, the link left out; no temporary link left behind.
      expect(findRun(undefined, runs).record.id).toBe("zz-second");
      expect(fs.readdirSync(runs).sort()).toEqual([a.id, LATEST, "zz-second"].sort());
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });

  it("replaces the link atomically (a temporary link renamed over it) and a run id may not be latest", () => {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-latest-"));
    try {
      fs.mkdirSync(path.join(runs, "one"));
      linkLatest(runs, "one");
      linkLatest(runs, "two");
      expect(fs.readlinkSync(path.join(runs, LATEST))).toBe("two");
      expect(fs.readdirSync(runs).filter((f) => f.includes("tmp"))).toEqual([]);
      expect(() => checkGivenRunId(LATEST, runs)).toThrow(/FLEETLAB_RUN_ID=latest: that name is the link to the newest run/);
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });

  it("no run yet: latest is refused naming the fix", () => {
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-latest-"));
    try {
      expect(() => findRun(LATEST, runs)).toThrow(/latest: no run yet .*run 'make lab' first/);
    } finally {
      fs.rmSync(runs, { recursive: true, force: true });
    }
  });
});
