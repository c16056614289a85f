// Evidence that outlives the run folder: for a finding seen in a run, a small trimmed excerpt
// kept in the repository (fixtures/findings/<id>.json, a few KB), which its record's
// `evidence` points to. It holds what the check observed and the lines and frames that show it:
//   - the scenario's log lines about that check;
//   - log lines of the lab's containers, and frames of its transcripts (tap and operator), that
//     carry one of the observed signature's telling strings (error codes, messages, commands),
//     within the scenario's time window;
// every text redacted (the topology's gateway token, values under credential keys) and cut.
//   fleetlab excerpt RUN [FINDING...]   (make excerpt RUN=<id or folder> [IDS="..."])
import fs from "node:fs";
import path from "node:path";
import { Redactor } from "../evidence/redact.ts";
import { TranscriptsLine, parseJsonLine } from "../evidence/records/index.ts";
import type { RunRecord } from "../evidence/run.ts";
import { ROOT } from "../paths.ts";

export const EXCERPTS_DIR = path.join(ROOT, "fixtures", "findings");
/** A finding id as a file name ("F-protocol-drift res connect auth.method" -> "F-protocol-drift-res-connect-auth.method"). */
export const excerptFile = (id: string): string => `${id.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/-+$/, "")}.json`;
/** Where a finding's excerpt lives, relative to the repository (what its record's evidence says). */
export const excerptPath = (id: string): string => path.join("fixtures", "findings", excerptFile(id));

/** Budget of one excerpt: it stays small enough to read in a review. */
const MAX = { scenarioLog: 8, logs: 12, frames: 6, line: 300, frame: 600, bytes: 8_000 };

export interface Excerpt {
  id: string;
  scenario: string;
  version: string;
  run: string;
  outcome: string;
  expectation: string;
  observed: unknown;
  /** Scenario log lines about this check. */
  scenarioLog: string[];
  /** Container log lines carrying one of the needles: "<file>: <line>". */
  logs: string[];
  /** Transcript frames carrying one of the needles (trimmed records). */
  frames: unknown[];
  /** What was searched for. */
  needles: string[];
}

/** The telling strings of an observed signature: string values of 5+ characters that are not placeholders, and error-code-like words. */
export function needlesOf(observed: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      const s = v.replace(/<(uuid|id|time|n)>/g, " ").trim();
      for (const code of s.match(/\b[A-Z][A-Z0-9_]{4,}\b/g) ?? []) out.add(code);
      for (const cmd of s.match(/\b[a-z]+(?:\.[a-zA-Z0-9]+){1,4}\b/g) ?? []) if (cmd.length >= 8) out.add(cmd);
      // a message: its longest run without placeholders, when long enough to be specific
      const part = s.split(/\s{2,}|[<>]/).sort((a, b) => b.length - a.length)[0] ?? "";
      if (part.length >= 12) out.add(part.slice(0, 60));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(observed);
  return [...out].slice(0, 8);
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

function* filesUnder(dir: string, ext: RegExp): Generator<string> {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* filesUnder(p, ext);
    else if (ext.test(e.name)) yield p;
  }
}

/** Build the excerpt of finding `id` as seen in the run at `runDir`. */
export function buildExcerpt(runDir: string, record: RunRecord, id: string, red = Redactor.ofProcess()): Excerpt {
  const check = (record.findings ?? []).find((c) => c.findingId === id && c.outcome !== "pass");
  if (!check) throw new Error(`run ${record.id} did not see finding ${id} (no known-finding or fail of it in run.json)`);
  const row = record.scenarios.find((s) => s.name === check.scenario);
  const scenarioDir = path.join(runDir, row?.evidence ?? path.join("scenarios", check.scenario));
  red.remember((record.topology as { gateway?: { token?: string } } | undefined)?.gateway?.token ?? "");
  const needles = needlesOf(check.observed);
  const from = row?.startedAt ? Date.parse(row.startedAt) : -Infinity;
  const to = row?.endedAt ? Date.parse(row.endedAt) : Infinity;

  const scenarioLog: string[] = [];
  const logFile = path.join(scenarioDir, "scenario.log");
  if (fs.existsSync(logFile)) for (const l of fs.readFileSync(logFile, "utf8").split("\n")) if (l.includes(id) && scenarioLog.length < MAX.scenarioLog) scenarioLog.push(cut(red.text(l), MAX.line));

  // The lab the scenario ran on: its own (inside its folder) or the shared one of the run.
  const labDirs = [path.join(scenarioDir, "lab"), ...fs.readdirSync(runDir).filter((d) => d.startsWith("shared-lab")).map((d) => path.join(runDir, d))].filter((d) => fs.existsSync(d));
  const own = fs.existsSync(path.join(scenarioDir, "lab"));
  const dirs = own ? [path.join(scenarioDir, "lab")] : labDirs;
  const logs: string[] = [];
  const frames: unknown[] = [];
  if (needles.length) {
    for (const d of dirs) {
      for (const f of filesUnder(path.join(d, "logs"), /\.log$/)) {
        for (const l of fs.readFileSync(f, "utf8").split("\n")) {
          if (logs.length >= MAX.logs) break;
          if (!needles.some((n) => l.includes(n))) continue;
          const t = Date.parse(l.slice(0, 30).match(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/)?.[0] ?? "");
          if (!own && Number.isFinite(t) && (t < from || t > to)) continue;
          logs.push(`${path.basename(f)}: ${cut(red.text(l), MAX.line)}`);
        }
      }
      for (const f of filesUnder(path.join(d, "transcripts"), /\.jsonl$/)) {
        for (const l of fs.readFileSync(f, "utf8").split("\n")) {
          if (frames.length >= MAX.frames) break;
          if (!l || !needles.some((n) => l.includes(n))) continue;
          const line = parseJsonLine(l, TranscriptsLine);
          if (!line) continue;
          const rec: Record<string, unknown> = line;
          const t = line.t;
          if (!own && Number.isFinite(t) && (t < from || t > to)) continue;
          const keep: Record<string, unknown> = { file: path.basename(f) };
          for (const k of ["seq", "t", "conn", "dir", "method", "event", "command", "replyTo", "errorCode", "errorDetailsCode"]) if (rec[k] !== undefined) keep[k] = rec[k];
          if (typeof rec.text === "string") keep.text = cut(red.jsonText(rec.text), MAX.frame);
          else if (rec.frame !== undefined) keep.frame = cut(red.text(JSON.stringify(rec.frame)), MAX.frame);
          frames.push(keep);
        }
      }
    }
  }
  const ex: Excerpt = {
    id,
    scenario: check.scenario,
    version: (record.topology as { openclawVersion?: string } | undefined)?.openclawVersion ?? "unknown",
    run: record.id,
    outcome: check.outcome,
    expectation: check.expectation,
    observed: red.value(check.observed),
    scenarioLog,
    logs,
    frames,
    needles,
  };
  // Within budget: drop frames, then log lines, from the end until it fits.
  while (JSON.stringify(ex, null, 2).length > MAX.bytes && (ex.frames.length || ex.logs.length)) {
    if (ex.frames.length) ex.frames.pop();
    else ex.logs.pop();
  }
  return ex;
}

/** Write excerpts for these findings (default: every finding the run saw) into fixtures/findings/. */
export function writeExcerpts(runDir: string, record: RunRecord, ids?: string[], outDir = EXCERPTS_DIR): { id: string; file: string; bytes: number }[] {
  const seen = [...new Set((record.findings ?? []).filter((c) => c.outcome !== "pass").map((c) => c.findingId))];
  const want = ids?.length ? ids : seen;
  fs.mkdirSync(outDir, { recursive: true });
  return want.map((id) => {
    // One Redactor for the whole excerpt, and a last pass over its text: a credential learnt from
    // a later frame is hidden in the log lines taken before it too.
    const red = Redactor.ofProcess();
    const ex = buildExcerpt(runDir, record, id, red);
    const file = path.join(outDir, excerptFile(id));
    const text = red.jsonText(JSON.stringify(ex, null, 2)) + "\n";
    fs.writeFileSync(file, text);
    return { id, file, bytes: text.length };
  });
}
