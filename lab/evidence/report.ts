// Verdict table for the terminal, from results or from a run folder's run.json.
import fs from "node:fs";
import path from "node:path";
import { RUNS } from "../core/paths.ts";
import { readRunRecord, type RunRecord } from "./run.ts";
import { LabError } from "../core/log.ts";

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

/** The newest run folder, or the one named. */
export function findRun(id?: string): { dir: string; record: RunRecord } {
  let dir: string;
  if (id && (id.includes("/") || id.endsWith(".json"))) dir = id.endsWith(".json") ? path.dirname(id) : id;
  else if (id) dir = path.join(RUNS, id);
  else {
    const all = fs.existsSync(RUNS) ? fs.readdirSync(RUNS).filter((d) => fs.existsSync(path.join(RUNS, d, "run.json"))).sort() : [];
    if (!all.length) throw new LabError(`no runs in ${RUNS} yet: run 'make lab' first`);
    dir = path.join(RUNS, all[all.length - 1]);
  }
  const file = path.join(dir, "run.json");
  if (!fs.existsSync(file)) throw new LabError(`no run.json in ${dir}: give a run id from ${RUNS} or a run folder`);
  try {
    return { dir, record: readRunRecord(file) };
  } catch (err) {
    // A run.json that is not JSON or not a run record is not trusted for anything: exit 3 (the lab cannot tell).
    throw new LabError(`${(err as Error).message}\nrun.json is corrupt: none of its verdicts are trusted and no report was written`, 3);
  }
}
