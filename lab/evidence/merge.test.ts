// Merging fabricated shard run folders (written through Run, as the runner writes them).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LabError } from "../core/log.ts";
import { mergeRuns } from "./merge.ts";
import { Run, readRunRecord, type RunRecord } from "./run.ts";
import { buildReportData } from "./timeline.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-merge-"));
const PARTITION = [["pair", "reuse", "smoke"], ["mcp", "cut-off"], ["lost-a", "lost-b"]];

/** A shard's run folder as `make lab SHARD=k/3` leaves it: run.json, scenario folders, a shared lab, a fault timeline. */
function shardRun(opts: { index: number; version?: string; ran: string[]; end?: boolean; findings?: RunRecord["findings"]; partition?: string[][] }): string {
  const run = Run.create({ root: path.join(root, "shards"), seed: 100 + opts.index, id: `shard-${opts.index}-${Math.random().toString(16).slice(2, 8)}` });
  const partition = opts.partition ?? PARTITION;
  const t = (s: number) => new Date(Date.UTC(2026, 10, 30, 0, opts.index, s)).toISOString();
  run.update((r) => {
    r.startedAt = t(0);
    r.topology = { openclawVersion: opts.version ?? "2026.9.6" };
    r.plan = partition[opts.index - 1];
    r.shard = { index: opts.index, total: partition.length, partition };
    r.labs = { [`${run.id}-1`]: { evidence: "shared-lab", spec: {}, network: { name: "n", id: "i", subnet: "s" }, members: [], timings: { up: 30, down: 2 } } };
    r.faults = { timeline: "faults.jsonl" };
    r.findings = opts.findings ?? [];
  });
  for (const [i, name] of opts.ran.entries()) {
    fs.mkdirSync(path.join(run.dir, "scenarios", name), { recursive: true });
    fs.writeFileSync(path.join(run.dir, "scenarios", name, "scenario.log"), `${t(i * 10)} ran\n`);
    fs.writeFileSync(path.join(run.dir, "scenarios", name, "faults.jsonl"), JSON.stringify({ id: "f1", fault: "kill", target: "node-1", step: "inject", t: Date.parse(t(i * 10 + 1)), ms: 1 }) + "\n");
    run.update((r) => void r.scenarios.push({ name, verdict: "pass", seconds: 9, startedAt: t(i * 10), endedAt: t(i * 10 + 9), evidence: `scenarios/${name}` }));
  }
  fs.mkdirSync(path.join(run.dir, "shared-lab"), { recursive: true });
  fs.writeFileSync(path.join(run.dir, "faults.jsonl"), JSON.stringify({ id: "f1", fault: "kill", target: "node-1", step: "inject", t: Date.parse(t(1)), ms: 1 }) + "\n");
  if (opts.end !== false) run.update((r) => void (r.endedAt = t(50)));
  return run.dir;
}

describe("fleetlab merge", () => {
  it("makes one run of the shards: valid run.json, every scenario once, each shard's evidence copied and pointed to", () => {
    const a = shardRun({ index: 1, ran: ["pair", "reuse", "smoke"] });
    const b = shardRun({ index: 2, ran: ["mcp", "cut-off"] });
    const c = shardRun({ index: 3, ran: ["lost-a", "lost-b"] });
    const out = path.join(root, "complete");
    const m = mergeRuns(out, [c, a, b], { shards: 3 });
    expect(m.problems).toEqual([]);
    const dir = path.join(out, "2026.9.6");
    const rec = readRunRecord(path.join(dir, "run.json")); // the one schema
    expect(rec.scenarios.map((s) => s.name).sort()).toEqual(PARTITION.flat().sort());
    expect(rec.plan).toEqual(PARTITION.flat());
    expect(rec.shards?.map((s) => [s.index, s.status, s.seed])).toEqual([[1, "complete", 101], [2, "complete", 102], [3, "complete", 103]]);
    for (const s of rec.scenarios) expect(fs.existsSync(path.join(dir, s.evidence!, "scenario.log")), s.evidence).toBe(true);
    for (const l of Object.values(rec.labs ?? {})) expect(fs.existsSync(path.join(dir, l.evidence)), l.evidence).toBe(true);
    expect(rec.timings["shard 2/3"]).toBe(50);
    // Fault ids restart in every run: the shard's prefix keeps them apart in the joined timeline.
    const ids = fs.readFileSync(path.join(dir, "faults.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toEqual(["s1-f1", "s2-f1", "s3-f1"]);
    expect(fs.readFileSync(path.join(dir, "shards/2-of-3/scenarios/mcp/faults.jsonl"), "utf8")).toContain('"id":"s2-f1"');
    // Reports beside it, from the merged record.
    for (const f of ["junit.xml", "report.html", "summary.md"]) expect(fs.existsSync(path.join(dir, f)), f).toBe(true);
    expect((fs.readFileSync(path.join(dir, "junit.xml"), "utf8").match(/<testcase /g) ?? []).length).toBe(7);
    // report.html's data: each shared scenario on its own shard's shared lab.
    const { data } = buildReportData(dir, rec);
    const labOf = (n: string) => data.labs.find((l) => l.key === data.scenarios.find((s) => s.name === n)?.lab)?.evidence;
    expect(labOf("pair")).toBe("shards/1-of-3/shared-lab");
    expect(labOf("mcp")).toBe("shards/2-of-3/shared-lab");
    expect(data.items.filter((i) => i.kind === "fault").length).toBe(3);
  });

  it("names a cut shard (planned scenarios that never ran) and a missing shard (what it would have run, from the partition)", () => {
    const a = shardRun({ index: 1, ran: ["pair", "reuse", "smoke"] });
    const b = shardRun({ index: 2, ran: ["mcp"], end: false });
    const out = path.join(root, "cut");
    const m = mergeRuns(out, [a, b], { shards: 3 });
    const rec = readRunRecord(path.join(out, "2026.9.6", "run.json"));
    expect(rec.shards?.map((s) => [s.index, s.status, s.neverRan])).toEqual([
      [1, "complete", []],
      [2, "cut", ["cut-off"]],
      [3, "missing", ["lost-a", "lost-b"]],
    ]);
    expect(rec.plan).toEqual(PARTITION.flat()); // junit and report.html name what never ran
    expect(rec.endedAt).toBeDefined();
    const junit = fs.readFileSync(path.join(out, "2026.9.6", "junit.xml"), "utf8");
    // Not passed: an error or a skip, whichever junit.ts makes of a scenario that never ran.
    for (const n of ["cut-off", "lost-a", "lost-b"]) expect(junit).toMatch(new RegExp(`name="${n}"[^>]*>\\s*<(error|skipped|failure)`));
    expect(m.problems.join("\n")).toMatch(/shard 2\/3 was cut .*never ran cut-off/);
    expect(m.problems.join("\n")).toMatch(/shard 3\/3 is missing .*never ran lost-a, lost-b/);
    const summary = fs.readFileSync(m.summaryFile, "utf8");
    expect(summary.indexOf("### Needs attention")).toBeLessThan(summary.indexOf("### Version matrix"));
    expect(summary).toContain("shard 3/3 missing: no run folder came back; never ran: `lost-a`, `lost-b`");
    expect(summary).toContain("| `lost-a` | NOT RUN (shard 3/3 missing) |");
    expect(summary).toContain("| `cut-off` | NOT RUN (shard 2/3 cut) |");
  });

  it("merges per version, finds run folders inside downloaded artifact folders, and names a version no shard came back for", () => {
    const art = path.join(root, "artifacts");
    for (const [k, v] of [[1, "2026.9.6"], [2, "2026.9.6"], [3, "2026.9.6"], [1, "2026.10.1"]] as const) {
      const dir = shardRun({ index: k, version: v, ran: PARTITION[k - 1]! });
      const into = path.join(art, `evidence-${v}-shard-${k}-of-3`, path.basename(dir));
      fs.mkdirSync(path.dirname(into), { recursive: true });
      fs.renameSync(dir, into);
    }
    const out = path.join(root, "versions");
    const m = mergeRuns(out, fs.readdirSync(art).map((d) => path.join(art, d)), { shards: 3, versions: ["2026.9.6", "2026.10.1", "2026.11.0"] });
    expect(m.versions.map((v) => [v.version, v.record.scenarios.length, v.record.shards?.filter((s) => s.status === "missing").length])).toEqual([
      ["2026.9.6", 7, 0],
      ["2026.10.1", 3, 2],
      ["2026.11.0", 0, 3],
    ]);
    expect(m.problems).toContain("openclaw@2026.11.0: no shard came back: nothing ran");
    const summary = fs.readFileSync(m.summaryFile, "utf8");
    expect(summary).toContain("| scenario | openclaw@2026.9.6 | openclaw@2026.10.1 | openclaw@2026.11.0 |");
    expect(summary).toContain("| `pair` | PASS | PASS | - |");
    expect(summary).toContain("| `mcp` | PASS | NOT RUN (shard 2/3 missing) | - |");
    // Each version's own folder and summary.
    expect(readRunRecord(path.join(out, "2026.10.1", "run.json")).shards?.[0]?.status).toBe("complete");
    expect(fs.readFileSync(path.join(out, "2026.10.1", "summary.md"), "utf8")).not.toContain("2026.9.6");
  });

  it("a registered finding with a changed signature is at the top of the summary", () => {
    const changed = { findingId: "F-x", scenario: "pair", expectation: "the turn ends", outcome: "fail" as const, observed: { state: "hung" }, registered: { state: "running" }, kind: "shortfall" as const, note: "expectation not met, and the observed signature differs from registered finding F-x" };
    const dir = shardRun({ index: 1, ran: ["pair"], findings: [changed], partition: [["pair"]] });
    const out = path.join(root, "changed");
    const m = mergeRuns(out, [dir]);
    const summary = fs.readFileSync(m.summaryFile, "utf8");
    const top = summary.slice(0, summary.indexOf("### Version matrix"));
    expect(top).toContain("#### Known finding, changed signature (1)");
    expect(top).toContain('registered: {"state":"running"}');
    expect(top).toContain('observed:   {"state":"hung"}');
  });

  it("bad input is said, with exit 2: no run folders, an output folder already there", () => {
    expect(() => mergeRuns(path.join(root, "none"), [])).toThrow(LabError);
    const dir = shardRun({ index: 1, ran: ["pair"], partition: [["pair"]] });
    const out = path.join(root, "twice");
    mergeRuns(out, [dir]);
    expect(() => mergeRuns(out, [dir])).toThrow(/already exists/);
  });

  it("a folder that is not a run, or a cut run.json, is a merge problem (and its shard shows as missing)", () => {
    const broken = fs.mkdtempSync(path.join(root, "broken-"));
    fs.writeFileSync(path.join(broken, "run.json"), '{"id": "x", "sce');
    const ok = shardRun({ index: 1, ran: ["pair", "reuse", "smoke"] });
    const m = mergeRuns(path.join(root, "broken-out"), [ok, broken, path.join(root, "nope")], { shards: 3 });
    expect(m.problems.some((p) => p.includes("not readable JSON"))).toBe(true);
    expect(m.problems.some((p) => p.includes("no such run folder"))).toBe(true);
    expect(m.versions[0]!.record.shards?.map((s) => s.status)).toEqual(["complete", "missing", "missing"]);
  });
});
