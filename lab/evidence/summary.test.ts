import { describe, expect, it } from "vitest";
import type { RunRecord } from "./run.ts";
import { summaryMarkdown } from "./summary.ts";

const record = (over: Partial<RunRecord>): RunRecord => ({ id: "m", startedAt: "2026-11-30T00:00:00.000Z", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 24, node: "v24" }, timings: {}, scenarios: [], ...over });
const check = (over: Partial<NonNullable<RunRecord["findings"]>[number]>) => ({ findingId: "F-a", scenario: "a", expectation: "it works", outcome: "pass" as const, kind: "shortfall" as const, ...over });

describe("summary.md (the CI job summary)", () => {
  const pinned = record({
    plan: ["a", "b", "c"],
    scenarios: [
      { name: "a", verdict: "known-finding", seconds: 12.34 },
      { name: "b", verdict: "fixed?", seconds: 3 },
      { name: "c", verdict: "fail", seconds: 4, detail: "R-x: a | b\nsecond line" },
    ],
    findings: [
      check({ outcome: "known-finding", observed: 1 }),
      check({ findingId: "F-b", scenario: "b", outcome: "fixed?", registered: { n: 2 }, note: "registered finding F-b did not reproduce on 2026.9.6" }),
      check({ findingId: "R-x", scenario: "c", outcome: "fail", observed: "```", note: "expectation not met and no finding is registered as R-x" }),
    ],
    shards: [{ index: 1, total: 1, status: "complete", runId: "r1", seed: 7, planned: ["a", "b", "c"], neverRan: [], seconds: 300 }],
  });
  const newest = record({
    plan: ["a", "b", "c"],
    scenarios: [{ name: "a", verdict: "fail", seconds: 1 }, { name: "b", verdict: "pass", seconds: 1 }],
    findings: [check({ outcome: "fail", observed: { s: "new" }, registered: { s: "old" }, note: "expectation not met, and the observed signature differs from registered finding F-a" })],
    shards: [{ index: 1, total: 1, status: "cut", runId: "r2", seed: 8, planned: ["a", "b", "c"], neverRan: ["c"] }],
  });
  const md = summaryMarkdown([{ version: "2026.9.6", record: pinned }, { version: "2026.10.1", record: newest }]);

  it("puts what needs attention first: changed signatures, fixed?, cut shards", () => {
    const attention = md.indexOf("### Needs attention");
    expect(attention).toBeGreaterThan(0);
    expect(attention).toBeLessThan(md.indexOf("### Version matrix"));
    const top = md.slice(attention, md.indexOf("### Version matrix"));
    expect(top).toContain("#### Known finding, changed signature (1)\n");
    expect(top).toContain("`F-a` in `a` on openclaw@2026.10.1");
    expect(top).toMatch(/registered: \{"s":"old"\}\n\s+observed:   \{"s":"new"\}/);
    expect(top).toContain("#### Fixed? (1)");
    expect(top).toContain("`F-b` in `b` on openclaw@2026.9.6");
    expect(top).toContain("openclaw@2026.10.1 shard 1/1 cut (run r2); never ran: `c`");
    // A plain new failure (no registered finding) is in the tables, not under changed signatures.
    expect(top).not.toContain("R-x");
  });

  it("has the scenario x version matrix", () => {
    expect(md).toContain("| scenario | openclaw@2026.9.6 | openclaw@2026.10.1 |\n|---|---|---|");
    expect(md).toContain("| `a` | KNOWN-FINDING | FAIL (signature changed) |");
    expect(md).toContain("| `c` | FAIL | NOT RUN (shard 1/1 cut) |");
  });

  it("keeps table cells on one line with pipes escaped, and says how to reproduce each shard", () => {
    expect(md).toContain("| `c` | FAIL | 4.0 s | 1/1 | R-x: a \\| b |");
    expect(md).toContain("`make lab SHARD=1/1 SEED=7 OPENCLAW_VERSION=2026.9.6`");
  });

  it("has no attention section when nothing needs it", () => {
    const quiet = summaryMarkdown([{ version: "2026.9.6", record: record({ plan: ["a"], scenarios: [{ name: "a", verdict: "pass", seconds: 1 }] }) }]);
    expect(quiet).not.toContain("Needs attention");
    expect(quiet).toContain("1 scenario(s): 1 pass, 0 fail, 0 unknown, 0 known finding, 0 fixed?, 0 not run");
  });
});
