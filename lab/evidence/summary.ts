// summary.md of a merged nightly (lab/evidence/merge.ts), written into the CI job summary
// ($GITHUB_STEP_SUMMARY). What a person must act on comes first, in its own section, not in a
// log: a registered finding whose signature changed (a "fail" whose check names a registered
// finding: OpenClaw still falls short, but differently), a "fixed?" (retire the record), a
// shard missing or cut, what the merge could not reconcile. Then the scenario x version
// matrix, then per version the verdict table and its shards (with the command that
// reproduces each). Markdown only (GitHub renders it; it reads as text too).
import type { RunRecord } from "./run.ts";

export interface VersionRun {
  version: string;
  record: RunRecord;
}

type Check = NonNullable<RunRecord["findings"]>[number];

export function summaryMarkdown(runs: VersionRun[], problems: string[] = []): string {
  const out: string[] = [];
  const names = scenarioNames(runs);
  out.push(`## fleetlab: ${names.length} scenario(s) on ${runs.map((r) => `openclaw@${r.version}`).join(", ") || "no version"}`, "");

  const changed = runs.flatMap((r) => (r.record.findings ?? []).filter((c) => c.outcome === "fail" && c.registered !== undefined).map((c) => ({ v: r.version, c })));
  const fixed = runs.flatMap((r) => (r.record.findings ?? []).filter((c) => c.outcome === "fixed?").map((c) => ({ v: r.version, c })));
  const shardTrouble = runs.flatMap((r) => (r.record.shards ?? []).filter((s) => s.status !== "complete").map((s) => ({ v: r.version, s })));
  if (changed.length || fixed.length || shardTrouble.length || problems.length) {
    out.push("### Needs attention", "");
    if (changed.length) {
      out.push(`#### Known finding, changed signature (${changed.length})`, "", "OpenClaw still falls short of the expectation, but not the way the registered finding says: compare and update the record, or fix what changed.", "");
      for (const { v, c } of changed) out.push(...checkBlock(v, c, true));
    }
    if (fixed.length) {
      out.push(`#### Fixed? (${fixed.length})`, "", "A registered finding did not reproduce: confirm and retire its record.", "");
      for (const { v, c } of fixed) out.push(...checkBlock(v, c, false));
    }
    if (shardTrouble.length) {
      out.push(`#### Shards missing or cut (${shardTrouble.length})`, "");
      for (const { v, s } of shardTrouble) {
        const what = s.status === "missing" ? "missing: no run folder came back" : `cut (run ${s.runId})`;
        out.push(`- openclaw@${v} shard ${s.index}/${s.total} ${what}; never ran: ${s.neverRan.length ? s.neverRan.map(code).join(", ") : "nothing planned"}`);
      }
      out.push("");
    }
    if (problems.length) {
      out.push("#### Merge problems", "");
      for (const p of problems) out.push(`- ${cell(p)}`);
      out.push("");
    }
  }

  if (runs.length) {
    out.push("### Version matrix", "");
    out.push(`| scenario | ${runs.map((r) => `openclaw@${r.version}`).join(" | ")} |`, `|---|${runs.map(() => "---|").join("")}`);
    for (const n of names) out.push(`| ${code(n)} | ${runs.map((r) => verdictCell(r.record, n)).join(" | ")} |`);
    out.push("");
  }

  for (const r of runs) {
    const rec = r.record;
    out.push(`### openclaw@${r.version}`, "");
    const shardOf = (n: string) => rec.shards?.find((s) => s.planned.includes(n));
    out.push("| scenario | verdict | time | shard | detail |", "|---|---|---:|---|---|");
    for (const row of rec.scenarios) {
      const s = shardOf(row.name);
      out.push(`| ${code(row.name)} | ${row.verdict.toUpperCase()} | ${row.seconds.toFixed(1)} s | ${s ? `${s.index}/${s.total}` : ""} | ${cell((row.detail ?? "").split("\n")[0]!.slice(0, 160))} |`);
    }
    for (const n of neverRan(rec)) {
      const s = shardOf(n);
      out.push(`| ${code(n)} | NOT RUN | | ${s ? `${s.index}/${s.total}` : ""} | ${s ? `shard ${s.status}` : "the run was cut before it"} |`);
    }
    const count = (v: string) => rec.scenarios.filter((x) => x.verdict === v).length;
    out.push("", `${rec.scenarios.length + neverRan(rec).length} scenario(s): ${count("pass")} pass, ${count("fail")} fail, ${count("unknown")} unknown, ${count("known-finding")} known finding, ${count("fixed?")} fixed?, ${count("n/a") ? `${count("n/a")} n/a, ` : ""}${neverRan(rec).length} not run`, "");
    if (rec.shards?.length) {
      out.push("| shard | status | run | wall time | reproduce |", "|---|---|---|---:|---|");
      for (const s of rec.shards) {
        const again = s.seed !== undefined ? code(`make lab SHARD=${s.index}/${s.total} SEED=${s.seed} OPENCLAW_VERSION=${r.version}`) : "";
        out.push(`| ${s.index}/${s.total} | ${s.status} | ${s.runId ? code(s.runId) : ""} | ${s.seconds !== undefined ? `${s.seconds.toFixed(0)} s` : ""} | ${again} |`);
      }
      out.push("");
    }
  }
  return out.join("\n");
}

/** Every scenario of every version, in the first plan's order, then the rest by name. */
function scenarioNames(runs: VersionRun[]): string[] {
  const seen: string[] = [];
  for (const r of runs) for (const n of [...(r.record.plan ?? []), ...r.record.scenarios.map((s) => s.name)]) if (!seen.includes(n)) seen.push(n);
  return seen;
}

function neverRan(rec: RunRecord): string[] {
  return (rec.plan ?? []).filter((n) => !rec.scenarios.some((s) => s.name === n));
}

function verdictCell(rec: RunRecord, name: string): string {
  const row = rec.scenarios.find((s) => s.name === name);
  if (row) {
    const changed = (rec.findings ?? []).some((c) => c.scenario === name && c.outcome === "fail" && c.registered !== undefined);
    return `${row.verdict.toUpperCase()}${changed ? " (signature changed)" : ""}`;
  }
  if (!(rec.plan ?? []).includes(name)) return "-";
  const s = rec.shards?.find((x) => x.planned.includes(name));
  return s ? `NOT RUN (shard ${s.index}/${s.total} ${s.status})` : "NOT RUN (cut)";
}

function checkBlock(version: string, c: Check, withRegistered: boolean): string[] {
  const lines = [`- ${code(c.findingId)} in ${code(c.scenario)} on openclaw@${version}: ${cell(c.expectation)}`];
  if (c.note) lines.push(`  - ${cell(c.note)}`);
  if (withRegistered) lines.push("", ...fenced(`registered: ${json(c.registered)}\nobserved:   ${json(c.observed)}`));
  else if (c.registered !== undefined) lines.push("", ...fenced(`registered: ${json(c.registered)}`));
  lines.push("");
  return lines;
}

const json = (v: unknown) => {
  const s = JSON.stringify(v) ?? "undefined";
  return s.length > 1200 ? `${s.slice(0, 1200)}... (${s.length} characters; the whole value is in run.json)` : s;
};

/** A fenced block that the content cannot close (its fence is longer than any backtick run in it). */
function fenced(text: string): string[] {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((m) => m.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return ["  " + fence, ...text.split("\n").map((l) => `  ${l}`), "  " + fence];
}

/** Table-cell text: one line, pipes escaped. */
function cell(s: string): string {
  return s.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

/** Inline code that its content cannot close. */
function code(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((m) => m.length));
  const tick = "`".repeat(longest + 1);
  return `${tick}${longest ? " " : ""}${cell(s)}${longest ? " " : ""}${tick}`;
}
