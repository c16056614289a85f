// The docs' findings, written from the finding records so they cannot drift from them: the
// README's list (one line per scenario that has records) and findings.md's table (one row per
// record). Each sits between `<!-- generated: NAME ... -->` and `<!-- /generated -->`; the rest
// of the file is a person's. `make findings-docs` writes them (scenarios/findings-docs.ts);
// lab/findings/docs.test.ts fails when the committed text differs.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../core/paths.ts";
import { excerptFile, type Excerpt } from "./excerpt.ts";
import { namedVersions, type FindingRecord } from "./findings.ts";
import { compareVersions } from "./versions.ts";

/** A scenario's records, as the generator reads them. */
export interface RecordsOf {
  scenario: string;
  /** The scenario's one line: what it proves. */
  proves: string;
  findings: FindingRecord[];
}

/** The command that writes the generated parts, named in every marker and in the test's message. */
export const REFRESH = "make findings-docs";

const KIND: Record<FindingRecord["kind"], [string, string]> = {
  shortfall: ["shortfall", "shortfalls"],
  "differs-from-reference": ["difference from the reference", "differences from the reference"],
};

const count = (n: number, kind: FindingRecord["kind"]) => `${n} ${KIND[kind][n === 1 ? 0 : 1]}`;

/** The versions a set of records names, oldest first. */
function versionsOf(records: FindingRecord[]): string[] {
  return [...new Set(records.flatMap(namedVersions))].sort(compareVersions);
}

/**
 * The upstream report a repro's line names, and the rest of the line: at its start
 * ("openclaw#155333: ...", "openclaw PR #115539 (regression): ...") or at its end ("... (openclaw/openclaw#82590)").
 */
export function upstreamOf(proves: string): [string | undefined, string] {
  const head = /^(openclaw(?: PRs?)? ?#[\d/#]+(?: ?\([^)]*\))?): (.*)$/s.exec(proves);
  if (head) return [head[1], head[2]!];
  const tail = /^(.*?)\s*\((openclaw\/openclaw#[^)]*)\)$/s.exec(proves);
  if (tail) return [tail[2]!.replace("openclaw/openclaw#", "openclaw#"), tail[1]!];
  return [undefined, proves];
}

/** Inline code that may itself hold backticks (a quoted error text): fenced by more backticks than it holds. */
function code(s: string): string {
  const run = Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(run + 1);
  return run ? `${fence} ${s} ${fence}` : `${fence}${s}${fence}`;
}

/** The README's list: one line per scenario with registered findings (field-bug repros first), then the lab-wide records in one line. */
export function readmeList(scenarios: RecordsOf[], labWide: FindingRecord[]): string {
  const withRecords = scenarios.filter((s) => s.findings.length);
  const repro = (s: RecordsOf) => (s.scenario.startsWith("repro-") ? 0 : 1);
  const lines = [...withRecords]
    .sort((a, b) => repro(a) - repro(b) || a.scenario.localeCompare(b.scenario, "en", { numeric: true }))
    .map((s) => {
      const kinds = (["shortfall", "differs-from-reference"] as const).map((k) => [k, s.findings.filter((f) => f.kind === k).length] as const).filter(([, n]) => n);
      const [upstream, expects] = upstreamOf(s.proves);
      return `- \`${s.scenario}\` (${upstream ? `${upstream}; ` : ""}${versionsOf(s.findings).join(", ")}), ${kinds.map(([k, n]) => count(n, k)).join(", ")}. Expected: ${expects}`;
    });
  if (labWide.length) {
    const fields = labWide.map((f) => {
      const sig = f.signature as { frame?: string; path?: string };
      return sig.frame && sig.path ? `${sig.frame} ${sig.path}` : f.id;
    });
    lines.push(`- Protocol drift in every scenario's frames (${versionsOf(labWide).join(", ")}), ${count(labWide.length, "differs-from-reference")}: fields OpenClaw's published protocol schema forbids, ${fields.map((x) => `\`${x}\``).join(", ")}`);
  }
  return lines.join("\n");
}

const cell = (s: string) => s.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");

/** A record's versions: those it was seen on, and each variant's range with its note. */
function versionsCell(f: FindingRecord): string {
  const variants = (f.variants ?? []).map((v) => `variant \`${v.versions}\`${v.note ? `: ${v.note}` : ""}`);
  return cell([[...f.versions].sort(compareVersions).join(", "), ...variants].join("; "));
}

/** The excerpt a record's evidence points to, when it is committed. */
export function readExcerpt(id: string, root = ROOT): Excerpt | undefined {
  const file = path.join(root, "fixtures", "findings", excerptFile(id));
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Excerpt) : undefined;
}

/** findings.md's table: one row per record, by id, with its excerpt (where the run id is kept). */
export function findingsTable(scenarios: RecordsOf[], labWide: FindingRecord[], excerpt: (id: string) => Excerpt | undefined = readExcerpt): string {
  const rows = [
    ...scenarios.flatMap((s) => s.findings.map((f) => ({ f, where: `\`${s.scenario}\`` }))),
    ...labWide.map((f) => ({ f, where: `lab-wide${excerpt(f.id) ? ` (excerpt from \`${excerpt(f.id)!.scenario}\`)` : ""}` })),
  ].sort((a, b) => a.f.id.localeCompare(b.f.id, "en"));
  const out = ["| finding | scenario | kind | versions | expected | observed instead (its signature) | evidence |", "|---|---|---|---|---|---|---|"];
  for (const { f, where } of rows) {
    const ex = excerpt(f.id);
    const evidence = ex ? `[excerpt](../../fixtures/findings/${excerptFile(f.id)}) (${ex.version})` : cell(f.evidence);
    out.push(`| \`${f.id}\` | ${where} | ${f.kind === "shortfall" ? "shortfall" : "differs from reference"} | ${versionsCell(f)} | ${cell(f.expectation)} | ${code(cell(JSON.stringify(f.signature)))} | ${evidence} |`);
  }
  return out.join("\n");
}

/** The generated parts of a file: name -> body (between the marker lines, without them). */
export function generatedParts(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^<!-- generated: (\S+)[^\n]*-->\n([\s\S]*?)^<!-- \/generated -->$/gm)].map((m) => [m[1]!, m[2]!.replace(/\n$/, "")]));
}

/** The text with each named part's body replaced; a part that has no markers in the text is an Error naming them. */
export function writeParts(text: string, parts: Record<string, string>, file: string): string {
  let out = text;
  for (const [name, body] of Object.entries(parts)) {
    const re = new RegExp(`^(<!-- generated: ${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b[^\\n]*-->\\n)[\\s\\S]*?^(<!-- /generated -->)$`, "m");
    if (!re.test(out)) throw new Error(`${file}: no <!-- generated: ${name} --> ... <!-- /generated --> markers to write between`);
    out = out.replace(re, (_m, open: string, close: string) => `${open}${body}\n${close}`);
  }
  return out;
}

/** Every file with generated findings and what goes in it. */
export function findingsDocs(scenarios: RecordsOf[], labWide: FindingRecord[], excerpt?: (id: string) => Excerpt | undefined): Record<string, Record<string, string>> {
  return {
    "README.md": { findings: readmeList(scenarios, labWide) },
    "docs/reference/findings.md": { "findings-table": findingsTable(scenarios, labWide, excerpt) },
  };
}
