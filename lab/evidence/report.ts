// Verdict table for the terminal, from results or from a run folder's run.json.
import fs from "node:fs";
import path from "node:path";
import { RUNS } from "../paths.ts";
import { readRunRecord, type RunRecord } from "./run.ts";
import { LabError } from "../log.ts";

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
    lines.push(`${r.name.padEnd(w)}  ${r.verdict.toUpperCase().padEnd(13)}  ${`${r.seconds.toFixed(1)} s`.padStart(7)}  ${detail}`);
  }
  const count = (v: string) => rows.filter((r) => r.verdict === v).length;
  lines.push("", `${rows.length} scenario(s): ${count("pass")} pass, ${count("fail")} fail, ${count("unknown")} unknown, ${count("known-finding")} known finding`);
  return lines.join("\n");
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
  return { dir, record: readRunRecord(file) };
}
