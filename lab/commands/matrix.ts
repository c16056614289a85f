// The version matrix: the same scenarios on each OpenClaw version, one run per version (its
// images built once, then cached by version like any other), and a scenario x version table
// of verdicts with the findings behind each cell, saved as matrix.json. A finding record lists
// the versions it was observed on, so a row reads where a bug appeared (known finding, with the
// variant that matched when the record has a signature per version range), where it went away
// ("fixed?"), and where it had not come yet ("not affected": a version older than every version
// the record names); a scenario the version cannot host reads "n/a" with why.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LabError } from "../core/log.ts";
import type { ScenarioResult } from "../run/runner.ts";
import { classify, matchedName } from "./repro.ts";
import { isPackagePath, resolveBuild, type Build } from "../definitions/build.ts";
import { exitCodeOf, type Verdict } from "../definitions/verdict.ts";
import { SCHEMA_VERSION, type MatrixDocument } from "./json.ts";

/** Published release versions (no pre-releases), oldest first, as npm lists them. */
export function releases(all: string[]): string[] {
  return all.filter((v) => /^\d+\.\d+\.\d+$/.test(v));
}


/**
 * VERSIONS as given: exact versions ("2026.9.4 2026.9.6"), `newest`, `lastN` (the N newest
 * releases, oldest first), or the path of a package of one's own (a .tgz from npm pack / pnpm
 * pack, or a folder holding one), which stands in the table as its build name. Every exact
 * version must be published.
 */
export function resolveVersions(text: string, published: string[] | undefined, resolve: (p: string) => Build = resolveBuild): string[] {
  const words = text.split(/[\s,]+/).filter(Boolean);
  if (!words.length) throw new LabError(`VERSIONS is empty: give exact versions ("2026.9.4 2026.9.6"), newest, or lastN (e.g. last3)`);
  const out: string[] = [];
  for (const w of words) {
    if (isPackagePath(w)) {
      out.push(resolve(w).label); // bad input: one line, exit 2 (lab/definitions/build.ts)
      continue;
    }
    const last = /^last(\d+)$/.exec(w);
    if (w === "newest" || last) {
      if (!published) throw new LabError(`VERSIONS=${w} needs the list of published versions, and npm could not be asked: give exact versions`);
      const rel = releases(published);
      const n = last ? Number(last[1]) : 1;
      if (n < 1) throw new LabError(`VERSIONS=${w}: the count must be at least 1`);
      out.push(...rel.slice(-n));
      continue;
    }
    if (!/^\d+\.\d+\.\d+([-.][0-9A-Za-z.-]+)?$/.test(w)) throw new LabError(`VERSIONS: '${w}' is not an exact version, newest, lastN or a package's path (e.g. 2026.9.6, last3, ./openclaw-2026.9.6.tgz)`);
    if (published && !published.includes(w)) {
      const rel = releases(published).slice(-5);
      throw new LabError(`VERSIONS: openclaw@${w} is not published.${rel.length ? ` Recent versions: ${rel.join(", ")}.` : ""}`);
    }
    out.push(w);
  }
  return [...new Set(out)];
}

export const MatrixCell = z.object({
  verdict: z.string(),
  seconds: z.number(),
  detail: z.string().optional(),
  /** Finding ids judged not "pass" in this cell, with their outcome ("known-finding F-x"). */
  findings: z.array(z.string()),
  /** The run folder of this version, relative to the matrix folder's parent (.lab/runs). */
  run: z.string(),
  evidence: z.string().optional(),
  /** For a scenario with bug checks (a repro): what the cell showed of the bug (lab/commands/repro.ts classify). */
  bug: z.object({ class: z.string(), why: z.string().optional() }).optional(),
  /** Known findings of records with several signatures: finding id -> the variant that matched ("base" or its version range). */
  variants: z.record(z.string(), z.string()).optional(),
  /** Findings whose check held on a version older than every version their record names: the bug came later. */
  notAffected: z.array(z.string()).optional(),
});
export const MatrixRecord = z.object({
  id: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  versions: z.array(z.string()),
  scenarios: z.array(z.string()),
  /** cells[scenario][version] */
  cells: z.record(z.string(), z.record(z.string(), MatrixCell)),
  /** The columns that are builds of one's own (OPENCLAW_PACKAGE): name -> where it came from and its sha256. */
  builds: z.record(z.string(), z.object({ source: z.string(), sha256: z.string() })).optional(),
  /** Per version: its run id, or why it did not run. */
  runs: z.record(z.string(), z.object({ run: z.string().optional(), error: z.string().optional(), seconds: z.number().optional() })),
});
export type MatrixRecord = z.infer<typeof MatrixRecord>;
export type MatrixCell = z.infer<typeof MatrixCell>;

/**
 * The bug checks a cell is classed by: the scenario's own (bugChecks); for a repro that declares
 * none and has no registered finding, every check of its own that the cell judged, so its cell
 * still has a class ("not reproduced" when each held, "new signature" when one fell short).
 */
export function cellBugChecks(r: Pick<ScenarioResult, "checks">, declared: string[], isRepro: boolean): string[] {
  if (declared.length || !isRepro) return declared;
  return [...new Set(r.checks.filter((c) => c.scope !== "lab" && c.source !== "evidence").map((c) => c.findingId))];
}

export function cellOf(r: ScenarioResult, runId: string, bug: string[] = []): MatrixCell {
  const own = r.checks.filter((c) => c.scope !== "lab");
  const findings = own.filter((c) => c.outcome !== "pass").map((c) => `${c.outcome} ${c.outcome === "known-finding" ? matchedName(c) : c.findingId}`);
  const shown = bug.length ? classify(r.verdict, r.checks, bug, r.failedSteps) : undefined;
  const variants = Object.fromEntries(own.filter((c) => c.outcome === "known-finding" && c.variant).map((c) => [c.findingId, c.variant!]));
  const notAffected = own.filter((c) => c.notAffected).map((c) => c.findingId);
  return {
    verdict: r.verdict,
    seconds: r.seconds,
    detail: r.detail,
    findings,
    run: runId,
    evidence: r.evidence,
    ...(shown ? { bug: shown } : {}),
    ...(Object.keys(variants).length ? { variants } : {}),
    ...(notAffected.length ? { notAffected } : {}),
  };
}

const SHORT: Record<string, string> = { pass: "pass", fail: "FAIL", unknown: "unknown", "known-finding": "known", "fixed?": "fixed?", "n/a": "n/a" };

/** What a cell shows: its verdict, except a pass whose registered bug had not come yet on that version. */
export function cellText(c: MatrixCell | undefined): string {
  if (!c) return "-";
  if (c.verdict === "pass" && c.notAffected?.length) return "not affected";
  // A repro whose record is differs-from-reference: what OpenClaw documents, not the bug (repro.ts classify).
  if (c.bug?.class === "differs from reference") return "differs";
  return SHORT[c.verdict] ?? c.verdict;
}

/** The scenario x version table for the terminal (and the README); "-" where a version never got to a scenario. */
export function matrixTable(m: Pick<MatrixRecord, "versions" | "scenarios" | "cells" | "builds">): string {
  const w = Math.max(8, ...m.scenarios.map((s) => s.length));
  const texts = m.scenarios.map((s) => m.versions.map((v) => cellText(m.cells[s]?.[v])));
  const cw = Math.max(9, ...m.versions.map((v) => v.length), ...texts.flat().map((t) => t.length));
  const head = `${"scenario".padEnd(w)}  ${m.versions.map((v) => v.padEnd(cw)).join("  ")}`;
  const lines = [head, `${"-".repeat(w)}  ${m.versions.map(() => "-".repeat(cw)).join("  ")}`];
  for (const [i, s] of m.scenarios.entries()) lines.push(`${s.padEnd(w)}  ${texts[i]!.map((t) => t.padEnd(cw)).join("  ")}`);
  const notes: string[] = [];
  for (const s of m.scenarios) {
    for (const v of m.versions) {
      const c = m.cells[s]?.[v];
      if (!c) continue;
      if (c.verdict === "pass") {
        if (c.notAffected?.length) notes.push(`  ${s} @ ${v}: not affected: ${c.notAffected.join(", ")} (older than every version the record names; the check holds)`);
        continue;
      }
      const what = c.findings.length ? c.findings.join(", ") : (c.detail ?? "").split("\n")[0]!.slice(0, 160);
      notes.push(`  ${s} @ ${v}: ${c.verdict}${what ? `: ${what}` : ""}`);
    }
  }
  lines.push(
    "",
    "known = known finding (the registered bug, as registered; [variant R] = the signature registered for versions R); differs = a repro's differs-from-reference record matched (what OpenClaw documents, or a reference harness does otherwise: not the bug); fixed? = a registered finding did not show on a version it names or a newer one; not affected = it did not show on a version older than every version its record names (a regression that came later); n/a = the version lacks what the scenario needs",
  );
  const builds = Object.entries(m.builds ?? {});
  if (builds.length) lines.push("", "builds (your own packages; judged on their version, never the published one):", ...builds.map(([v, b]) => `  ${v} = ${b.source} (sha256 ${b.sha256.slice(0, 16)}...)`));
  if (notes.length) lines.push("", "cells other than pass:", ...notes);
  return lines.join("\n");
}

export function writeMatrix(dir: string, m: MatrixRecord): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "matrix.json");
  fs.writeFileSync(file, JSON.stringify(MatrixRecord.parse(m), null, 2) + "\n");
  fs.writeFileSync(path.join(dir, "matrix.txt"), matrixTable(m) + "\n");
  return file;
}

/** `matrix`'s exit code from matrix.json: the cells' verdicts (1 a fail, 3 an unknown), else 3 when a version could not run, else 0. */
export function matrixExitCode(m: Pick<MatrixRecord, "versions" | "cells" | "runs">): number {
  const all = Object.values(m.cells).flatMap((row) => Object.values(row).map((c) => c.verdict as Verdict));
  return exitCodeOf(all) || (m.versions.some((v) => m.runs[v]?.error) ? 3 : 0);
}

/** `matrix --json` (lab/commands/json.ts): matrix.json's cells, scenario by scenario in the table's order, and each version's run. */
export function matrixDocument(m: MatrixRecord, dir: string): z.infer<typeof MatrixDocument> {
  const cells = m.scenarios.flatMap((scenario) =>
    m.versions.flatMap((version) => {
      const c = m.cells[scenario]?.[version];
      if (!c) return [];
      type Cell = z.infer<typeof MatrixDocument>["cells"][number];
      const { bug, verdict, ...rest } = c;
      return [{ scenario, version, ...rest, verdict: verdict as Cell["verdict"], ...(bug ? { bug: bug as NonNullable<Cell["bug"]> } : {}) }];
    }),
  );
  return {
    schemaVersion: SCHEMA_VERSION,
    command: "matrix",
    exitCode: matrixExitCode(m),
    id: m.id,
    dir,
    startedAt: m.startedAt,
    ...(m.endedAt ? { endedAt: m.endedAt } : {}),
    versions: m.versions,
    scenarios: m.scenarios,
    cells,
    runs: m.versions.map((version) => ({ version, ...m.runs[version] })),
    ...(m.builds ? { builds: m.builds } : {}),
  };
}
