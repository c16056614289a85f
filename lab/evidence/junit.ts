// JUnit XML of a run (junit.xml in its evidence folder), from run.json alone, for CI systems:
// one test case per scenario. pass passes; a known finding passes with the finding (expected and
// observed) in its output; "fixed?" passes with the note to retire the record; fail is a
// failure; unknown is an error with its reason, never a pass; a planned scenario that never ran
// (the run was cut) is skipped, with the reason in its output (the exit code is not 0 for it). XML is built by junit-report-builder, not by hand.
import junit, { type Builder } from "junit-report-builder";
import type { RunRecord } from "./run.ts";

// The package is CommonJS (module.exports = the builder) while its types declare a default
// export; under NodeNext the default import is the builder itself at run time.
const root = junit as unknown as Builder;

export function junitXml(record: RunRecord): string {
  const builder = root.newBuilder();
  const suite = builder.testSuite().name(`fleetlab run ${record.id}`).property("seed", String(record.seed));
  // What was under test: the version, or a build of one's own named <version>+<hash> with where it came from.
  const topology = record.topology as { openclawVersion?: string; openclawBuild?: { source: string; sha256: string } } | undefined;
  if (topology?.openclawVersion) suite.property("openclaw", topology.openclawVersion);
  if (topology?.openclawBuild) suite.property("openclaw.build.source", topology.openclawBuild.source).property("openclaw.build.sha256", topology.openclawBuild.sha256);
  if (record.startedAt) suite.timestamp(record.startedAt);
  const checksOf = (name: string) => (record.findings ?? []).filter((c) => c.scenario === name);
  for (const row of record.scenarios) {
    const tc = suite.testCase().className("fleetlab.scenarios").name(row.name).time(row.seconds);
    const lines = [`verdict: ${row.verdict}`, ...(row.evidence ? [`evidence: ${row.evidence}`] : [])];
    for (const c of checksOf(row.name)) {
      lines.push(`${c.outcome} ${c.findingId} (${c.kind})`, `  expected: ${c.expectation}`);
      if (c.observed !== undefined) lines.push(`  observed: ${JSON.stringify(c.observed)}`);
      if (c.note) lines.push(`  note: ${c.note}`);
    }
    tc.standardOutput(lines.join("\n"));
    if (row.verdict === "fail") tc.failure(row.detail ?? "failed", "fail");
    else if (row.verdict === "unknown") tc.error(`unknown: ${row.detail ?? "the lab could not tell"}`, "unknown");
    else if (row.verdict === "n/a") tc.skipped();
  }
  for (const name of (record.plan ?? []).filter((n) => !record.scenarios.some((r) => r.name === n))) {
    suite.testCase().className("fleetlab.scenarios").name(name).skipped().standardOutput("verdict: not run\nnot run: the run was cut before this scenario");
  }
  return builder.build();
}
