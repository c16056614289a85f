// Verdict table for the terminal, from results or from a run folder's run.json.
import fs from "node:fs";
import path from "node:path";
import { RUNS } from "../core/paths.ts";
import { LATEST, readRunRecord, type RunRecord } from "./run.ts";
import { LabError } from "../core/log.ts";
import { accepted, exitCodeOf, type Verdict } from "../definitions/verdict.ts";

export interface Row {
  name: string;
  verdict: string;
  seconds: number;
  detail?: string;
}

export function verdictTable(rows: Row[]): string {
  const w = Math.max(8, ...rows.map((r) => r.name.length));
  const lines = [`${"scenario".padEnd(w)}  ${"verdict".padEnd(13)}  ${"time".padStart(7)}  detail`, `${"-".repeat(w)}  ${"-".repeat(13)}  ${"-".repeat(7)}  ------`];
  for (const r of rows) {
    const detail = (r.detail ?? "").split("\n")[0].slice(0, 120);
    const time = r.verdict === NOT_RUN ? "-" : `${r.seconds.toFixed(1)} s`;
    lines.push(`${r.name.padEnd(w)}  ${r.verdict.toUpperCase().padEnd(13)}  ${time.padStart(7)}  ${detail}`);
  }
  const count = (v: string) => rows.filter((r) => r.verdict === v).length;
  const more = [count("fixed?") ? `, ${count("fixed?")} fixed?` : "", count("n/a") ? `, ${count("n/a")} n/a (the version lacks what they need)` : "", count(NOT_RUN) ? `, ${count(NOT_RUN)} not run` : ""].join("");
  lines.push("", `${rows.length} scenario(s): ${count("pass")} pass, ${count("fail")} fail, ${count("unknown")} unknown, ${count("known-finding")} known finding${more}`);
  return lines.join("\n");
}

/** The verdict of a planned scenario a cut run never reached (never a pass). */
export const NOT_RUN = "not run";

/** A run's rows as recorded, then every planned scenario it never reached, marked "not run". */
export function reportRows(record: RunRecord): Row[] {
  const ran = new Set(record.scenarios.map((r) => r.name));
  const never = (record.plan ?? []).filter((n) => !ran.has(n));
  return [...record.scenarios, ...never.map((name) => ({ name, verdict: NOT_RUN, seconds: 0, detail: "the run was cut before this scenario" }))];
}

/** What a run.json says about itself that a reader must not take as a finished run (empty when it ended). */
export function runProblems(record: RunRecord): string[] {
  const out: string[] = [];
  const never = reportRows(record).filter((r) => r.verdict === NOT_RUN);
  if (!record.endedAt) out.push("partial: the run never recorded its end (cut, killed, or still running)");
  if (!record.plan) out.push("partial: the run recorded no plan, so scenarios it never reached cannot be named");
  if (never.length) out.push(`not run: ${never.map((r) => r.name).join(", ")} (the run was cut before them)`);
  return out;
}

/**
 * The exit code a stored run reads as (`fleetlab report`, and `fleetlab run` at its end): 1 a
 * scenario failed; 3 one read unknown, a planned one never ran, or the run never got as far as
 * its plan (a run folder with no scenario and no plan: it never ran, which is never a pass), or
 * recorded neither its plan nor its end (what never ran cannot be named); 0 otherwise. A run
 * that planned nothing (a shard with no scenario) and ended is 0.
 */
export function runExitCode(record: RunRecord): number {
  const code = exitCodeOf(reportRows(record).map((r) => (r.verdict === NOT_RUN ? "unknown" : (r.verdict as Verdict))));
  if (code) return code;
  if (!record.plan && (!record.scenarios.length || !record.endedAt)) return 3;
  return 0;
}

/**
 * The scenarios a run did not accept (fail, unknown, not run), each with its whole detail, its
 * earlier attempts and the checks that decided it (read from its evidence folder's findings.json:
 * id, outcome, observed): what a CI log's kept tail must name, since the vitest diff above it
 * does not. Empty when every verdict is accepted.
 */
export function notAcceptedLines(record: RunRecord, dir: string): string[] {
  const out: string[] = [];
  const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n)}…` : t);
  for (const r of reportRows(record)) {
    if (r.verdict !== NOT_RUN && accepted(r.verdict as Verdict)) continue;
    const s = record.scenarios.find((x) => x.name === r.name);
    out.push(`NOT ACCEPTED ${r.name}: ${r.verdict.toUpperCase()}${s ? ` after ${s.seconds.toFixed(1)} s` : ""}: ${clip(r.detail ?? "", 1500)}`);
    for (const a of s?.attempts ?? []) out.push(`  attempt: ${a.verdict} after ${a.seconds.toFixed(1)} s: ${clip(a.detail ?? "", 600)}`);
    const file = s?.evidence ? path.join(dir, s.evidence, "findings.json") : undefined;
    // A check's outcome is one of the verdicts (findings.ts CheckOutcome), accepted as they are.
    let checks: { findingId?: string; outcome: Verdict; observed?: unknown }[] = [];
    try {
      if (file && fs.existsSync(file)) checks = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
      out.push(`  (its findings.json could not be read: ${file})`);
    }
    for (const c of Array.isArray(checks) ? checks : []) {
      if (accepted(c.outcome)) continue;
      out.push(`  check ${c.findingId}: ${c.outcome}; observed ${clip(JSON.stringify(c.observed ?? null), 800)}`);
    }
    if (s?.evidence) out.push(`  evidence: ${path.join(dir, s.evidence)}`);
  }
  return out;
}

/**
 * A run named as the commands take it: a run id, a run folder or its run.json, or `latest` (the
 * link to the newest run folder, `.lab/runs/latest`), resolved to the folder it points at.
 */
export function runDir(id: string, runs = RUNS): string {
  if (id.includes("/") || id.endsWith(".json")) return id.endsWith(".json") ? path.dirname(id) : id;
  if (id !== LATEST) return path.join(runs, id);
  const link = path.join(runs, LATEST);
  let target: string;
  try {
    target = fs.readlinkSync(link);
  } catch {
    throw new LabError(`${link}: no run yet (the link to the newest run is made when a run starts): run 'make lab' first, or give a run id from ${runs}`);
  }
  return path.isAbsolute(target) ? target : path.join(runs, target);
}

/** The newest run folder, or the one named (a run id, a folder, or `latest`). */
export function findRun(id?: string, runs = RUNS): { dir: string; record: RunRecord } {
  let dir: string;
  if (id) dir = runDir(id, runs);
  else {
    const all = fs.existsSync(runs) ? fs.readdirSync(runs).filter((d) => d !== LATEST && fs.existsSync(path.join(runs, d, "run.json"))).sort() : [];
    if (!all.length) throw new LabError(`no runs in ${runs} yet: run 'make lab' first`);
    dir = path.join(runs, all[all.length - 1]);
  }
  const file = path.join(dir, "run.json");
  if (!fs.existsSync(file)) throw new LabError(`no run.json in ${dir}: give a run id from ${runs}, a run folder, or latest`);
  try {
    return { dir, record: readRunRecord(file) };
  } catch (err) {
    // A run.json that is not JSON or not a run record is not trusted for anything: exit 3 (the lab cannot tell).
    throw new LabError(`${(err as Error).message}\nrun.json is corrupt: none of its verdicts are trusted and no report was written`, 3);
  }
}
