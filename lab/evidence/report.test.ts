import { describe, expect, it } from "vitest";
import { NOT_RUN, reportRows, runProblems, verdictTable } from "./report.ts";
import type { RunRecord } from "./run.ts";

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
