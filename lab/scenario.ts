// A scenario is a declarative spec (after roachtest): a name, what it proves, whether it may
// share the standard lab or needs its own (because it breaks things or checks teardown), the
// topology it needs, and a body that drives the lab and asserts what a user needs.
import type { Lab } from "./topology/lab.ts";
import type { TopologyInput } from "./definitions/spec.ts";
import type { Run } from "./evidence/run.ts";
import type { FindingRecord } from "./findings/findings.ts";
import type { Need } from "./engine/capabilities.ts";
import { upstreamProblems, type Upstream } from "./findings/upstream.ts";
import type { CheckDef } from "./judge/history.ts";

export type { Verdict } from "./definitions/verdict.ts";
// The verdict errors live beside the verdict rule (lab/definitions/verdict.ts), on the floor members and
// topology read; scenarios take them from here as before.
export { LabInfraError, SystemUnderTestError, labStep } from "./definitions/verdict.ts";
export type { FindingRecord } from "./findings/findings.ts";
export type { Upstream } from "./findings/upstream.ts";
export type { CheckDef } from "./judge/history.ts";

/** What a scenario's body observes for its declared checks: JSON values by name (default: any). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Observed = Record<string, any>;

export interface ScenarioContext<H extends Observed = Observed> {
  lab: Lab;
  run: Run;
  /** Aborted when the scenario runs out of time: pass it to every wait (lab/core/wait.ts). */
  signal: AbortSignal;
  /** This scenario's evidence folder inside the run folder. */
  dir: string;
  /** A path inside this scenario's evidence folder. */
  file(rel: string): string;
  log(msg: string): void;
  /**
   * Judge one expectation. When it does not hold, `observed` is the exact signature of what
   * happened instead; it is matched against the registered finding `id` (known finding) or
   * fails the scenario. Never throws: the scenario goes on to its next check.
   */
  check(c: { id: string; expectation: string; holds: boolean; observed?: unknown; kind?: FindingRecord["kind"] }): boolean;
  /**
   * Record what the body saw, by name (a JSON value: kept as JSON, so the checks read it now as
   * they will from the stored history). The scenario's declared checks (Scenario.checks) and
   * premises (Premise.judge) are functions of these observations: the body drives and observes,
   * the checks decide, after the body, and `fleetlab judge <run>` runs them again over a stored
   * run. Observing the same name again replaces it.
   */
  observe<K extends keyof H & string>(name: K, value: H[K]): void;
  /**
   * Prove that what the scenario set up really happened where it matters (the fault acted on the
   * path: a 502 was served, writes were delayed, a frame was dropped; the turn was in flight; the
   * node was gone), with what was seen. Not met: the verdict is unknown with this reason, since
   * no check after it can say anything about the bug. Returns `met`; never throws. Every premise
   * the scenario declares (`premises`) must be proven once its body returns.
   */
  premise(p: { id: string; met: boolean; observed?: unknown }): boolean;
  /**
   * Whether the body can go on: the declared check or premise `id` judged now over what the body
   * has observed so far (the same pure function that judges it after the body). false when it
   * does not hold (or has nothing to read yet): the body then stops (`if (!ctx.proceed(id))
   * return;`), because what comes after needs that step. The body never decides an outcome: the
   * verdict is the check's (a fail, or its registered finding) or the premise's (unknown), judged
   * after the body from the history, where the stop is recorded; the checks after it were not
   * reached, which is neither a pass nor "nothing to read".
   */
  proceed(id: string): boolean;
  /**
   * The premise self-test (`fleetlab repro SCENARIO --aim-off`): the id of the one premise this
   * attempt aims off, as that premise's `aimOff` says (the fault moved off the path it needs).
   * That premise must then be unmet and the verdict unknown; a scenario that reads pass, fixed? or
   * a finding this way has a premise check that cannot fail. One premise per attempt, so one that
   * cannot fail cannot hide behind another: a body with several aim-offs compares the id
   * (`aimOff === "P-x"`). Undefined in every other run.
   */
  aimOff: string | undefined;
}

/** What a scenario must have made happen before its verdict counts (lab/judge/judging.ts). */
export interface Premise<H extends Observed = Observed> {
  /** Named in the scenario's header and docs/reference/scenarios.md, e.g. "P-50219-502-served". */
  id: string;
  /** What it means, for a reader: "the tap answered the node's upgrades 502". */
  what: string;
  /**
   * How the scenario aims its fault off the path under `--aim-off` (ctx.aimOff), e.g. "the 502 rule
   * on /fleetlab-aimed-off instead of /": the self-test that shows this premise can be unmet.
   */
  aimOff?: string;
  /**
   * The premise as a function of what the body observed (ctx.observe), judged after the body like
   * a declared check: undefined when what it reads was not observed (then it must be proven with
   * ctx.premise, or it reads "never proven").
   */
  judge?(h: H): { met: boolean; observed?: unknown } | undefined;
}

export interface Scenario<H extends Observed = Observed> {
  name: string;
  /** One line: what this scenario proves. */
  proves: string;
  /** "shared": runs on the standard lab and leaves it healthy; "own": gets a fresh lab. */
  topology: "shared" | "own";
  /** Overrides of the standard topology (own topology only). */
  spec?: TopologyInput;
  /**
   * Where it runs among scenarios of the same topology kind: lower first (default 50, then by
   * name). Only for a shared-lab scenario that proves something about a fresh lab.
   */
  order?: number;
  /**
   * What it needs of the OpenClaw version (lab/engine/capabilities.ts): a CLI option, a gateway method
   * or event. When the version lacks one, the verdict is "n/a" with the reason, before the body.
   */
  needs?: Need[];
  /**
   * "fresh": its lab pairs the node hosts from scratch instead of restoring the paired state of
   * an earlier lab of the same version and shape (lab/topology/snapshot.ts): for scenarios that
   * test pairing itself. A shared-topology scenario gets a shared lab paired from scratch (the
   * runner replaces one restored from a snapshot).
   */
  pairing?: "fresh";
  /**
   * true: no other scenario's body runs beside it (other lanes finish the scenario they are in,
   * then wait until it is over). For scenarios whose load is the subject (a fleet of hundreds of
   * nodes driven from the lab's own process): beside other labs on a small machine both starve,
   * and what the scenario measures is the machine, not OpenClaw.
   */
  alone?: boolean;
  /** What OpenClaw was seen to do short of this scenario's expectations (see lab/findings). */
  findings?: FindingRecord[];
  /**
   * The checks that ARE the bug a repro reproduces (check ids; default: the ids of its registered
   * findings). `make repro` counts an attempt as reproduced only when one of these was short; any
   * other check or step that fails is "failed otherwise", never a reproduction (lab/commands/repro.ts).
   */
  bug?: string[];
  /** What must have happened for its checks to mean anything: each proven by its own judge over the observations, or in the body with ctx.premise(). */
  premises?: Premise<H>[];
  /**
   * Its checks as pure functions of what its body observed (ctx.observe), judged after the body
   * (in this order, after the body's own ctx.check calls): each one unit-tested on recorded
   * histories (fixtures/histories/), and judged again by `fleetlab judge <run>`.
   */
  checks?: CheckDef<H>[];
  /**
   * A field-bug repro's upstream thread as the tracker showed it on `checked`: status, fix PR, the
   * release that shipped the fix (lab/findings/upstream.ts). Every scenario in scenarios/repro/
   * declares one; the bug reports of its findings lead with it.
   */
  upstream?: Upstream;
  /**
   * The repro's steps at the protocol level, for a maintainer without the lab: the frames and RPCs
   * to send (method, the params that matter) and what to watch, one step a line. The bug report
   * puts them before the lab's command.
   */
  protocolSteps?: string[];
  timeoutMs: number;
  run(ctx: ScenarioContext<H>): Promise<void>;
}

export function defineScenario<H extends Observed = Observed>(s: Scenario<H>): Scenario {
  if (s.topology === "shared" && s.spec) throw new Error(`scenario ${s.name}: a shared-topology scenario cannot change the topology`);
  const dup = twice(s.findings ?? []);
  if (dup) throw new Error(`scenario ${s.name}: finding ${dup} is registered twice`);
  const pdup = twice(s.premises ?? []);
  if (pdup) throw new Error(`scenario ${s.name}: premise ${pdup} is declared twice`);
  const cdup = twice(s.checks ?? []);
  if (cdup) throw new Error(`scenario ${s.name}: check ${cdup} is declared twice`);
  const bad = s.upstream ? upstreamProblems(s.upstream) : [];
  if (bad.length) throw new Error(`scenario ${s.name}: upstream ${bad.join("; ")}`);
  return s as unknown as Scenario;
}

/** The first id that stands twice in the list, if any. */
function twice(xs: { id: string }[]): string | undefined {
  const ids = xs.map((x) => x.id);
  return ids.find((id, i) => ids.indexOf(id) !== i);
}
