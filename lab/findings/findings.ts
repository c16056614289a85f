// Findings: what the system under test was seen to do short of a scenario's expectation.
// A scenario states an expectation and, when it does not hold, the exact signature of what
// happened instead. Matched against the findings the scenario registers beside it
// (defineScenario({ findings })):
//   expectation holds, nothing registered         -> pass
//   expectation fails, registered signature equal -> known finding (reported loudly, not failed)
//   expectation fails, no registered match        -> fail (a new or changed shortfall)
//   expectation holds, but a finding is registered -> "fixed?" (retire the record) on a version
//                                                     the record names or a newer one: a newer
//                                                     OpenClaw that fixed it says so instead of
//                                                     passing silently;
//                                                     "not affected" (a pass that says so) on a
//                                                     version OLDER than every version the
//                                                     record names: a regression that came later
// A record may carry a signature per version range (`variants`): the same bug shows differently
// on other versions. The observed signature is matched against the variants whose range holds
// the version first, then the others, then the record's own; the result names the variant that
// matched. A record no check judged in a run is "unexercised" (unexercised(), below): its check
// was removed or renamed, or never reached, so the record proves nothing any more.
import { isDeepStrictEqual } from "node:util";
import { compareVersions, inRange, oldest, rangeVersions } from "./versions.ts";
import { packageVersion, versionShown } from "../definitions/build.ts";

/** The signature of a finding on a range of versions, where it differs from the record's own. */
export interface FindingVariant {
  /** The versions it is registered for, a range: "2026.9.5", ">=2026.9.5", ">=2026.9.4 <2026.9.6" (lab/findings/versions.ts). */
  versions: string;
  /** Exactly what was observed on those versions: compared by deep equality, as the record's own. */
  signature: unknown;
  /** What differs on these versions, one line (the matrix and the bug report show it). */
  note?: string;
}

export interface FindingRecord {
  /** Stable id, e.g. "F-midturn-run-stays-running". */
  id: string;
  /** What a user needs (the reference expectation). */
  expectation: string;
  /** Exactly what was observed instead: compared by deep equality, so keep it specific. */
  signature: unknown;
  /** OpenClaw versions it was seen on (with its own signature, or one of its variants'). */
  versions: string[];
  /**
   * Other signatures of the same bug on other versions, each with its version range. Where a
   * variant's range holds the version, its signature is what that version is expected to show.
   */
  variants?: FindingVariant[];
  /** "shortfall" against the lab's expectation, or a difference from the reference harness. */
  kind: "shortfall" | "differs-from-reference";
  /** Where the evidence was first seen (a run folder, a file in it). */
  evidence: string;
  /**
   * Seen in some runs of the same version, not in all (a race in OpenClaw): a run where the
   * expectation holds reads pass, with a note, not "fixed?"; a run that shows the signature reads
   * the known finding, and any other shortfall still fails.
   */
  intermittent?: true;
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
   * Which of the record's signatures matched (a known finding of a record with variants): "base"
   * for the record's own, else the variant's version range.
   */
  variant?: string;
  /** A pass on a version older than every version the record names: the bug came later. */
  notAffected?: boolean;
  /**
   * "lab": judged by an evidence check against a lab-wide record (lab/checks/findings.ts), e.g.
   * protocol drift seen in every scenario's frames. Such a known finding is reported once for
   * the run and leaves the scenario's verdict alone; a fail or "fixed?" still counts.
   */
  scope?: "lab";
  /**
   * "evidence": judged by an evidence check over the scenario's window (protocol schema,
   * at-most-once), not by the scenario's body: it does not rest on the scenario's premises.
   */
  source?: "evidence";
}

/** The label of the record's own signature when it has variants. */
export const BASE_VARIANT = "base";

/** Every signature of a record with its label, those registered for `version` first (then the others, then the record's own). */
export function signaturesOf(rec: FindingRecord, version: string): { label: string; signature: unknown; range?: string; note?: string }[] {
  const variants = (rec.variants ?? []).map((v) => ({ label: v.versions, signature: v.signature, range: v.versions, note: v.note }));
  const own = { label: BASE_VARIANT, signature: rec.signature };
  return [...variants.filter((v) => inRange(version, v.range)), ...variants.filter((v) => !inRange(version, v.range)), own];
}

/** The signature `version` is expected to show: the first variant whose range holds it, else the record's own. */
export function expectedSignature(rec: FindingRecord, version: string): { label: string; signature: unknown } {
  const v = (rec.variants ?? []).find((x) => inRange(version, x.versions));
  return v ? { label: v.versions, signature: v.signature } : { label: BASE_VARIANT, signature: rec.signature };
}

/** Which of a record's signatures `observed` equals (on `version`), or undefined. */
export function matchVariant(rec: FindingRecord, observed: unknown, version: string): { label: string; range?: string; note?: string } | undefined {
  const hit = signaturesOf(rec, version).find((s) => isDeepStrictEqual(s.signature, observed));
  return hit && { label: hit.label, range: hit.range, note: hit.note };
}

/** Every version a record names: those it was seen on and those its variants' ranges name. */
export function namedVersions(rec: FindingRecord): string[] {
  return [...new Set([...rec.versions, ...(rec.variants ?? []).flatMap((v) => rangeVersions(v.versions))])].sort(compareVersions);
}

/**
 * A check that holds where a record is registered: "not affected" when `version` is older than
 * every version the record names and no variant's range holds it (the bug came later), else
 * "fixed?" (it was there, or it is newer than the record's versions: retire or re-check).
 */
export function whenHolds(rec: FindingRecord, version: string): "not affected" | "fixed?" {
  if ((rec.variants ?? []).some((v) => inRange(version, v.versions))) return "fixed?";
  const first = oldest(namedVersions(rec));
  return first !== undefined && compareVersions(version, first) < 0 ? "not affected" : "fixed?";
}

export function judge(
  registry: FindingRecord[],
  c: { id: string; scenario: string; expectation: string; holds: boolean; observed?: unknown; version: string; kind?: FindingRecord["kind"] },
): CheckResult {
  const rec = registry.find((f) => f.id === c.id);
  // A build (OPENCLAW_PACKAGE) is judged on its version; what is said names it as the build.
  const onVersion = packageVersion(c.version);
  const shown = versionShown(c.version);
  const base = { findingId: c.id, scenario: c.scenario, expectation: c.expectation, kind: rec?.kind ?? c.kind ?? "shortfall" };
  if (c.holds) {
    if (!rec) return { ...base, outcome: "pass" };
    const named = namedVersions(rec);
    if (whenHolds(rec, c.version) === "not affected") {
      return { ...base, outcome: "pass", notAffected: true, note: `not affected: ${shown} is older than every version registered finding ${c.id} names (${named.join(", ")}), and the check holds there: a regression that came later` };
    }
    const listed = rec.versions.includes(onVersion) ? `the record lists ${rec.versions.join(", ")}` : `the record lists ${rec.versions.join(", ")}, not ${onVersion}`;
    if (rec.intermittent && rec.versions.includes(onVersion)) return { ...base, outcome: "pass", note: `registered intermittent finding ${c.id} not seen in this run on ${shown} (${listed}; it shows in some runs only)` };
    return { ...base, outcome: "fixed?", registered: expectedSignature(rec, c.version).signature, note: `registered finding ${c.id} did not reproduce on ${shown} (${listed})` };
  }
  if (!rec) return { ...base, outcome: "fail", observed: c.observed, note: `expectation not met and no finding is registered as ${c.id}` };
  const hit = matchVariant(rec, c.observed, c.version);
  if (!hit) {
    const expected = expectedSignature(rec, c.version);
    const which = rec.variants?.length ? ` (expected on ${shown}: ${expected.label === BASE_VARIANT ? "its own signature" : `variant ${expected.label}`}; it has ${rec.variants.length + 1} signatures, none equal)` : "";
    return { ...base, outcome: "fail", observed: c.observed, registered: expected.signature, note: `expectation not met, and the observed signature differs from registered finding ${c.id}${which}` };
  }
  const notes: string[] = [];
  if (rec.variants?.length) {
    notes.push(hit.label === BASE_VARIANT ? "its own signature matched" : `variant ${hit.label} matched`);
    const expected = expectedSignature(rec, c.version).label;
    if (expected !== hit.label) notes.push(`expected on ${shown}: ${expected === BASE_VARIANT ? "its own signature" : `variant ${expected}`}`);
  }
  if (hit.range !== undefined ? !inRange(c.version, hit.range) : !rec.versions.includes(onVersion)) notes.push(`registered for ${hit.range ?? rec.versions.join(", ")}; also seen on ${shown}`);
  const variant = rec.variants?.length ? { variant: hit.label } : {};
  if (shown !== c.version) notes.push(`on ${shown}`);
  return { ...base, outcome: "known-finding", observed: c.observed, ...variant, note: notes.length ? notes.join("; ") : undefined };
}

/** What is wrong with a record's variants (empty when nothing): a range that does not parse, a signature registered twice. */
export function recordProblems(rec: FindingRecord): string[] {
  const out: string[] = [];
  const sigs = [rec.signature];
  for (const v of rec.variants ?? []) {
    try {
      rangeVersions(v.versions);
    } catch (err) {
      out.push(`${rec.id}: ${(err as Error).message}`);
    }
    if (sigs.some((s) => isDeepStrictEqual(s, v.signature))) out.push(`${rec.id}: variant ${v.versions} repeats a signature the record already has`);
    sigs.push(v.signature);
  }
  return out;
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
