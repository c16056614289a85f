// Findings: what the system under test was seen to do short of a scenario's expectation.
// A scenario states an expectation and, when it does not hold, the exact signature of what
// happened instead. Matched against the findings the scenario registers beside it
// (defineScenario({ findings })):
//   expectation holds, nothing registered         -> pass
//   expectation fails, registered signature equal -> known finding (reported loudly, not failed)
//   expectation fails, no registered match        -> fail (a new or changed shortfall)
//   expectation holds, but a finding is registered -> "fixed?" (retire the record), on any
//                                                     version: a newer OpenClaw that fixed it
//                                                     says so instead of passing silently
// A record no check judged in a run is "unexercised" (unexercised(), below): its check was
// removed or renamed, or never reached, so the record proves nothing any more.
import { isDeepStrictEqual } from "node:util";

export interface FindingRecord {
  /** Stable id, e.g. "F-midturn-run-stays-running". */
  id: string;
  /** What a user needs (the reference expectation). */
  expectation: string;
  /** Exactly what was observed instead: compared by deep equality, so keep it specific. */
  signature: unknown;
  /** OpenClaw versions it was seen on. */
  versions: string[];
  /** "shortfall" against the lab's expectation, or a difference from the reference harness. */
  kind: "shortfall" | "differs-from-reference";
  /** Where the evidence was first seen (a run folder, a file in it). */
  evidence: string;
}

export type CheckOutcome = "pass" | "fail" | "known-finding" | "fixed?";

export interface CheckResult {
  findingId: string;
  scenario: string;
  expectation: string;
  outcome: CheckOutcome;
  observed?: unknown;
  registered?: unknown;
  kind: FindingRecord["kind"];
  note?: string;
  /**
   * "lab": judged by an evidence check against a lab-wide record (lab/checks/findings.ts), e.g.
   * protocol drift seen in every scenario's frames. Such a known finding is reported once for
   * the run and leaves the scenario's verdict alone; a fail or "fixed?" still counts.
   */
  scope?: "lab";
}

export function judge(
  registry: FindingRecord[],
  c: { id: string; scenario: string; expectation: string; holds: boolean; observed?: unknown; version: string; kind?: FindingRecord["kind"] },
): CheckResult {
  const rec = registry.find((f) => f.id === c.id);
  const base = { findingId: c.id, scenario: c.scenario, expectation: c.expectation, kind: rec?.kind ?? c.kind ?? "shortfall" };
  if (c.holds) {
    if (!rec) return { ...base, outcome: "pass" };
    const listed = rec.versions.includes(c.version) ? `the record lists ${rec.versions.join(", ")}` : `the record lists ${rec.versions.join(", ")}, not ${c.version}`;
    return { ...base, outcome: "fixed?", registered: rec.signature, note: `registered finding ${c.id} did not reproduce on ${c.version} (${listed})` };
  }
  if (!rec) return { ...base, outcome: "fail", observed: c.observed, note: `expectation not met and no finding is registered as ${c.id}` };
  if (!isDeepStrictEqual(rec.signature, c.observed)) {
    return { ...base, outcome: "fail", observed: c.observed, registered: rec.signature, note: `expectation not met, and the observed signature differs from registered finding ${c.id}` };
  }
  const note = rec.versions.includes(c.version) ? undefined : `registered for ${rec.versions.join(", ")}; also seen on ${c.version}`;
  return { ...base, outcome: "known-finding", observed: c.observed, note };
}

/** The records among `registry` that no check in `results` judged (whatever its outcome). */
export function unexercised(registry: FindingRecord[], results: Pick<CheckResult, "findingId">[]): FindingRecord[] {
  const judged = new Set(results.map((r) => r.findingId));
  return registry.filter((f) => !judged.has(f.id));
}

/** A scenario's verdict from its checks (a thrown assertion is a fail before this). */
export function verdictOf(all: CheckResult[]): CheckOutcome {
  const results = all.filter((r) => !(r.scope === "lab" && r.outcome === "known-finding"));
  if (results.some((r) => r.outcome === "fail")) return "fail";
  if (results.some((r) => r.outcome === "known-finding")) return "known-finding";
  if (results.some((r) => r.outcome === "fixed?")) return "fixed?";
  return "pass";
}

/** The findings table `make lab` prints. */
export function findingsTable(results: CheckResult[], title: string): string {
  const rows = results.filter((r) => r.outcome !== "pass");
  if (!rows.length) return "";
  const out = [title];
  for (const r of rows) {
    out.push(`  ${r.outcome.toUpperCase().padEnd(13)} ${r.findingId}  [${r.scenario}]`);
    out.push(`      expected: ${r.expectation}`);
    if (r.observed !== undefined) out.push(`      observed: ${JSON.stringify(r.observed)}`);
    if (r.outcome === "fail" && r.registered !== undefined) out.push(`      registered: ${JSON.stringify(r.registered)}`);
    if (r.note) out.push(`      note: ${r.note}`);
  }
  return out.join("\n");
}
