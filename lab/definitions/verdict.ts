// One verdict rule for every entry (the CLI's exit code, the vitest suite, reports):
//   pass           every expectation held
//   known-finding  an expectation failed exactly as a registered finding says (loud, not failed)
//   fixed?         a registered finding did not reproduce: retire its record (loud, not failed)
//   fail           OpenClaw did something no finding describes, or an assertion failed (also
//                  while the lab was coming up: gateway or node host exited, pairing refused)
//   unknown        the lab could not tell (its own member, fault or precondition failed)
//   n/a            the version under test lacks what the scenario needs (its `needs`, judged
//                  from the package's CLI and the gateway's advertised protocol): not run, with
//                  the reason; accepted, like a skipped test, and counted apart
export type Verdict = "pass" | "fail" | "unknown" | "known-finding" | "fixed?" | "n/a";

/** Verdicts a run may end with and still exit 0 (and a vitest test still pass). */
export function accepted(v: Verdict): boolean {
  return v === "pass" || v === "known-finding" || v === "fixed?" || v === "n/a";
}

/** Exit code of a run: 0 all accepted, 1 any fail, 3 any unknown (2 is bad input, raised before). */
export function exitCodeOf(verdicts: Verdict[]): number {
  if (verdicts.includes("fail")) return 1;
  if (verdicts.includes("unknown")) return 3;
  return 0;
}

const RANK: Record<Verdict, number> = { "n/a": 0, pass: 0, "fixed?": 1, "known-finding": 2, unknown: 3, fail: 4 };

/** The worse of two verdicts: fail, then unknown, then known finding, then fixed?, then pass. */
export function worse(a: Verdict, b: Verdict): Verdict {
  return RANK[b] > RANK[a] ? b : a;
}

/**
 * A scenario's verdict as its problems come in, none of them dropped: what the scenario itself
 * saw (a thrown assertion, a time-out, its checks, the evidence checks over its window) with
 * add(), where the worst wins (a fail is never hidden by an unknown); and what the runner
 * finds about the lab afterwards (a teardown step that failed, leftovers, an unhealthy shared
 * lab) with after(), which sets the verdict only of a scenario that was accepted so far and
 * otherwise is appended to the detail, so the first verdict stands with its reason in front.
 */
export class Judgement {
  #problems: { verdict: Verdict; text?: string }[] = [];
  #verdict: Verdict = "pass";

  add(verdict: Verdict, text?: string): this {
    this.#verdict = worse(this.#verdict, verdict);
    this.#problems.push({ verdict, text });
    return this;
  }

  after(verdict: Verdict, text: string): this {
    return accepted(this.#verdict) ? this.add(verdict, text) : this.also(text);
  }

  /** Something to say that changes no verdict. */
  also(text: string): this {
    this.#problems.push({ verdict: "pass", text });
    return this;
  }

  get verdict(): Verdict {
    return this.#verdict;
  }

  /** The first problem of the verdict's own kind, then every other one ("also ..."), in order. */
  get detail(): string | undefined {
    const texts = this.#problems.filter((p) => p.text);
    const lead = texts.find((p) => p.verdict === this.#verdict) ?? texts[0];
    if (!lead) return undefined;
    return [lead.text, ...texts.filter((p) => p !== lead).map((p) => `also ${p.text}`)].join("; ");
  }
}

/**
 * The lab could not tell (infrastructure broke, not the system under test: one of the lab's own
 * members, a fault, a precondition of the lab): verdict unknown, with this message as the reason.
 */
export class LabInfraError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LabInfraError";
  }
}

/**
 * OpenClaw itself did the wrong thing where the lab needed it to work (the gateway or a node
 * host exited or never became ready, pairing was refused or never completed, the operator's
 * connect was refused): verdict fail, during bring-up too. The lab's own members (model, git,
 * MCP servers, taps, fault helpers) failing are LabInfraError instead.
 */
export class SystemUnderTestError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SystemUnderTestError";
  }
}

/**
 * A step only the lab's own parts take (the engine, a tap, a fault, an exec): when it fails, the
 * lab could not tell, so it throws LabInfraError (verdict unknown) naming the step, never a fail.
 *   await labStep("stopping tap-node-1", () => faults.stop(lab, "tap-node-1").inject());
 */
export async function labStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof LabInfraError) throw err;
    throw new LabInfraError(`${what}: ${(err as Error).message}`, { cause: err });
  }
}
