import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Run } from "../evidence/run.ts";
import { roundFromRunDir, signatureOf, soakMarkdown, soakTable, stableJson, writeSoak, type SoakInput, type SoakRound } from "./soak.ts";

let root: string;
beforeAll(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-soak-test-"))));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const result = (name: string, verdict: string, seconds: number, checks: SoakInput["checks"]): SoakInput => ({ name, verdict, seconds, checks });
const approval = (status: string | null) => ({ findingId: "R-restart", outcome: "known-finding" as const, observed: { approval: { status, reason: status ? "gateway-restart" : null }, listedPending: false } });

describe("the stability table", () => {
  const rounds: SoakRound[] = [1, 2, 3, 4, 5].map((k) => ({
    run: `run-${k}`,
    results: [
      result("smoke", "pass", 10 + k, [{ findingId: "R-smoke", outcome: "pass" }]),
      // the mcp-approval-restart case: round 4 read status null, the verdict turned fail
      result("restart", k === 4 ? "fail" : "known-finding", 100 + k, [k === 4 ? { ...approval(null), outcome: "fail" } : approval("cancelled")]),
    ],
  }));

  it("a scenario that read the same every round did not move; one whose verdict and signature changed did, with each signature counted", () => {
    const rows = soakTable(rounds);
    const smoke = rows.find((r) => r.scenario === "smoke")!;
    expect(smoke).toMatchObject({ rounds: 5, verdicts: { pass: 5 }, moved: false, seconds: { min: 11, median: 13, max: 15 } });
    expect(smoke.checks).toEqual([{ id: "R-smoke", signatures: [{ signature: "holds", count: 5 }] }]);
    const restart = rows.find((r) => r.scenario === "restart")!;
    expect(restart.moved).toBe(true);
    expect(restart.verdicts).toEqual({ "known-finding": 4, fail: 1 });
    expect(restart.runsByVerdict.fail).toEqual(["run-4"]);
    expect(restart.checks[0]!.signatures).toEqual([
      { signature: 'known-finding: {"approval":{"reason":"gateway-restart","status":"cancelled"},"listedPending":false}', count: 4 },
      { signature: 'fail: {"approval":{"reason":null,"status":null},"listedPending":false}', count: 1 },
    ]);
  });

  it("a check judged in some rounds only moved ('not judged' is a reading); a signature's key order does not", () => {
    const rows = soakTable([
      { run: "a", results: [result("x", "pass", 1, [{ findingId: "C", outcome: "known-finding", observed: { a: 1, b: 2 } }])] },
      { run: "b", results: [result("x", "pass", 1, [{ findingId: "C", outcome: "known-finding", observed: { b: 2, a: 1 } }])] },
    ]);
    expect(rows[0]!.moved).toBe(false);
    const partial = soakTable([
      { run: "a", results: [result("y", "unknown", 1, [])] },
      { run: "b", results: [result("y", "unknown", 1, [{ findingId: "C", outcome: "pass" }])] },
    ]);
    expect(partial[0]!.checks[0]!.signatures).toEqual([
      { signature: "not judged", count: 1 },
      { signature: "holds", count: 1 },
    ]);
    expect(partial[0]!.moved).toBe(true);
  });

  it("a lab-wide check known one round and held the next moved with both readings ('holds', not 'not judged')", () => {
    const rows = soakTable([
      { run: "a", results: [result("x", "pass", 1, [{ findingId: "F-drift", outcome: "known-finding", observed: { path: "p" }, scope: "lab" }])] },
      { run: "b", results: [result("x", "pass", 1, [{ findingId: "F-drift", outcome: "pass", scope: "lab" }])] },
    ]);
    expect(rows[0]!.checks[0]!.signatures.map((x) => x.signature).sort()).toEqual(['holds', 'known-finding: {"path":"p"}']);
  });

  it("a lab-wide record absent from a round (its field not sent in that window) is no reading: not moved", () => {
    const drift = { findingId: "F-protocol-drift res connect x", outcome: "known-finding" as const, observed: { path: "x" }, scope: "lab" as const };
    const rows = soakTable([
      { run: "a", results: [result("gateway-restart", "pass", 1, [drift])] },
      { run: "b", results: [result("gateway-restart", "pass", 1, [])] },
    ]);
    expect(rows[0]!.checks[0]!.signatures).toEqual([{ signature: 'known-finding: {"path":"x"}', count: 1 }]);
    expect(rows[0]!.moved).toBe(false);
  });

  it("over shards the header says how many rounds a scenario had, not the run folders", () => {
    const shards: SoakRound[] = [1, 2].flatMap((k) => [{ run: `s1-r${k}`, results: [result("a", "pass", 1, [])] }, { run: `s2-r${k}`, results: [result("b", "pass", 1, [])] }]);
    expect(soakMarkdown(soakTable(shards), { rounds: shards.map((r) => r.run), version: "v" }).split("\n")[0]).toBe("# Stability: openclaw@v, 2 round(s) per scenario at most, from 4 run folder(s)");
  });

  it("repro attempts (name~03) count as their scenario; a lab-wide check counts only when it did not pass", () => {
    const rows = soakTable([{ run: "r", results: [result("x~1", "pass", 1, [{ findingId: "P-no-malformed-frame", outcome: "pass", scope: "lab" }]), result("x~2", "pass", 2, [])] }]);
    expect(rows.map((r) => [r.scenario, r.rounds, r.checks.length])).toEqual([["x", 2, 0]]);
  });

  it("the markdown puts the moved scenarios first and lists their signatures", () => {
    const md = soakMarkdown(soakTable(rounds), { rounds: rounds.map((r) => r.run), version: "2026.9.6" });
    const lines = md.split("\n");
    expect(lines[0]).toBe("# Stability: openclaw@2026.9.6, 5 round(s)");
    expect(md).toContain("**1 moved** (verdict or a check's signature took more than one value): restart");
    const firstRow = lines.find((l) => l.startsWith("| `"));
    expect(firstRow).toBe("| `restart` | 5 | known-finding 4, fail 1 | **moved** | 101 / 103 / 105 |");
    expect(md).toContain('  - 1x `fail: {"approval":{"reason":null,"status":null},"listedPending":false}`');
  });

  it("signatures: a held check reads holds; a variant is named", () => {
    expect(signatureOf({ findingId: "C", outcome: "pass" })).toBe("holds");
    expect(signatureOf({ findingId: "C", outcome: "fixed?" })).toBe("holds (fixed?)");
    expect(signatureOf({ findingId: "C", outcome: "known-finding", variant: ">=2026.9.5", observed: 1 })).toBe("known-finding [variant >=2026.9.5]: 1");
    expect(stableJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
});

describe("rounds read from run folders (soak --from)", () => {
  it("run.json's scenarios and each verdict.json's checks; soak.json, soak.md and soak.html written", () => {
    const run = Run.create({ root, seed: 1 });
    run.update((r) => {
      r.topology = { openclawVersion: "2026.9.6" };
      r.scenarios.push({ name: "smoke", verdict: "pass", seconds: 12, evidence: "scenarios/smoke" });
    });
    fs.mkdirSync(path.join(run.dir, "scenarios", "smoke"), { recursive: true });
    fs.writeFileSync(path.join(run.dir, "scenarios", "smoke", "verdict.json"), JSON.stringify({ checks: [{ findingId: "R-smoke", outcome: "pass" }] }));
    const round = roundFromRunDir(run.dir);
    expect(round).toEqual({ run: run.id, version: "2026.9.6", results: [{ name: "smoke", verdict: "pass", seconds: 12, checks: [{ findingId: "R-smoke", outcome: "pass" }] }] });
    const dir = path.join(root, "soak-x");
    writeSoak(dir, { id: "soak-x", startedAt: "t", version: "2026.9.6", asked: 1, scenarios: ["smoke"], rounds: [run.id], table: soakTable([round]) });
    expect(fs.readdirSync(dir).sort()).toEqual(["soak.html", "soak.json", "soak.md"]);
    expect(fs.readFileSync(path.join(dir, "soak.html"), "utf8")).toContain("<td>smoke</td><td>1</td><td>pass 1</td><td>-</td>");
  });
});
