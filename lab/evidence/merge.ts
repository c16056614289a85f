// Merging shard runs (`fleetlab merge OUT RUN...`): the run folders of the shards of a nightly
// (one per runner, lab/run/shard.ts) become one run per OpenClaw version: OUT/<version>/ with
// run.json (the one schema, written through Run), junit.xml, report.html and summary.md, and
// OUT/summary.md over every version (the job summary: what needs attention first, then the
// scenario x version matrix, then each version's verdicts).
//
// Each shard's folder is copied whole to OUT/<version>/shards/<k>-of-<n>/ (every shard has its
// own shared-lab/, faults.jsonl and reports, so they cannot share one folder), and the merged
// run.json points into those copies. Fault ids restart at f1 in every run, so a copy's
// faults.jsonl files get the shard as a prefix (s2-f1) before the run-level timelines are
// joined. A shard is visible for what it was: complete, cut (planned scenarios never ran; they
// stay in the plan, so junit and report.html name them as never run) or missing (no run folder
// came back: the partition any other shard recorded says what it would have run).
import { sealFolder } from "./redact.ts";
import fs from "node:fs";
import path from "node:path";
import { LabError } from "../core/log.ts";
import { junitXml } from "./junit.ts";
import { TimelineEntry, parseJsonLine } from "./records/index.ts";
import { writeReportHtml } from "./report-html.ts";
import { LATEST, Run, newRunId, readRunRecord, type RunRecord } from "./run.ts";
import { summaryMarkdown, type VersionRun } from "./summary.ts";

type ShardRow = NonNullable<RunRecord["shards"]>[number];

export interface MergeOptions {
  /** Shards each version was split into (the workflow's matrix); default: what the shards recorded. */
  shards?: number;
  /** Versions expected (the workflow's matrix): one that no shard came back for is named. */
  versions?: string[];
}

export interface MergeResult {
  versions: (VersionRun & { dir: string })[];
  /** What the merge itself could not use or reconcile (also in summary.md). */
  problems: string[];
  summaryFile: string;
}

interface Found {
  dir: string;
  record: RunRecord;
}

/** Run folders in what was given: a run folder, a run.json, or a folder of run folders (a downloaded artifact). */
export function findRunFolders(inputs: string[]): { found: Found[]; problems: string[] } {
  const found: Found[] = [];
  const problems: string[] = [];
  const take = (dir: string) => {
    try {
      found.push({ dir, record: readRunRecord(path.join(dir, "run.json")) });
    } catch (err) {
      problems.push(`${dir}: ${(err as Error).message}`);
    }
  };
  for (const input of inputs) {
    if (input.endsWith(".json") && fs.existsSync(input)) take(path.dirname(input));
    else if (fs.existsSync(path.join(input, "run.json"))) take(input);
    else if (fs.existsSync(input) && fs.statSync(input).isDirectory()) {
      // The link to the newest run (.lab/runs/latest) is a second name of a folder beside it: left out.
      const subs = fs.readdirSync(input).filter((d) => d !== LATEST && fs.existsSync(path.join(input, d, "run.json"))).sort();
      if (!subs.length) problems.push(`${input}: no run.json in it or in its folders`);
      for (const d of subs) take(path.join(input, d));
    } else problems.push(`${input}: no such run folder`);
  }
  return { found, problems };
}

export const versionOf = (r: RunRecord): string | undefined => (r.topology as { openclawVersion?: string } | undefined)?.openclawVersion;

export function mergeRuns(outDir: string, inputs: string[], opts: MergeOptions = {}): MergeResult {
  if (!inputs.length && !opts.versions?.length) throw new LabError("merge needs the shard run folders: fleetlab merge OUT_DIR RUN_DIR...");
  const { found, problems } = findRunFolders(inputs);
  const byVersion = new Map<string, Found[]>();
  for (const v of opts.versions ?? []) byVersion.set(v, []);
  for (const f of found) {
    const v = versionOf(f.record);
    if (!v) {
      problems.push(`${f.dir}: run ${f.record.id} has no topology (cut before it started); it cannot be placed`);
      continue;
    }
    if (opts.versions?.length && !opts.versions.includes(v)) problems.push(`${f.dir}: run ${f.record.id} is of openclaw@${v}, which was not expected (${opts.versions.join(", ")})`);
    byVersion.set(v, [...(byVersion.get(v) ?? []), f]);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const versions: MergeResult["versions"] = [];
  for (const [version, runs] of byVersion) {
    const dir = path.join(outDir, version);
    const record = mergeVersion(dir, version, runs, opts.shards, problems);
    versions.push({ version, record, dir });
  }
  for (const v of versions) fs.writeFileSync(path.join(v.dir, "summary.md"), summaryMarkdown([v], problems.filter((p) => p.includes(`openclaw@${v.version}`))));
  const summaryFile = path.join(outDir, "summary.md");
  fs.writeFileSync(summaryFile, summaryMarkdown(versions, problems));
  // A shard cut before its own end was never sealed: the merged folder gets the final pass too.
  sealFolder(outDir);
  return { versions, problems, summaryFile };
}

/** One version's shards into one run folder; what cannot be reconciled goes to `problems`. */
function mergeVersion(dir: string, version: string, runs: Found[], expectedShards: number | undefined, problems: string[]): RunRecord {
  const say = (msg: string) => problems.push(`openclaw@${version}: ${msg}`);
  if (fs.existsSync(dir)) throw new LabError(`${dir} already exists: merge into a new folder`);
  // A run without shard info is the whole suite as one shard.
  const shardOf = (f: Found) => f.record.shard ?? { index: 1, total: 1, partition: [f.record.plan ?? f.record.scenarios.map((s) => s.name)] };
  const totals = [...new Set(runs.map((f) => shardOf(f).total))];
  if (totals.length > 1) say(`shards disagree on the shard count (${totals.join(", ")}); using ${expectedShards ?? Math.max(...totals)}`);
  if (expectedShards !== undefined && totals.length && !totals.includes(expectedShards)) say(`expected ${expectedShards} shards, the shards say ${totals.join(", ")}`);
  const total = expectedShards ?? (totals.length ? Math.max(...totals) : 1);
  const partitions = [...new Set(runs.map((f) => JSON.stringify(shardOf(f).partition)))];
  if (partitions.length > 1) say(`shards cut the suite differently (${partitions.length} partitions: different scenario lists or costs on the runners); scenarios may have run twice or not at all`);
  const partition = runs.length ? shardOf(runs[0]!).partition : undefined;

  const byIndex = new Map<number, Found>();
  for (const f of [...runs].sort((a, b) => a.record.startedAt.localeCompare(b.record.startedAt))) {
    const { index } = shardOf(f);
    if (index > total) say(`${f.dir}: shard ${index}/${shardOf(f).total} is outside ${total} shards; left out`);
    else if (byIndex.has(index)) say(`shard ${index}/${total} came back twice (${byIndex.get(index)!.record.id}, ${f.record.id}); the first is used`);
    else byIndex.set(index, f);
  }

  const present = [...byIndex.values()];
  const first = present[0]?.record;
  const run = new Run(`merged-${newRunId()}`, dir, first?.seed ?? 0);
  const shards: ShardRow[] = [];
  const merged: Partial<RunRecord> = { scenarios: [], findings: [], labs: {}, timings: {}, plan: [] };
  const faultLines: string[] = [];
  for (let k = 1; k <= total; k++) {
    const f = byIndex.get(k);
    const planned = f?.record.plan ?? partition?.[k - 1] ?? [];
    if (!f) {
      shards.push({ index: k, total, status: "missing", planned, neverRan: planned });
      say(`shard ${k}/${total} is missing (no run folder came back)${planned.length ? `: never ran ${planned.join(", ")}` : partition ? " (it had no scenarios)" : "; no other shard recorded what it was to run"}`);
      merged.plan!.push(...planned);
      continue;
    }
    const rel = `shards/${k}-of-${total}`;
    fs.cpSync(f.dir, path.join(dir, rel), { recursive: true });
    prefixFaultIds(path.join(dir, rel), `s${k}-`);
    const r = f.record;
    const ran = new Set(r.scenarios.map((s) => s.name));
    const neverRan = planned.filter((n) => !ran.has(n));
    const seconds = r.endedAt ? (Date.parse(r.endedAt) - Date.parse(r.startedAt)) / 1000 : undefined;
    const status = neverRan.length || !r.endedAt ? "cut" : "complete";
    shards.push({ index: k, total, status, runId: r.id, seed: r.seed, dir: rel, planned, neverRan, seconds });
    if (status === "cut") say(`shard ${k}/${total} was cut (run ${r.id}${r.endedAt ? "" : ", no end recorded"})${neverRan.length ? `: never ran ${neverRan.join(", ")}` : ""}`);
    merged.plan!.push(...planned, ...r.scenarios.map((s) => s.name).filter((n) => !planned.includes(n)));
    merged.scenarios!.push(...r.scenarios.map((s) => ({ ...s, evidence: `${rel}/${s.evidence ?? `scenarios/${s.name}`}` })));
    merged.findings!.push(...(r.findings ?? []));
    for (const [key, lab] of Object.entries(r.labs ?? {})) merged.labs![key] = { ...lab, evidence: `${rel}/${lab.evidence}` };
    for (const [name, t] of Object.entries(r.timings)) merged.timings![`shard ${k}/${total} ${name}`] = t;
    if (seconds !== undefined) merged.timings![`shard ${k}/${total}`] = seconds;
    const timeline = path.join(dir, rel, r.faults?.timeline ?? "faults.jsonl");
    if (fs.existsSync(timeline)) faultLines.push(...fs.readFileSync(timeline, "utf8").split("\n").filter(Boolean));
  }
  if (faultLines.length) {
    fs.writeFileSync(path.join(dir, "faults.jsonl"), faultLines.join("\n") + "\n");
    merged.faults = { timeline: "faults.jsonl" };
  }
  if (!present.length) say("no shard came back: nothing ran");
  const ends = present.map((f) => f.record.endedAt).filter((e): e is string => !!e).sort();
  run.update((r) => {
    Object.assign(r, merged);
    if (first) Object.assign(r, { startedAt: present.map((f) => f.record.startedAt).sort()[0], host: first.host, engine: first.engine, topology: first.topology });
    else r.topology = { openclawVersion: version };
    if (ends.length) r.endedAt = ends.at(-1);
    r.shards = shards;
  });
  fs.writeFileSync(path.join(dir, "junit.xml"), junitXml(run.record));
  writeReportHtml(dir, run.record);
  return run.record;
}

/** Fault ids restart in every run: prefix them in every faults.jsonl of a copied shard folder. */
function prefixFaultIds(dir: string, prefix: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name !== "faults.jsonl") continue;
    const file = path.join(e.parentPath, e.name);
    const lines = fs.readFileSync(file, "utf8").split("\n").map((line) => {
      const entry = parseJsonLine(line, TimelineEntry);
      // A line that is not an entry (a cut last line) is kept as it was; the report names it.
      return entry ? JSON.stringify({ ...entry, id: `${prefix}${entry.id}` }) : line;
    });
    fs.writeFileSync(file, lines.join("\n"));
  }
}
