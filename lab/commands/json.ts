// The machine-readable output of every command that prints a table (`--json`): `list`, `run`,
// `report`, `repro`, `matrix`, `soak`, `merge` and `bisect` print one JSON document on stdout and nothing
// else (progress and the tables go to stderr), with the exit code they have without --json. The
// documents' one schema is here (zod); docs/reference/json.md describes it. Each document is a
// pure function of what the command stored (run.json, matrix.json, soak.json, bisect.json; the builders are
// here and beside each command), so a test that parses the document built from a stored record
// covers what the command prints. `schemaVersion` changes when a field changes meaning or goes;
// a field may be added within a version.
import path from "node:path";
import { z } from "zod";
import type { MergeResult } from "../evidence/merge.ts";
import { exitCodeOf, type Verdict } from "../definitions/verdict.ts";
import { NOT_RUN, reportRows, runExitCode, runProblems } from "../evidence/report.ts";
import type { RunRecord } from "../evidence/run.ts";

export const SCHEMA_VERSION = 1;

const VERDICTS = ["pass", "fail", "unknown", "known-finding", "fixed?", "n/a"] as const;
export const JsonVerdict = z.enum(VERDICTS);

/** One finding a scenario's checks judged other than pass (run.json's findings). */
export const JsonFinding = z.strictObject({
  id: z.string(),
  outcome: z.enum(["fail", "known-finding", "fixed?", "pass"]),
  kind: z.enum(["shortfall", "differs-from-reference"]),
  expectation: z.string(),
  observed: z.unknown().optional(),
});

/** One row of the verdict table. */
export const JsonScenario = z.strictObject({
  name: z.string(),
  /** A planned scenario a cut run never reached reads "not run" (never a pass). */
  verdict: z.enum([...VERDICTS, NOT_RUN]),
  seconds: z.number(),
  detail: z.string().optional(),
  /** Its evidence folder, relative to the run folder. */
  evidence: z.string().optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  findings: z.array(JsonFinding),
});

const Counts = z.strictObject({
  total: z.number().int(),
  pass: z.number().int(),
  fail: z.number().int(),
  unknown: z.number().int(),
  knownFinding: z.number().int(),
  fixed: z.number().int(),
  na: z.number().int(),
  notRun: z.number().int(),
});

/** A run folder as `run` and `report` print it: the verdict table, the findings, where the evidence is. */
export const JsonRun = z.strictObject({
  id: z.string(),
  /** The run folder, as the command was given it or made it. */
  dir: z.string(),
  seed: z.number().int(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  /** What was under test: the version, and a build's source and sha256 when it was one. */
  openclaw: z.strictObject({ version: z.string().optional(), build: z.strictObject({ source: z.string(), sha256: z.string().optional() }).optional() }),
  shard: z.strictObject({ index: z.number().int(), total: z.number().int() }).optional(),
  /** Empty when the run ended and ran every planned scenario; otherwise what makes it partial. */
  problems: z.array(z.string()),
  counts: Counts,
  scenarios: z.array(JsonScenario),
  /** Finding records no check judged in this run (a scenario's own, or lab-wide without one). */
  unexercised: z.array(z.strictObject({ id: z.string(), scenario: z.string().optional() })),
  report: z.string(),
  junit: z.string(),
});

const base = { schemaVersion: z.literal(SCHEMA_VERSION), exitCode: z.number().int() };

export const ListDocument = z.strictObject({
  ...base,
  command: z.literal("list"),
  scenarios: z.array(z.strictObject({ name: z.string(), topology: z.enum(["shared", "own"]), proves: z.string() })),
});

export const RunDocument = z.strictObject({ ...base, command: z.enum(["run", "report"]), run: JsonRun });

const AttemptClass = z.enum(["reproduced", "differs from reference", "new signature", "failed otherwise", "not reproduced", "could not tell"]);

export const ReproDocument = z.strictObject({
  ...base,
  command: z.literal("repro"),
  run: JsonRun,
  repro: z.strictObject({
    scenario: z.string(),
    asked: z.number().int(),
    ran: z.number().int(),
    until: z.boolean(),
    /** The premise self-test (--aim-off): each attempt's outcome is in its `aimOff`. */
    aimOff: z.boolean(),
    /** Attempts per class (lab/commands/repro.ts), every class present. */
    classes: z.strictObject({ reproduced: z.number().int(), "differs from reference": z.number().int(), "new signature": z.number().int(), "failed otherwise": z.number().int(), "not reproduced": z.number().int(), "could not tell": z.number().int() }),
    aimOffOutcomes: z.strictObject({ caught: z.number().int(), "let through": z.number().int(), "could not tell": z.number().int() }).optional(),
    /** Under --aim-off: the premises aimed off, one at a time. */
    aimed: z.array(z.string()).optional(),
    /** The scenario's premises with no aim-off: never self-tested. */
    notSelfTested: z.array(z.string()).optional(),
    /** The attempts that showed the bug (registered or new signature), by index. */
    hits: z.array(z.number().int()),
    attempts: z.array(
      z.strictObject({
        index: z.number().int(),
        /** The attempt's row in the run (`<scenario>~03`). */
        name: z.string(),
        verdict: z.string(),
        class: AttemptClass,
        why: z.string().optional(),
        seconds: z.number().optional(),
        evidence: z.string().optional(),
        aimOff: z.strictObject({ premise: z.string().optional(), caught: z.boolean(), outcome: z.enum(["caught", "let through", "could not tell"]).optional(), why: z.string() }).optional(),
      }),
    ),
  }),
});

export const MatrixDocument = z.strictObject({
  ...base,
  command: z.literal("matrix"),
  id: z.string(),
  /** The matrix folder (matrix.json, matrix.txt). */
  dir: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  versions: z.array(z.string()),
  scenarios: z.array(z.string()),
  /** One per scenario and version that ran, scenario by scenario in the table's order. */
  cells: z.array(
    z.strictObject({
      scenario: z.string(),
      version: z.string(),
      verdict: JsonVerdict,
      seconds: z.number(),
      detail: z.string().optional(),
      /** "known-finding R-x", "fail F-y": the findings judged other than pass. */
      findings: z.array(z.string()),
      run: z.string(),
      evidence: z.string().optional(),
      bug: z.strictObject({ class: AttemptClass, why: z.string().optional() }).optional(),
      variants: z.record(z.string(), z.string()).optional(),
      notAffected: z.array(z.string()).optional(),
    }),
  ),
  /** Per version: its run id, or why it could not run. */
  runs: z.array(z.strictObject({ version: z.string(), run: z.string().optional(), error: z.string().optional(), seconds: z.number().optional() })),
  builds: z.record(z.string(), z.strictObject({ source: z.string(), sha256: z.string() })).optional(),
});

export const SoakDocument = z.strictObject({
  ...base,
  command: z.literal("soak"),
  id: z.string(),
  dir: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  version: z.string(),
  /** Rounds asked, and the run ids of the rounds made. */
  asked: z.number().int(),
  rounds: z.array(z.string()),
  shard: z.string().optional(),
  rows: z.array(
    z.strictObject({
      scenario: z.string(),
      rounds: z.number().int(),
      verdicts: z.record(z.string(), z.number().int()),
      moved: z.boolean(),
      seconds: z.strictObject({ min: z.number(), median: z.number(), max: z.number() }),
      checks: z.array(z.strictObject({ id: z.string(), signatures: z.array(z.strictObject({ signature: z.string(), count: z.number().int() })) })),
      runsByVerdict: z.record(z.string(), z.array(z.string())),
    }),
  ),
});

export const MergeDocument = z.strictObject({
  ...base,
  command: z.literal("merge"),
  /** Each version's merged run, with its shards. */
  versions: z.array(z.strictObject({ version: z.string(), run: JsonRun, shards: z.array(z.strictObject({ index: z.number().int(), total: z.number().int(), status: z.enum(["complete", "cut", "missing"]), neverRan: z.array(z.string()) })) })),
  problems: z.array(z.string()),
  summary: z.string(),
});

export const BisectDocument = z.strictObject({
  ...base,
  command: z.literal("bisect"),
  id: z.string(),
  /** The bisect folder (bisect.json). */
  dir: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  scenario: z.string(),
  good: z.string(),
  bad: z.string(),
  /** Attempts per step, and whether pre-releases were searched. */
  n: z.number().int(),
  pre: z.boolean(),
  seed: z.number().int().optional(),
  /** The versions searched, oldest first, GOOD and BAD included. */
  versions: z.array(z.string()),
  /** Every step in the order it ran: its version, each attempt's verdict, what it reads, its run. */
  steps: z.array(z.strictObject({ version: z.string(), verdicts: z.array(z.string()), reads: z.string(), run: z.string().optional(), evidence: z.array(z.string()), error: z.string().optional() })),
  /** The answer, once the search ended: found, same (GOOD and BAD read the same), or could not tell. */
  answer: z
    .discriminatedUnion("result", [
      z.strictObject({ result: z.literal("found"), good: z.string(), goodReads: z.string(), first: z.string(), firstReads: z.string(), lastGood: z.string() }),
      z.strictObject({ result: z.literal("same"), reads: z.string() }),
      z.strictObject({ result: z.literal("could not tell"), at: z.string(), verdicts: z.array(z.string()), error: z.string().optional() }),
    ])
    .optional(),
});

/** Every document a command prints under --json: one of these, by `command`. */
export const JsonDocument = z.union([ListDocument, RunDocument, ReproDocument, MatrixDocument, SoakDocument, MergeDocument, BisectDocument]);
export type JsonDocument = z.infer<typeof JsonDocument>;
export type JsonRun = z.infer<typeof JsonRun>;

/** The document as printed: validated against the schema first (a builder that drifted fails here, naming the field), one line. */
export function jsonText(doc: JsonDocument): string {
  const schema = { list: ListDocument, run: RunDocument, report: RunDocument, repro: ReproDocument, matrix: MatrixDocument, soak: SoakDocument, merge: MergeDocument, bisect: BisectDocument }[doc.command];
  const ok = schema.safeParse(doc);
  if (!ok.success) throw new Error(`fleetlab --json: the ${doc.command} document does not match its schema: ${ok.error.issues.slice(0, 3).map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return JSON.stringify(doc) + "\n";
}

/** `list --json`: the scenarios with their lab and what each proves. */
export function listDocument(scenarios: { name: string; topology: string; proves: string }[]): z.infer<typeof ListDocument> {
  return { schemaVersion: SCHEMA_VERSION, command: "list", exitCode: 0, scenarios: scenarios.map((s) => ({ name: s.name, topology: s.topology === "own" ? "own" : "shared", proves: s.proves })) };
}

/** A stored run as its verdict table says it (`run`, `report`, and the runs inside `repro` and `merge`). */
export function jsonRun(record: RunRecord, dir: string): JsonRun {
  const rows = reportRows(record);
  const count = (v: string) => rows.filter((r) => r.verdict === v).length;
  const topology = (record.topology ?? {}) as { openclawVersion?: unknown; openclawBuild?: { source?: unknown; sha256?: unknown } };
  const build = topology.openclawBuild && typeof topology.openclawBuild.source === "string" ? { source: topology.openclawBuild.source, ...(typeof topology.openclawBuild.sha256 === "string" ? { sha256: topology.openclawBuild.sha256 } : {}) } : undefined;
  return {
    id: record.id,
    dir,
    seed: record.seed,
    startedAt: record.startedAt,
    ...(record.endedAt ? { endedAt: record.endedAt } : {}),
    openclaw: { ...(typeof topology.openclawVersion === "string" ? { version: topology.openclawVersion } : {}), ...(build ? { build } : {}) },
    ...(record.shard ? { shard: { index: record.shard.index, total: record.shard.total } } : {}),
    problems: runProblems(record),
    counts: { total: rows.length, pass: count("pass"), fail: count("fail"), unknown: count("unknown"), knownFinding: count("known-finding"), fixed: count("fixed?"), na: count("n/a"), notRun: count(NOT_RUN) },
    scenarios: rows.map((r) => {
      const row = record.scenarios.find((s) => s.name === r.name);
      return {
        name: r.name,
        verdict: r.verdict as z.infer<typeof JsonScenario>["verdict"],
        seconds: r.seconds,
        ...(r.detail ? { detail: r.detail } : {}),
        ...(row?.evidence ? { evidence: row.evidence } : {}),
        ...(row?.startedAt ? { startedAt: row.startedAt } : {}),
        ...(row?.endedAt ? { endedAt: row.endedAt } : {}),
        findings: (record.findings ?? []).filter((f) => f.scenario === r.name).map((f) => ({ id: f.findingId, outcome: f.outcome, kind: f.kind, expectation: f.expectation, ...(f.observed !== undefined ? { observed: f.observed } : {}) })),
      };
    }),
    unexercised: (record.unexercised ?? []).map((u) => ({ id: u.id, ...(u.scenario ? { scenario: u.scenario } : {}) })),
    report: path.join(dir, "report.html"),
    junit: path.join(dir, "junit.xml"),
  };
}

/** `run --json` and `report --json`: the run folder's verdicts, with the exit code the command ends with (runExitCode). */
export function runDocument(record: RunRecord, dir: string, command: "run" | "report" = "run"): z.infer<typeof RunDocument> {
  return { schemaVersion: SCHEMA_VERSION, command, exitCode: runExitCode(record), run: jsonRun(record, dir) };
}

/**
 * `merge`'s exit code: the verdicts' (1 a scenario failed, 3 one read unknown); else 3 when a
 * planned scenario never ran, a shard or version is missing, or nothing was merged; else 0.
 */
export function mergeExitCode(m: Pick<MergeResult, "versions" | "problems">): number {
  const code = exitCodeOf(m.versions.flatMap((v) => v.record.scenarios.map((r) => r.verdict as Verdict)));
  const notRun = m.versions.some((v) => (v.record.plan ?? []).some((n) => !v.record.scenarios.some((r) => r.name === n)));
  return code !== 0 ? code : notRun || m.problems.length || !m.versions.length ? 3 : 0;
}

/** `merge --json`: each version's merged run and its shards, the problems, the summary's path. */
export function mergeDocument(m: Pick<MergeResult, "versions" | "problems" | "summaryFile">): z.infer<typeof MergeDocument> {
  return {
    schemaVersion: SCHEMA_VERSION,
    command: "merge",
    exitCode: mergeExitCode(m),
    versions: m.versions.map((v) => ({ version: v.version, run: jsonRun(v.record, v.dir), shards: (v.record.shards ?? []).map((s) => ({ index: s.index, total: s.total, status: s.status, neverRan: s.neverRan })) })),
    problems: m.problems,
    summary: m.summaryFile,
  };
}
