// The stability run: the suite N rounds on the same code and the same OpenClaw, and a table per
// scenario of what it read each time (after the flake tables of CockroachDB's roachtest nightly
// and Kubernetes' testgrid). A verdict is only worth reading if it comes out the same every
// time; this table says which ones do not, and where they moved.
//
//   fleetlab soak [scenario...] --rounds 5        (make soak ROUNDS=5 [SCENARIOS=...] [SHARD=K/N])
//   fleetlab soak --from DIR...                   the table again from soak folders or run folders
//
// Each round is a normal run (its own run folder under .lab/runs, own labs fresh each time,
// the shared lab as in a full run, lanes as configured, SHARD applied); the soak folder
// (.lab/runs/soak-<id>/) keeps soak.json (the rounds' run ids and the table), soak.md and
// soak.html, rewritten after every round so an interrupted soak keeps what it saw.
//
// Per scenario: how many rounds it ran, its verdict counts, each check's distinct signatures
// with their counts ("holds" when it held; the outcome and the observed value otherwise; "not
// judged" for a round that never reached the check; a lab-wide record absent from a round is no
// reading: it shows only where frames that carry it pass), and time min / median / max. A scenario
// "moved" when its verdict or any check's signature took more than one value.
import fs from "node:fs";
import path from "node:path";
import type { CheckResult } from "../findings/findings.ts";
import { exitCodeOf, type Verdict } from "../definitions/verdict.ts";
import type { z } from "zod";
import { SCHEMA_VERSION, type SoakDocument } from "./json.ts";
import { LabError } from "../core/log.ts";
import { RUNS } from "../core/paths.ts";
import { readRunRecord } from "../evidence/run.ts";

/** What the table needs of one scenario's result (a ScenarioResult, or a run folder's verdict.json). */
export interface SoakInput {
  name: string;
  verdict: Verdict | string;
  seconds: number;
  checks: Pick<CheckResult, "findingId" | "outcome" | "observed" | "variant" | "scope">[];
}

export interface SoakRound {
  /** The run id of the round (or the folder it was read from). */
  run: string;
  results: SoakInput[];
}

export interface SoakCheckRow {
  id: string;
  signatures: { signature: string; count: number }[];
}

export interface SoakRow {
  scenario: string;
  rounds: number;
  verdicts: Record<string, number>;
  checks: SoakCheckRow[];
  seconds: { min: number; median: number; max: number };
  /** Its verdict or a check's signature took more than one value. */
  moved: boolean;
  /** The rounds (run ids) of each verdict, for the reader to open. */
  runsByVerdict: Record<string, string[]>;
}

/** An attempt of `make repro` (`name~03`) or a plain name: the scenario. */
export const scenarioOf = (name: string): string => name.replace(/~\d+$/, "");

/** JSON with object keys sorted, so the same value gives the same text whatever order it was built in. */
export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}

/** What a check read, as one comparable text: "holds", or its outcome (and variant) with the observed value. */
export function signatureOf(c: SoakInput["checks"][number]): string {
  if (c.outcome === "pass") return "holds";
  // A registered finding that did not show: the check held.
  if (c.outcome === "fixed?") return "holds (fixed?)";
  const variant = c.variant ? ` [variant ${c.variant}]` : "";
  return `${c.outcome}${variant}: ${c.observed === undefined ? "(nothing observed)" : stableJson(c.observed)}`;
}

/** The checks a stability table compares: the scenario's own, and a lab-wide one only when it did not pass. */
const counted = (c: SoakInput["checks"][number]) => c.scope !== "lab" || c.outcome !== "pass";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : Math.round(((s[m - 1]! + s[m]!) / 2) * 10) / 10;
}

/** The table: one row per scenario, in the order first seen. */
export function soakTable(rounds: SoakRound[]): SoakRow[] {
  const by = new Map<string, { run: string; r: SoakInput }[]>();
  for (const round of rounds) for (const r of round.results) by.set(scenarioOf(r.name), [...(by.get(scenarioOf(r.name)) ?? []), { run: round.run, r }]);
  const rows: SoakRow[] = [];
  for (const [scenario, seen] of by) {
    const verdicts: Record<string, number> = {};
    const runsByVerdict: Record<string, string[]> = {};
    for (const { run, r } of seen) {
      verdicts[r.verdict] = (verdicts[r.verdict] ?? 0) + 1;
      (runsByVerdict[r.verdict] ??= []).push(run);
    }
    const ids = [...new Set(seen.flatMap(({ r }) => r.checks.filter(counted).map((c) => c.findingId)))];
    const labWide = new Set(seen.flatMap(({ r }) => r.checks.filter((c) => c.scope === "lab").map((c) => c.findingId)));
    const checks = ids.map((id) => {
      const sigs = new Map<string, number>();
      for (const { r } of seen) {
        // Every reading of a chosen check counts, a lab-wide one's pass too ("holds", not "not judged").
        const mine = r.checks.filter((c) => c.findingId === id);
        // A lab-wide record is judged only where frames that carry it pass (protocol drift in a
        // field a health snapshot sends now and then): a round without it is no reading.
        if (!mine.length && labWide.has(id)) continue;
        // A check judged twice in one round (a lab-wide one per member) counts once per distinct reading.
        const texts = mine.length ? [...new Set(mine.map(signatureOf))] : ["not judged"];
        for (const t of texts) sigs.set(t, (sigs.get(t) ?? 0) + 1);
      }
      return { id, signatures: [...sigs].map(([signature, count]) => ({ signature, count })).sort((a, b) => b.count - a.count) };
    });
    const secs = seen.map(({ r }) => Math.round(r.seconds * 10) / 10);
    rows.push({
      scenario,
      rounds: seen.length,
      verdicts,
      checks,
      seconds: { min: Math.min(...secs), median: median(secs), max: Math.max(...secs) },
      moved: Object.keys(verdicts).length > 1 || checks.some((c) => c.signatures.length > 1),
      runsByVerdict,
    });
  }
  return rows;
}

/** "5 round(s)", or, over shards (each scenario in some of the run folders), "5 round(s) per scenario, from 20 run folder(s)". */
function roundsText(rows: SoakRow[], folders: number): string {
  const most = Math.max(0, ...rows.map((r) => r.rounds));
  return most === folders ? `${folders} round(s)` : `${most} round(s) per scenario at most, from ${folders} run folder(s)`;
}

const verdictText = (v: Record<string, number>) =>
  Object.entries(v)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

/** The table as markdown: moved scenarios first, then every row; below, each moved scenario's checks. */
export function soakMarkdown(rows: SoakRow[], about: { rounds: string[]; version: string; title?: string }): string {
  const moved = rows.filter((r) => r.moved);
  const ordered = [...moved, ...rows.filter((r) => !r.moved)];
  const out = [
    `# ${about.title ?? "Stability"}: openclaw@${about.version}, ${roundsText(rows, about.rounds.length)}`,
    "",
    `${rows.length} scenario(s); ${moved.length ? `**${moved.length} moved** (verdict or a check's signature took more than one value): ${moved.map((r) => r.scenario).join(", ")}` : "none moved: every scenario read the same verdict and the same signatures in every round it ran"}.`,
    "",
    "| scenario | rounds | verdicts | moved | seconds min / median / max |",
    "|---|---|---|---|---|",
    ...ordered.map((r) => `| \`${r.scenario}\` | ${r.rounds} | ${verdictText(r.verdicts)} | ${r.moved ? "**moved**" : "-"} | ${r.seconds.min} / ${r.seconds.median} / ${r.seconds.max} |`),
  ];
  for (const r of moved) {
    out.push("", `## ${r.scenario}`, "");
    for (const [v, runs] of Object.entries(r.runsByVerdict)) out.push(`- ${v}: ${runs.join(", ")}`);
    for (const c of r.checks.filter((x) => x.signatures.length > 1)) {
      out.push(`- \`${c.id}\`:`);
      for (const s of c.signatures) out.push(`  - ${s.count}x \`${s.signature.length > 400 ? `${s.signature.slice(0, 400)}...` : s.signature}\``);
    }
  }
  out.push("", `Rounds: ${about.rounds.join(", ")}`);
  return out.join("\n") + "\n";
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** The same table as a page of its own (soak.html). */
export function soakHtml(rows: SoakRow[], about: { rounds: string[]; version: string }): string {
  const moved = rows.filter((r) => r.moved);
  const ordered = [...moved, ...rows.filter((r) => !r.moved)];
  const tr = (r: SoakRow) =>
    `<tr class="${r.moved ? "moved" : ""}"><td>${esc(r.scenario)}</td><td>${r.rounds}</td><td>${esc(verdictText(r.verdicts))}</td><td>${r.moved ? "moved" : "-"}</td><td>${r.seconds.min} / ${r.seconds.median} / ${r.seconds.max}</td></tr>` +
    (r.moved
      ? `<tr class="detail"><td colspan="5"><ul>${Object.entries(r.runsByVerdict)
          .map(([v, runs]) => `<li>${esc(v)}: ${esc(runs.join(", "))}</li>`)
          .join("")}${r.checks
          .filter((c) => c.signatures.length > 1)
          .map((c) => `<li><code>${esc(c.id)}</code><ul>${c.signatures.map((s) => `<li>${s.count}x <code>${esc(s.signature)}</code></li>`).join("")}</ul></li>`)
          .join("")}</ul></td></tr>`
      : "");
  return `<!doctype html><html><head><meta charset="utf-8"><title>fleetlab stability: openclaw@${esc(about.version)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}tr.moved td{background:#fff3cd}tr.detail td{background:#fafafa}code{font-size:12px}</style></head><body>
<h1>Stability: openclaw@${esc(about.version)}, ${esc(roundsText(rows, about.rounds.length))}</h1>
<p>${rows.length} scenario(s); ${moved.length ? `<b>${moved.length} moved</b>: ${esc(moved.map((r) => r.scenario).join(", "))}` : "none moved"}.</p>
<table><tr><th>scenario</th><th>rounds</th><th>verdicts</th><th>moved</th><th>seconds min / median / max</th></tr>${ordered.map(tr).join("")}</table>
<p>Rounds: ${esc(about.rounds.join(", "))}</p></body></html>\n`;
}

/** One run folder as a round: run.json's scenarios and each one's verdict.json checks. */
export function roundFromRunDir(dir: string): SoakRound & { version: string } {
  const rec = readRunRecord(path.join(dir, "run.json"));
  const results: SoakInput[] = rec.scenarios.map((s) => {
    const vf = path.join(dir, s.evidence ?? path.join("scenarios", s.name), "verdict.json");
    const checks = fs.existsSync(vf) ? ((JSON.parse(fs.readFileSync(vf, "utf8")) as { checks?: SoakInput["checks"] }).checks ?? []) : [];
    return { name: s.name, verdict: s.verdict, seconds: s.seconds, checks };
  });
  const version = (rec.topology as { openclawVersion?: unknown } | undefined)?.openclawVersion;
  return { run: rec.id, results, version: typeof version === "string" ? version : "?" };
}

/** What a soak folder records. */
export interface SoakRecord {
  id: string;
  startedAt: string;
  endedAt?: string;
  version: string;
  asked: number;
  scenarios: string[];
  shard?: string;
  /** Run ids of the rounds made, in order. */
  rounds: string[];
  table: SoakRow[];
}

/** soak.json, soak.md and soak.html in `dir`; returns the markdown. */
export function writeSoak(dir: string, rec: SoakRecord): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "soak.json"), JSON.stringify(rec, null, 2) + "\n");
  const md = soakMarkdown(rec.table, { rounds: rec.rounds, version: rec.version });
  fs.writeFileSync(path.join(dir, "soak.md"), md);
  fs.writeFileSync(path.join(dir, "soak.html"), soakHtml(rec.table, { rounds: rec.rounds, version: rec.version }));
  return md;
}

/** The run folders `soak --from` names (soak folders, run folders or run ids), each checked to be there. */
export function soakFromDirs(args: string[], runs = RUNS): string[] {
  if (!args.length) throw new LabError("soak --from needs soak folders, run folders or run ids: fleetlab soak --from .lab/runs/soak-<id> .lab/runs/<run id>");
  const dirs = args.flatMap((a) => {
    const d = fs.existsSync(a) ? a : path.join(runs, a);
    // A soak folder's rounds are run folders beside it (an artifact copied from a runner), else in .lab/runs.
    if (fs.existsSync(path.join(d, "soak.json"))) return (JSON.parse(fs.readFileSync(path.join(d, "soak.json"), "utf8")) as SoakRecord).rounds.map((r) => (fs.existsSync(path.join(path.dirname(d), r, "run.json")) ? path.join(path.dirname(d), r) : path.join(runs, r)));
    if (fs.existsSync(path.join(d, "run.json"))) return [d];
    throw new LabError(`soak --from ${a}: neither a soak folder (soak.json) nor a run folder (run.json), in the working directory or in ${runs}`);
  });
  for (const d of dirs) if (!fs.existsSync(path.join(d, "run.json"))) throw new LabError(`soak --from: round ${d} is gone (no run.json): it was pruned or never copied here`);
  return dirs;
}

/** `soak`'s exit code from its table: the verdicts' code (1 a fail, 3 an unknown), else 1 when a scenario moved, else 0. */
export function soakExitCode(rec: Pick<SoakRecord, "table">): number {
  return exitCodeOf(rec.table.flatMap((r) => Object.keys(r.verdicts) as Verdict[])) || (rec.table.some((r) => r.moved) ? 1 : 0);
}

/** `soak --json` (lab/commands/json.ts): soak.json's rows, in the order of the table. */
export function soakDocument(rec: SoakRecord, dir: string): z.infer<typeof SoakDocument> {
  return {
    schemaVersion: SCHEMA_VERSION,
    command: "soak",
    exitCode: soakExitCode(rec),
    id: rec.id,
    dir,
    startedAt: rec.startedAt,
    ...(rec.endedAt ? { endedAt: rec.endedAt } : {}),
    version: rec.version,
    asked: rec.asked,
    rounds: rec.rounds,
    ...(rec.shard ? { shard: rec.shard } : {}),
    rows: rec.table.map((r) => ({ scenario: r.scenario, rounds: r.rounds, verdicts: r.verdicts, moved: r.moved, seconds: r.seconds, checks: r.checks, runsByVerdict: r.runsByVerdict })),
  };
}
