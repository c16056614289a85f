// One place that judges a scenario: the runner's phases only gather what they observed (its
// checks, the evidence checks over its window, how its body ended, what escaped it, what
// could not be undone, the lab's state after it), and judgeScenario turns that into the
// verdict with the one rule of lab/definitions/verdict.ts (Judgement) and the findings' (verdictOf).
import { Judgement, type Verdict } from "../definitions/verdict.ts";
import { unexercised, verdictOf, type CheckResult, type FindingRecord } from "../findings/findings.ts";

/**
 * A problem a phase saw, as Judgement takes it: its verdict counts at once (add; "pass" only
 * says something), or with `after` only for a scenario that was accepted so far, else it is
 * appended to the detail (Judgement.after).
 */
export interface Note {
  verdict: Verdict;
  text: string;
  after?: boolean;
}

/** What a scenario's run observed, phase by phase. */
export interface Observed {
  /** It ended before its body ran (n/a, or a lab that could not come up): this verdict and why, and nothing else counts. */
  notRun?: { verdict: Verdict; why: string };
  /** What went wrong while it ran, up to its evidence checks, in order: its body's end, errors that escaped it, undo that failed, evidence checks that could not tell. */
  problems: Note[];
  /** Every judged expectation: its own checks and the evidence checks over its window. */
  checks: CheckResult[];
  /** What came after its checks, in order: the lab's state (teardown, leftovers, health) and errors that escaped meanwhile. */
  afterwards: Note[];
  /** Its own finding records, and whether its body ran to the end (only then is a record no check judged "unexercised"). */
  findings: FindingRecord[];
  bodyReturned: boolean;
  /** The premises it declared (Scenario.premises) and what its body proved of them (ctx.premise), in order. */
  declared?: { id: string; what: string }[];
  premises?: PremiseResult[];
}

/** One ctx.premise() call: met or not, with what was seen. */
export interface PremiseResult {
  id: string;
  what: string;
  met: boolean;
  observed?: unknown;
}

/**
 * Why the checks of a scenario say nothing (its premises not met, or not proven though its body
 * ran to the end), or undefined when every premise held. A premise proven twice counts by its
 * last proof, so a scenario may prove it again after a retry.
 */
export function premisesUnmet(o: Pick<Observed, "declared" | "premises" | "bodyReturned">): string | undefined {
  const last = lastProofs(o.premises);
  const out: string[] = [];
  for (const p of last.values()) if (!p.met) out.push(`premise ${p.id} not met (${p.what}): observed ${JSON.stringify(p.observed ?? null)}`);
  if (o.bodyReturned) for (const d of o.declared ?? []) if (!last.has(d.id)) out.push(`premise ${d.id} was never proven (${d.what})`);
  return out.length ? `the lab could not tell: ${out.join("; ")}` : undefined;
}

/** Each premise by its last proof (a scenario may prove one again after a retry). */
export function lastProofs(premises: PremiseResult[] = []): Map<string, PremiseResult> {
  return new Map(premises.map((p) => [p.id, p]));
}

export interface Judged {
  verdict: Verdict;
  detail?: string;
  /** Its own records no check judged (empty unless its body ran to the end). */
  unexercised: FindingRecord[];
  /** What failed besides its checks (a step that threw, an escape, a leftover): a repro's "nothing else failed" reads these (lab/commands/repro.ts classify). */
  failedSteps: string[];
}

/**
 * The verdict of a scenario from what it observed. The order is the rule's: the problems while
 * it ran, then its checks (a shortfall no finding describes fails; known findings and fixed?
 * are named), then what came after, whose `after` notes set the verdict only of a scenario
 * that was accepted by then.
 */
export function judgeScenario(o: Observed): Judged {
  if (o.notRun) return { verdict: o.notRun.verdict, detail: o.notRun.why, unexercised: [], failedSteps: [] };
  const j = new Judgement();
  const note = (n: Note) => (n.after ? j.after(n.verdict, n.text) : j.add(n.verdict, n.text));
  o.problems.forEach(note);
  // A premise not met makes the scenario's own checks moot, a fail among them too (a check that
  // fell short because the fault missed says nothing of OpenClaw: `make repro --aim-off` showed it
  // on repro-68187): unknown, and what they read is only said. The evidence checks over its window
  // (the protocol schema, at-most-once) and lab-wide records do not rest on the scenario's
  // premises: their fail still leads.
  const unmet = premisesUnmet(o);
  if (unmet) j.add("unknown", unmet);
  const premiseFree = (c: CheckResult) => c.scope === "lab" || c.source === "evidence";
  const judged = unmet ? o.checks.filter(premiseFree) : o.checks;
  if (unmet) {
    const moot = o.checks.filter((c) => !premiseFree(c) && c.outcome !== "pass");
    if (moot.length) j.also(`moot (premise not met): ${moot.map((c) => `${c.outcome} ${c.findingId}`).join(", ")}`);
  }
  const outcome = verdictOf(judged);
  if (outcome === "fail") j.add("fail", judged.filter((c) => c.outcome === "fail").map((c) => `${c.findingId}: ${c.note}`).join("; "));
  else if (outcome !== "pass") j.add(outcome, judged.filter((c) => c.outcome !== "pass" && !(c.scope === "lab" && c.outcome === "known-finding")).map((c) => `${c.outcome} ${c.findingId}`).join(", "));
  o.afterwards.forEach(note);
  const failedSteps = [...o.problems, ...o.afterwards].filter((n) => n.verdict === "fail").map((n) => n.text);
  return { verdict: j.verdict, detail: j.detail, unexercised: o.bodyReturned ? unexercised(o.findings, o.checks) : [], failedSteps };
}
