// `fleetlab judge <run>`: a stored run folder judged again with today's checks and finding
// records (after Jepsen's `analyze`, which re-checks a stored history). Nothing runs: each
// scenario's history.json (lab/judge/history.ts) is judged by the same judgeHistory the run judged
// it by, with the scenario's records and declared checks as they are now, and the lab-wide
// records. The new verdict table and report go beside the old ones (judged/<stamp>/), and what
// changed is said scenario by scenario with why: a record added, removed or changed, a check that
// reads the history differently now.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../core/paths.ts";
import { LabError } from "../core/log.ts";
import { HISTORY_FILE, addJudged, addLabWideUnexercised, attemptsDetail, whyChanged, judgeHistory, type HistoryJudged, type ScenarioHistory } from "../judge/history.ts";
import { SCENARIO_ATTEMPTS } from "../run/admission.ts";
import { verdictTable } from "../evidence/report.ts";
import { junitXml } from "../evidence/junit.ts";
import { writeJson } from "../evidence/write.ts";
import { timeStamp, type RunRecord, type ScenarioRow } from "../evidence/run.ts";
import type { CheckResult, FindingRecord } from "../findings/findings.ts";
import type { Verdict } from "../definitions/verdict.ts";
import type { Scenario } from "../scenario.ts";

/** One scenario row, as the run judged it and as it reads now. */
export interface JudgedRow {
  name: string;
  before: { verdict: Verdict; detail?: string };
  after: { verdict: Verdict; detail?: string };
  /** Judged again from its history; false: kept as recorded, with why. */
  rejudged: boolean;
  reason?: string;
  changed: boolean;
  /** Why it reads differently now, check by check. */
  why: string[];
  /** Its history and how it reads now (rejudged rows only): the run's record and `--keep` are made from these, judged once. */
  history?: ScenarioHistory;
  judged?: HistoryJudged;
}

export interface JudgedRun {
  run: string;
  at: string;
  rows: JudgedRow[];
  /** The run's record as it reads now: rows, findings and unexercised records judged again. */
  record: RunRecord;
}

/** A scenario folder's stored history, or why there is none to judge. */
export function readHistory(file: string): ScenarioHistory | string {
  if (!fs.existsSync(file)) return `no ${HISTORY_FILE} in its evidence folder (a run recorded before histories were kept, or one that ended before this scenario was judged): kept as recorded`;
  try {
    const h = JSON.parse(fs.readFileSync(file, "utf8")) as ScenarioHistory;
    if ((h.format !== 1 && h.format !== 2) || !Array.isArray(h.body) || !Array.isArray(h.evidence)) return `${HISTORY_FILE} is not a history this lab reads (format ${String(h.format)}): kept as recorded`;
    return h;
  } catch (err) {
    return `${HISTORY_FILE} could not be read (${(err as Error).message}): kept as recorded`;
  }
}

/** Judge one evidence folder's history again, or say why it cannot be. */
function judgeFolder(dir: string, rel: string | undefined, s: Scenario | undefined, labWide: FindingRecord[]): { h: ScenarioHistory; j: HistoryJudged } | string {
  if (!rel) return "no evidence folder recorded: kept as recorded";
  if (!s) return "no scenario of that name in today's suite: kept as recorded";
  const h = readHistory(path.join(dir, rel, HISTORY_FILE));
  if (typeof h === "string") return h;
  return { h, j: judgeHistory(h, s, labWide) };
}

/** The run in `dir` judged again with `scenarios` (today's) and the lab-wide records `labWide`. */
export function judgeRun(dir: string, record: RunRecord, scenarios: Scenario[], labWide: FindingRecord[], now = new Date()): JudgedRun {
  const byName = new Map(scenarios.map((s) => [s.name, s]));
  const rows: JudgedRow[] = [];
  const newRows: ScenarioRow[] = [];
  for (const row of record.scenarios) {
    const s = byName.get(row.name);
    const before = { verdict: row.verdict, detail: row.detail };
    const out = judgeFolder(dir, row.evidence, s, labWide);
    if (typeof out === "string") {
      rows.push({ name: row.name, before, after: before, rejudged: false, reason: out, changed: false, why: [] });
      newRows.push(row);
      continue;
    }
    let detail = out.j.detail;
    const why = whyChanged(out.h, out.j, s!, labWide, row.attempts?.length ? undefined : { ...before, premises: row.premises });
    // Earlier attempts (the machine was busier than planned): each judged again, said as the run said them.
    if (row.attempts?.length) {
      const earlier = row.attempts.map((a, i) => {
        const e = judgeFolder(dir, a.evidence, s, labWide);
        if (typeof e === "string") return a;
        const w = whyChanged(e.h, e.j, s!, labWide, { verdict: a.verdict, detail: a.detail });
        if (w.length) why.push(...w.map((x) => `attempt ${i + 1}: ${x}`));
        return { ...a, verdict: e.j.verdict, detail: e.j.detail };
      });
      detail = attemptsDetail(row.attempts.length + 1, SCENARIO_ATTEMPTS, earlier, detail);
      newRows.push({ ...row, verdict: out.j.verdict, detail, attempts: earlier, premises: out.j.premises.length ? out.j.premises : undefined });
    } else newRows.push({ ...row, verdict: out.j.verdict, detail, premises: out.j.premises.length ? out.j.premises : undefined });
    const after = { verdict: out.j.verdict, detail };
    const changed = after.verdict !== before.verdict || after.detail !== before.detail;
    rows.push({ name: row.name, before, after, rejudged: true, changed, why, history: out.h, judged: out.j });
  }
  // The run's record rebuilt as the run built it (lab/judge/history.ts addJudged, then the
  // lab-wide records no scenario exercised): what the judged scenarios added is taken out first.
  const names = new Set(rows.filter((r) => r.rejudged).map((r) => r.name));
  const newRecord: RunRecord = {
    ...record,
    scenarios: newRows,
    findings: (record.findings ?? []).filter((f) => !names.has(f.scenario)),
    exercised: [...(record.exercised ?? [])],
    unexercised: (record.unexercised ?? []).filter((u) => u.scenario && !names.has(u.scenario)),
  };
  for (const r of rows) if (r.judged) addJudged(newRecord, r.name, r.judged);
  addLabWideUnexercised(newRecord, labWide);
  if (!newRecord.unexercised?.length) newRecord.unexercised = undefined;
  return { run: record.id, at: now.toISOString(), rows, record: newRecord };
}

/** The folder a judging writes into, beside the run's own reports: judged/<yyyymmdd-hhmmss>. */
export function judgedDir(dir: string, at: Date): string {
  const stamp = timeStamp(at);
  let out = path.join(dir, "judged", stamp);
  for (let i = 2; fs.existsSync(out); i++) out = path.join(dir, "judged", `${stamp}-${i}`);
  return out;
}

/** What changed, for the terminal and verdicts.md: one line a changed scenario, its reasons below it. */
export function changesText(j: Pick<JudgedRun, "rows">): string {
  const changed = j.rows.filter((r) => r.changed);
  const kept = j.rows.filter((r) => !r.rejudged);
  const lines: string[] = [];
  if (!changed.length) lines.push(`no verdict changed: ${j.rows.filter((r) => r.rejudged).length} scenario(s) judged again read as the run read them`);
  for (const r of changed) {
    lines.push(`${r.name}: ${r.before.verdict.toUpperCase()} -> ${r.after.verdict.toUpperCase()}${r.before.verdict === r.after.verdict ? " (its detail changed)" : ""}`);
    for (const w of r.why.length ? r.why : ["its detail reads differently (no check's outcome changed)"]) lines.push(`    ${w}`);
  }
  for (const r of kept) lines.push(`${r.name}: not judged again: ${r.reason}`);
  return lines.join("\n");
}

/** Write the judging beside the run: run.json, junit.xml, verdicts.md (table and changes), judged.json (row by row). */
export function writeJudged(dir: string, j: JudgedRun, at: Date): string {
  const out = judgedDir(dir, at);
  fs.mkdirSync(out, { recursive: true });
  writeJson(path.join(out, "run.json"), j.record);
  fs.writeFileSync(path.join(out, "junit.xml"), junitXml(j.record));
  writeJson(path.join(out, "judged.json"), { run: j.run, at: j.at, rows: j.rows.map(({ history: _h, judged: _j, ...r }) => r) });
  const md = [
    `# Run ${j.run} judged again on ${j.at}`,
    "",
    "With today's checks and finding records, from each scenario's history.json; nothing was run again.",
    "",
    "```",
    verdictTable(j.record.scenarios),
    "```",
    "",
    "## What changed",
    "",
    "```",
    changesText(j),
    "```",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(out, "verdicts.md"), md);
  return out;
}

/** Where the recorded histories that the checks' unit tests judge are kept. */
export const HISTORY_FIXTURES = path.join(ROOT, "fixtures", "histories");

/** A recorded history kept as a fixture: the run it came from, what that run read, and what today's checks and records read. */
export interface HistoryFixture {
  run: string;
  scenario: string;
  /** The verdict today's checks and records give it, when it was kept: scenarios/histories.test.ts holds every later reading to it. */
  verdict: Verdict;
  detail?: string;
  /** The verdict its run gave it (its verdict.json), when that differs from today's. */
  ran?: { verdict: Verdict; detail?: string };
  history: ScenarioHistory;
}

/** A history larger than this is not kept as a fixture (said): its checks are tested on hand-made histories. */
export const FIXTURE_MAX_BYTES = 512 * 1024;

/**
 * Keep the named scenarios' histories of a run (all that have one when none are named) as
 * fixtures/histories/<name>.json, each with the verdict today's checks and records give it (and
 * its run's, when that differs). A history over FIXTURE_MAX_BYTES is left out, and said.
 */
export function keepFixtures(dir: string, j: JudgedRun, names: string[], out = HISTORY_FIXTURES): { scenario: string; file?: string; bytes: number; skipped?: string }[] {
  const rows = names.length ? names.map((n) => j.rows.find((r) => r.name === n) ?? n) : j.rows.filter((r) => r.judged);
  const missing = rows.filter((r): r is string => typeof r === "string");
  if (missing.length) throw new LabError(`judge --keep: run ${j.run} has no scenario ${missing.join(", ")}; it ran ${j.rows.map((r) => r.name).join(", ") || "none"}`);
  const kept: { scenario: string; file?: string; bytes: number; skipped?: string }[] = [];
  fs.mkdirSync(out, { recursive: true });
  for (const row of rows as JudgedRow[]) {
    if (!row.history || !row.judged) throw new LabError(`judge --keep: ${row.name}: ${row.reason ?? "not judged again"}`);
    const evidence = j.record.scenarios.find((r) => r.name === row.name)?.evidence;
    const ran = JSON.parse(fs.readFileSync(path.join(dir, evidence!, "verdict.json"), "utf8")) as { verdict: Verdict; detail?: string };
    const now = row.judged;
    const fixture: HistoryFixture = {
      run: j.run,
      scenario: row.name,
      verdict: now.verdict,
      ...(now.detail ? { detail: now.detail } : {}),
      ...(ran.verdict !== now.verdict || ran.detail !== now.detail ? { ran: { verdict: ran.verdict, ...(ran.detail ? { detail: ran.detail } : {}) } } : {}),
      history: row.history,
    };
    const text = JSON.stringify(fixture) + "\n";
    const bytes = Buffer.byteLength(text);
    if (bytes > FIXTURE_MAX_BYTES) {
      kept.push({ scenario: row.name, bytes, skipped: `${(bytes / 2 ** 20).toFixed(1)} MiB, over the ${FIXTURE_MAX_BYTES / 1024} KiB a fixture may take: not kept` });
      continue;
    }
    const file = path.join(out, `${row.name}.json`);
    fs.writeFileSync(file, text);
    kept.push({ scenario: row.name, file, bytes });
  }
  return kept;
}
