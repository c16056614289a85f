// Every deadline of the lab's own follows the machine's pace (lab/core/pace.ts): waitFor,
// GatewayClient.request/waitForEvent and withDeadline are paced unless the bound is the
// expectation itself. A raw timer bypasses that: on a loaded machine a fixed lab-side deadline
// passes while OpenClaw is merely starved, and a verdict comes from the lab's impatience. So each
// raw timer in the lab's code (setTimeout, AbortSignal.timeout, Date.now() + / performance.now()
// + a constant, raceTimer) says what it is, on its line or the line directly above:
//   // paced            it takes its value from the pace (deadline(), a PacedBudget, pacedTimer);
//   // fixed: <reason>  why it is no lab-side deadline deciding a verdict: the expectation itself
//                       ("expectation: OpenClaw's documented 90 s"), a poll interval, a
//                       force-close grace, a clean-up budget when interrupted, a time on
//                       OpenClaw's own clock...
// And every bound marked as the expectation (`expectation: true`, `bound: "expectation"`) says
// why, in an `// expectation: <why>` (or `// fixed: <why>`) comment. Read from the source, as
// lab/ci/layering.test.ts reads imports; the primitives themselves (lab/core/pace.ts,
// lab/core/wait.ts), tests and lab/testing/ (fixtures and helper processes) are left out.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { labSources } from "./sources.ts";

/** The primitives every other deadline goes through: their timers are the pace's own. */
const PRIMITIVES = new Set(["lab/core/pace.ts", "lab/core/wait.ts"]);

function sources(): string[] {
  return labSources((p, isDir) => (isDir ? p !== "lab/testing" : !PRIMITIVES.has(p))).sort();
}

/** Raw timers that could be a fixed lab-side deadline. */
const RAW_TIMER = /\bsetTimeout\(|\bAbortSignal\.timeout\(|\b(?:Date|performance)\.now\(\)\s*\+|\braceTimer\(/;
/** A marker: `// paced`, or `// fixed: <a reason>`. */
const MARKER = /\/\/ (?:paced\b|fixed: \S.{4,})/;
/** What a `// paced` timer takes its value from (named on its line or the line above). */
const FROM_PACE = /\bdeadline\(|\bPacedBudget\b|\bleftWallMs\(|\bpacedTimer\(|\bfactorNow\(/;
/** A bound marked as the expectation (threading an option through, `expectation: opts.expectation`, is not one). */
const EXPECTATION_MARK = /\bexpectation: true\b|\bbound: "expectation"/;
const WHY = /\/\/ (?:expectation|fixed): \S/;

const isComment = (line: string) => /^\s*(?:\/\/|\/\*|\*)/.test(line);
/** The line without a trailing `// ...` comment (a URL's `//` has no space before it). */
const code = (line: string) => line.replace(/\s\/\/\s.*$/, "");

/** The raw timers of `text` without a truthful marker, as "file:line: code". */
export function unmarkedTimers(file: string, text: string): string[] {
  const lines = text.split("\n");
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (isComment(line) || !RAW_TIMER.test(code(line))) return;
    const above = lines[i - 1] ?? "";
    const marker = MARKER.exec(line)?.[0] ?? (isComment(above) ? MARKER.exec(above)?.[0] : undefined);
    const truthful = marker !== undefined && (marker !== "// paced" || FROM_PACE.test(line) || FROM_PACE.test(above));
    if (!truthful) out.push(`${file}:${i + 1}: ${line.trim()}${marker === "// paced" ? "   <- marked paced, but takes nothing from the pace" : ""}`);
  });
  return out;
}

/** Expectation marks without their why (on the line, or in the comment lines directly above). */
export function unexplainedExpectations(file: string, text: string): string[] {
  const lines = text.split("\n");
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (isComment(line) || !EXPECTATION_MARK.test(code(line))) return;
    let why = WHY.test(line);
    for (let j = i - 1; !why && j >= 0 && isComment(lines[j]!); j--) why = WHY.test(lines[j]!);
    if (!why) out.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  return out;
}

const files = sources();
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");

describe("deadlines follow the machine's pace (lab/core/pace.ts)", () => {
  it("every raw timer says whether it is paced or why it is fixed", () => {
    const unmarked = files.flatMap((f) => unmarkedTimers(f, read(f)));
    expect(
      unmarked,
      `raw timers with no marker (${unmarked.length}). A lab-side deadline (the lab waiting for something it needs, whose passing can decide a verdict) must be paced: ` +
        "waitFor/withDeadline/PacedBudget, or deadline(ms) from lab/core/pace.ts for a bound counted by something else (AbortSignal.timeout(deadline(N))), marked `// paced`. " +
        "Anything else says why it is fixed, on its line or the line above: `// fixed: expectation: <the limit that is judged>`, `// fixed: not a deadline: <a poll interval, a force-close grace, ...>`, " +
        "`// fixed: clean-up budget when interrupted, judges nothing`.\n" +
        unmarked.join("\n"),
    ).toEqual([]);
  });

  it("every bound marked as the expectation says why", () => {
    const bare = files.flatMap((f) => unexplainedExpectations(f, read(f)));
    expect(bare, `expectation marks without an \`// expectation: <why>\` comment on their line or directly above (${bare.length}):\n${bare.join("\n")}`).toEqual([]);
  });

  it("a scenario that keeps a bound fixed as its expectation says so in its header", () => {
    const silent = files.filter((f) => f.startsWith("scenarios/") && EXPECTATION_MARK.test(read(f)) && !/not paced/.test(read(f).split("\nexport default")[0]!));
    expect(silent, 'scenarios marking a bound as the expectation with no "not paced" in their header (say which bounds are the expectation, fixed in wall time)').toEqual([]);
  });

  it("the checks can fail: an unmarked timer, an untruthful paced and a bare expectation are seen; marked ones pass", () => {
    const text = [
      "const a = setTimeout(f, 5_000);",
      "const b = AbortSignal.timeout(2_000); // paced",
      "const c = AbortSignal.timeout(deadline(2_000)); // paced",
      "// fixed: not a deadline: a poll interval",
      "await new Promise((r) => setTimeout(r, 200));",
      "const d = Date.now() + 3_000; // fixed: expectation: OpenClaw's documented 3 s",
      "// a comment that mentions setTimeout(f, 1) is no timer",
      "const e = performance.now() + 1;",
      "fetch(url); // see http://x/ for setTimeout(",
      "await raceTimer(body, ms);",
      "f({ timeoutMs: 1, bound: \"expectation\" });",
      "// expectation: the check's own bound",
      "g({ expectation: true });",
      "h({ expectation: opts.expectation });",
    ].join("\n");
    expect(unmarkedTimers("x.ts", text).map((l) => l.split(":")[1])).toEqual(["1", "2", "8", "10"]);
    expect(unexplainedExpectations("x.ts", text).map((l) => l.split(":")[1])).toEqual(["11"]);
  });
});
