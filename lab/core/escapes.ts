// Errors that escape their owner: a promise that rejects with nobody awaiting it (a floating
// `x.wait()` awaited only after a loop), a throw from a timer or an event callback. Node 24 ends
// the whole process on either (a full `make lab` died that way 40 minutes in: no verdict table,
// labs left running). Here each one is charged to the owner whose async context it came from:
// the scenario body (or any other scope) runs inside `withEscapes`, and Node runs the
// 'unhandledRejection' and 'uncaughtException' listeners in the async context of the promise or
// callback that failed (measured on Node 24.22: a promise rejected 50 ms after its scope
// returned, a timer's throw and an async function's throw each came with their own scope).
// What no scope owns is a bug of the lab itself: it goes to the handler the process set
// (`onUnownedEscape`; the CLI's removes the labs, prints the table so far and exits 3; the
// vitest suite's fails its last test). While these listeners are installed, vitest leaves
// unhandled errors to them (it reports one only when its own listener is the only one).
import { AsyncLocalStorage } from "node:async_hooks";

export type EscapeKind = "unhandled rejection" | "uncaught exception";

export interface Escape {
  error: unknown;
  kind: EscapeKind;
  /** The scope it escaped from. */
  owner: string;
}

interface Scope {
  owner: string;
  onEscape: (e: Escape) => void;
  /** Closed scopes still own what escapes from them later (it is said, not charged). */
  closed: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();
let unowned: (e: Escape) => void = defaultUnowned;
let late: (e: Escape) => void = (e) => process.stderr.write(`fleetlab: after ${e.owner} ended, an error escaped it (${e.kind}): ${describe(e.error)}\n`);
let installed = false;

/** A short, one-line description of what escaped (its stack goes to the owner's log). */
export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  return String(error);
}

function defaultUnowned(e: Escape): void {
  // Outside the CLI (vitest, the bench): say it; the host process decides what else happens.
  process.stderr.write(`fleetlab: an error escaped the lab (${e.kind}) and no scenario owns it: ${(e.error as Error)?.stack ?? e.error}\n`);
}

/** Writing evidence failed for want of space or a working disk: the lab's own failure, whoever wrote. */
const WRITE_FAILURES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EIO"]);
export function isWriteFailure(error: unknown): error is NodeJS.ErrnoException {
  return !!error && typeof error === "object" && WRITE_FAILURES.has(String((error as NodeJS.ErrnoException).code));
}

/** What failed to be written, for the message that ends the run: the error and the file. */
export function writeFailureText(e: NodeJS.ErrnoException): string {
  return `${e.message}${e.path && !e.message.includes(e.path) ? `, writing ${e.path}` : ""}`;
}

/**
 * Report an error where it happened without throwing it into the caller (an event handler, a
 * stream's error, a heal that worked but whose record could not be written): it escapes, and
 * the trap routes it (a write failure ends the run as the lab's own error).
 */
export function raise(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

function dispatch(kind: EscapeKind, error: unknown): void {
  // A full or failing disk is nobody's scenario: the run's evidence can no longer be trusted.
  if (isWriteFailure(error)) return unowned({ error, kind, owner: "the lab's evidence" });
  const scope = scopes.getStore();
  const e = { error, kind, owner: scope?.owner ?? "the lab" };
  if (!scope) return unowned(e);
  if (scope.closed) return late(e);
  scope.onEscape(e);
}

/** Listen for escaped errors for the rest of the process (idempotent). */
export function installEscapeTrap(): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => dispatch("unhandled rejection", reason));
  process.on("uncaughtException", (err) => dispatch("uncaught exception", err));
}

/** What happens to an escape no scope owns (the CLI: clean up, print the table so far, exit 3). */
export function onUnownedEscape(fn: (e: Escape) => void): void {
  unowned = fn;
}

/** What happens to an escape from a scope that has already ended (default: one line on stderr). */
export function onLateEscape(fn: (e: Escape) => void): void {
  late = fn;
}

/**
 * Run `fn` as `owner`: anything that escapes from it or from what it started (now or later) is
 * handed to `onEscape` until `close()` is called, and said as late after that.
 */
export function withEscapes<T>(owner: string, onEscape: (e: Escape) => void, fn: () => Promise<T>): { result: Promise<T>; close: () => void } {
  installEscapeTrap();
  const scope: Scope = { owner, onEscape, closed: false };
  const result = scopes.run(scope, () => Promise.resolve().then(fn));
  return { result, close: () => void (scope.closed = true) };
}
