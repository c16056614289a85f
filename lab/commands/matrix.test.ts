import { describe, expect, it } from "vitest";
import { cellText, matrixTable, releases, resolveVersions } from "./matrix.ts";
import type { CheckResult } from "../findings/findings.ts";

const published = ["2026.8.1-beta.1", "2026.8.1", "2026.8.2", "2026.9.1-beta.1", "2026.9.1", "2026.9.4", "2026.9.5", "2026.9.6"];

describe("VERSIONS", () => {
  it("exact versions, newest and lastN resolve against what npm publishes (releases only, oldest first)", () => {
    expect(releases(published)).toEqual(["2026.8.1", "2026.8.2", "2026.9.1", "2026.9.4", "2026.9.5", "2026.9.6"]);
    expect(resolveVersions("2026.9.4 2026.9.6", published)).toEqual(["2026.9.4", "2026.9.6"]);
    expect(resolveVersions("newest", published)).toEqual(["2026.9.6"]);
    expect(resolveVersions("last3", published)).toEqual(["2026.9.4", "2026.9.5", "2026.9.6"]);
    expect(resolveVersions("2026.9.6, newest", published)).toEqual(["2026.9.6"]);
  });

  it("bad input names what is wrong", () => {
    expect(() => resolveVersions("", published)).toThrow(/VERSIONS is empty/);
    expect(() => resolveVersions("2026.9.7", published)).toThrow("VERSIONS: openclaw@2026.9.7 is not published. Recent versions: 2026.8.2, 2026.9.1, 2026.9.4, 2026.9.5, 2026.9.6.");
    expect(() => resolveVersions("latest", published)).toThrow(/'latest' is not an exact version, newest, lastN or a package's path/);
    expect(() => resolveVersions("last3", undefined)).toThrow(/needs the list of published versions/);
    expect(() => resolveVersions("last0", published)).toThrow(/at least 1/);
    // Offline with exact versions: taken as given (the image build says if one does not exist).
    expect(resolveVersions("2026.9.4", undefined)).toEqual(["2026.9.4"]);
  });
});

describe("the scenario x version table", () => {
  it("one row per scenario, one column per version, and why each cell is not a pass", () => {
    const cell = (verdict: string, findings: string[] = [], detail?: string) => ({ verdict, seconds: 1, findings, run: "r", detail });
    const t = matrixTable({
      versions: ["2026.9.4", "2026.9.6"],
      scenarios: ["capacity", "repro-116363"],
      cells: {
        capacity: { "2026.9.4": cell("known-finding", ["known-finding F-cap"]), "2026.9.6": cell("fixed?", ["fixed? F-cap"]) },
        "repro-116363": { "2026.9.4": cell("n/a", [], "openclaw@2026.9.4: the gateway does not offer the method x") },
      },
    });
    expect(t.split("\n").slice(0, 4)).toEqual([
      "scenario      2026.9.4   2026.9.6 ",
      "------------  ---------  ---------",
      "capacity      known      fixed?   ",
      "repro-116363  n/a        -        ",
    ]);
    expect(t).toContain("  capacity @ 2026.9.6: fixed?: fixed? F-cap");
    expect(t).toContain("  repro-116363 @ 2026.9.4: n/a: openclaw@2026.9.4: the gateway does not offer the method x");
  });
});

describe("a repro's cell says what it showed of the bug", () => {
  it("a fail of another check is 'failed otherwise' in matrix.json, never a reproduction", async () => {
    const { cellOf } = await import("./matrix.ts");
    const r = {
      name: "repro-x",
      verdict: "fail" as const,
      seconds: 1,
      evidence: "scenarios/repro-x",
      startedAt: "",
      endedAt: "",
      checks: [
        { findingId: "R-x", scenario: "repro-x", expectation: "e", outcome: "known-finding" as const, kind: "shortfall" as const },
        { findingId: "E-premise", scenario: "repro-x", expectation: "e", outcome: "fail" as const, kind: "shortfall" as const, note: "the fault never acted" },
      ],
    };
    expect(cellOf(r, "run", ["R-x"]).bug).toEqual({ class: "failed otherwise", why: "E-premise: the fault never acted" });
    expect(cellOf({ ...r, verdict: "known-finding", checks: [r.checks[0]!] }, "run", ["R-x"]).bug).toEqual({ class: "reproduced", why: "R-x" });
    expect(cellOf(r, "run").bug).toBeUndefined();
  });

  it("a repro with no bug list and no registered finding is classed by its own checks; a contract scenario is not classed", async () => {
    const { cellBugChecks, cellOf } = await import("./matrix.ts");
    const check = (findingId: string, outcome: "pass" | "fail", more: Partial<CheckResult> = {}): CheckResult => ({ findingId, scenario: "repro-y", expectation: "e", outcome, kind: "shortfall", ...more });
    const held = { name: "repro-y", verdict: "pass" as const, seconds: 1, evidence: "e", startedAt: "", endedAt: "", checks: [check("E-a", "pass"), check("E-b", "pass"), check("P-no-malformed-frame", "pass", { source: "evidence" }), check("F-lab", "pass", { scope: "lab" })] };
    expect(cellBugChecks(held, [], true)).toEqual(["E-a", "E-b"]);
    expect(cellOf(held, "run", cellBugChecks(held, [], true)).bug).toEqual({ class: "not reproduced" });
    const short = { ...held, verdict: "fail" as const, checks: [check("E-a", "pass"), check("E-b", "fail")] };
    expect(cellOf(short, "run", cellBugChecks(short, [], true)).bug?.class).toBe("new signature");
    expect(cellBugChecks(held, [], false)).toEqual([]);
    expect(cellBugChecks(held, ["R-y"], true)).toEqual(["R-y"]);
  });
});

describe("variants and 'not affected' in the matrix", () => {
  const result = (checks: CheckResult[], verdict: "pass" | "known-finding" = "known-finding") => ({ name: "midturn", verdict, seconds: 1, evidence: "e", startedAt: "", endedAt: "", checks });
  const chk = (more: Partial<CheckResult>): CheckResult => ({ findingId: "F-turn", scenario: "midturn", expectation: "e", outcome: "known-finding", kind: "shortfall", ...more });

  it("a cell names the variant that matched, in its findings and in matrix.json's variants", async () => {
    const { cellOf } = await import("./matrix.ts");
    const c = cellOf(result([chk({ variant: ">=2026.9.5" }), chk({ findingId: "F-plain" })]), "run");
    expect(c.findings).toEqual(["known-finding F-turn [variant >=2026.9.5]", "known-finding F-plain"]);
    expect(c.variants).toEqual({ "F-turn": ">=2026.9.5" });
    expect(c.notAffected).toBeUndefined();
  });

  it("a pass whose bug had not come yet reads 'not affected' in the table, with the finding in the notes", async () => {
    const { cellOf, MatrixRecord } = await import("./matrix.ts");
    const na = cellOf(result([chk({ outcome: "pass", notAffected: true })], "pass"), "run");
    expect(na.notAffected).toEqual(["F-turn"]);
    const known = cellOf(result([chk({ variant: ">=2026.9.5" })]), "run");
    const m = { versions: ["2026.9.4", "2026.9.5"], scenarios: ["midturn"], cells: { midturn: { "2026.9.4": na, "2026.9.5": known } } };
    expect(MatrixRecord.parse({ id: "m", startedAt: "", runs: {}, ...m }).cells.midturn!["2026.9.4"]!.notAffected).toEqual(["F-turn"]);
    const t = matrixTable(m);
    expect(t.split("\n").slice(0, 3)).toEqual(["scenario  2026.9.4      2026.9.5    ", "--------  ------------  ------------", "midturn   not affected  known       "]);
    expect(t).toContain("  midturn @ 2026.9.4: not affected: F-turn (older than every version the record names; the check holds)");
    expect(t).toContain("  midturn @ 2026.9.5: known-finding: known-finding F-turn [variant >=2026.9.5]");
  });

  it("a repro whose differs-from-reference record matched reads 'differs', not known: what OpenClaw documents is no reproduction", async () => {
    const { cellOf } = await import("./matrix.ts");
    const c = cellOf(result([chk({ kind: "differs-from-reference" })]), "run", ["F-turn"]);
    expect(c.bug?.class).toBe("differs from reference");
    const t = matrixTable({ versions: ["2026.9.6"], scenarios: ["midturn"], cells: { midturn: { "2026.9.6": c } } });
    expect(t.split("\n")[2]!.trim().split(/\s+/)).toEqual(["midturn", "differs"]);
    // A shortfall record matched is still "known".
    expect(cellText(cellOf(result([chk({})]), "run", ["F-turn"]))).toBe("known");
  });
});
