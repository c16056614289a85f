// The unit project's setup file (vitest.config.ts): what a test writes straight to this process's
// stderr (the lab's progress lines, e.g. "fleetlab: scenario boom: FAIL in 0.2 s" from a fixture
// that is meant to fail) is held while the test runs, dropped when it passes and printed, under
// the test's name, when it fails. A passing run is quiet; a failing test keeps all its context.
// Console output is vitest's own to show; writes outside a test (a file's set-up) pass through.
// One buffer per file: a file's tests run one after another (none is `concurrent`).
import { afterEach, beforeEach } from "vitest";

// The stream's own write, kept once per process (a worker that runs several files loads this again).
const ORIGINAL = Symbol.for("fleetlab.held-stderr.write");
const holder = process.stderr as unknown as Record<symbol, (chunk: string | Uint8Array, ...rest: unknown[]) => boolean>;
holder[ORIGINAL] ??= process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
const write = holder[ORIGINAL];
let held: string[] | undefined;

process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  if (!held) return write(chunk, ...rest);
  held.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
  const done = rest.find((r): r is () => void => typeof r === "function");
  if (done) queueMicrotask(done);
  return true;
}) as typeof process.stderr.write;

beforeEach(() => {
  held = [];
});

afterEach((ctx) => {
  const out = held ?? [];
  held = undefined;
  if (ctx.task.result?.state === "fail" && out.length) write(`--- stderr of the failed test "${ctx.task.fullName ?? ctx.task.name}":\n${out.join("")}--- end of its stderr\n`);
});
