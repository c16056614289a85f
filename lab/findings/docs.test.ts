// The docs' findings are the records': the README's list and findings.md's table, as committed,
// are what `make findings-docs` writes from the finding records now; and every finding or check
// id the docs name exists in the code.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { recordsOfScenarios, writtenFindingsDocs } from "../../scenarios/findings-docs.ts";
import { labFindings } from "../checks/findings.ts";
import { ROOT } from "../core/paths.ts";
import { findingsTable, generatedParts, readmeList, REFRESH, upstreamOf, writeParts } from "./docs.ts";
import type { FindingRecord } from "./findings.ts";

const rec = (id: string, over: Partial<FindingRecord> = {}): FindingRecord => ({
  id,
  expectation: "the turn ends | in time",
  signature: { within_s: 45, error: "run `openclaw logs`" },
  versions: ["2026.9.6"],
  kind: "shortfall",
  evidence: `fixtures/findings/${id}.json`,
  ...over,
});

describe("the generated parts", () => {
  it("are written between their markers, the rest of the file left as it is", () => {
    const text = "# t\n\nbefore\n<!-- generated: findings (make findings-docs) -->\nold\nlines\n<!-- /generated -->\nafter\n";
    const out = writeParts(text, { findings: "- new" }, "README.md");
    expect(out).toBe("# t\n\nbefore\n<!-- generated: findings (make findings-docs) -->\n- new\n<!-- /generated -->\nafter\n");
    expect(generatedParts(out).get("findings")).toBe("- new");
    expect(() => writeParts("# no markers\n", { findings: "x" }, "README.md")).toThrow("README.md: no <!-- generated: findings --> ... <!-- /generated --> markers to write between");
  });

  it("name the upstream report a repro's line starts or ends with", () => {
    expect(upstreamOf("openclaw#155333: dispatch does not abort")).toEqual(["openclaw#155333", "dispatch does not abort"]);
    expect(upstreamOf("a node connects again (openclaw/openclaw#82590)")).toEqual(["openclaw#82590", "a node connects again"]);
    expect(upstreamOf("qa-lab parity: a turn ends")).toEqual([undefined, "qa-lab parity: a turn ends"]);
  });

  it("list one line per scenario with records (repros first) and the lab-wide records in one; a row per record with its versions, variants and excerpt", () => {
    const scenarios = [
      { scenario: "midturn-node-loss", proves: "a node lost mid-turn fails the turn", findings: [rec("F-a", { versions: ["2026.9.5", "2026.9.6"], variants: [{ versions: ">=2026.9.4 <2026.9.6", signature: 1, note: "ends once back" }] }), rec("F-b")] },
      { scenario: "smoke", proves: "all up", findings: [] },
      { scenario: "repro-1", proves: "openclaw#1: it works", findings: [rec("R-1", { kind: "differs-from-reference" })] },
    ];
    const drift = [rec("F-protocol-drift event agent lane", { signature: { frame: "event agent", path: "lane" }, kind: "differs-from-reference" })];
    expect(readmeList(scenarios, drift).split("\n")).toEqual([
      "- `repro-1` (openclaw#1; 2026.9.6), 1 difference from the reference. Expected: it works",
      "- `midturn-node-loss` (2026.9.4, 2026.9.5, 2026.9.6), 2 shortfalls. Expected: a node lost mid-turn fails the turn",
      "- Protocol drift in every scenario's frames (2026.9.6), 1 difference from the reference: fields OpenClaw's published protocol schema forbids, `event agent lane`",
    ]);
    const table = findingsTable(scenarios, drift, (id) => (id === "F-a" ? { scenario: "midturn-node-loss", version: "2026.9.6" } as never : undefined)).split("\n");
    expect(table[2]).toBe(
      "| `F-a` | `midturn-node-loss` | shortfall | 2026.9.5, 2026.9.6; variant `>=2026.9.4 <2026.9.6`: ends once back | the turn ends \\| in time | `` {\"within_s\":45,\"error\":\"run `openclaw logs`\"} `` | [excerpt](../../fixtures/findings/F-a.json) (2026.9.6) |",
    );
    expect(table.map((l) => l.split(" | ")[0])).toEqual(["| finding", "|---|---|---|---|---|---|---|", "| `F-a`", "| `F-b`", "| `F-protocol-drift event agent lane`", "| `R-1`"]);
  });
});

describe("the committed docs", () => {
  it(`carry the findings as the records say now (else: ${REFRESH}, and commit)`, async () => {
    const stale: string[] = [];
    for (const [file, [committed, written]] of await writtenFindingsDocs()) {
      const now = generatedParts(written);
      for (const [name, body] of generatedParts(committed)) if (now.get(name) !== body) stale.push(`${file}: the generated part '${name}' differs from what the finding records give; run \`${REFRESH}\` and commit it`);
    }
    expect(stale).toEqual([]);
  });

  it("name only finding and check ids that exist: a record, its excerpt's file name, or a check id in scenarios/ or lab/", async () => {
    const records = new Set([...(await recordsOfScenarios()).flatMap((s) => s.findings.map((f) => f.id)), ...labFindings.map((f) => f.id)]);
    const excerpts = new Set(fs.readdirSync(path.join(ROOT, "fixtures/findings")).map((f) => f.replace(/\.json$/, "")));
    const code = execFileSync("git", ["ls-files", "-z", "scenarios", "lab"], { cwd: ROOT, encoding: "utf8" })
      .split("\0")
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => fs.readFileSync(path.join(ROOT, f), "utf8"))
      .join("\n");
    const files = ["README.md", ...execFileSync("git", ["ls-files", "docs"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter((f) => f.endsWith(".md"))];
    const missing: string[] = [];
    for (const file of files) {
      fs.readFileSync(path.join(ROOT, file), "utf8")
        .split("\n")
        .forEach((l, i) => {
          for (const m of l.matchAll(/`([RF]-[A-Za-z0-9][\w.-]*)`/g)) {
            const id = m[1]!;
            // The guides' worked example is the made-up openclaw#123456 (docs/guides/reproduce-a-field-bug.md).
            const drift = id === "F-protocol-drift" || id.startsWith("R-123456-");
            if (!drift && !records.has(id) && !excerpts.has(id) && !code.includes(`"${id}"`) && !code.includes(`'${id}'`)) missing.push(`${file}:${i + 1}: ${id} is no finding record, excerpt or check id in scenarios/ or lab/`);
          }
        });
    }
    expect(missing).toEqual([]);
  });
});
