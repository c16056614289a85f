// One verdict rule for every entry (the CLI's exit code, the vitest suite, reports):
//   pass           every expectation held
//   known-finding  an expectation failed exactly as a registered finding says (loud, not failed)
//   fixed?         a registered finding did not reproduce: retire its record (loud, not failed)
//   fail           OpenClaw did something no finding describes, or an assertion failed
//   unknown        the lab could not tell (its own member, fault or precondition failed)
export type Verdict = "pass" | "fail" | "unknown" | "known-finding" | "fixed?";

/** Verdicts a run may end with and still exit 0 (and a vitest test still pass). */
export function accepted(v: Verdict): boolean {
  return v === "pass" || v === "known-finding" || v === "fixed?";
}

/** Exit code of a run: 0 all accepted, 1 any fail, 3 any unknown (2 is bad input, raised before). */
export function exitCodeOf(verdicts: Verdict[]): number {
  if (verdicts.includes("fail")) return 1;
  if (verdicts.includes("unknown")) return 3;
  return 0;
}
