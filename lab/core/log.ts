// Progress output for long steps, on stderr so stdout stays for tables and paths.
//
// On a terminal, the steps running now share one status line, rewritten in place every
// second ("fleetlab: ⏳ gateway /readyz 12 s · pairing node-1 3 s"); info() lines and each
// finished step's "done in" line print above it, and the line is cleared when the last step
// ends. Anywhere else (CI logs, pipes, vitest workers) nothing is ever rewritten: a line when
// a step starts, one when it ends, and a "still waiting" line every 30 s while it runs.
// FLEETLAB_QUIET=1 silences all of it.
import { AsyncLocalStorage } from "node:async_hooks";
import { env } from "./settings.ts";

/** Where progress goes: process.stderr, or a fake one in tests. */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** Rewrite one status line in place (default: the stream is a terminal and TERM is not "dumb"). */
  live?: boolean;
  /** Clock in ms (default performance.now). */
  now?: () => number;
  /** How often the status line is redrawn (default 1 s). */
  refreshMs?: number;
  /** Off a terminal: a "still waiting" line per running step this often (default 30 s). */
  stillWaitingMs?: number;
  /** Checked at every write (default FLEETLAB_QUIET=1). */
  quiet?: () => boolean;
}

export interface StepOptions {
  /**
   * Show the step only once it has run this long (ms): a wait that is usually over at once
   * prints nothing then, and its start and end lines when it does take a while.
   */
  showAfterMs?: number;
}

export interface Progress {
  info(msg: string): void;
  /** Run a step: what it does or waits for, how long it takes, whether it failed. */
  step<T>(label: string, fn: () => Promise<T>, opts?: StepOptions): Promise<T>;
  /** What the innermost running step (of the caller's async context) waits for now; a no-op outside any step. */
  status(text: string | undefined): void;
  /** Take the status line off the terminal (at exit). */
  clear(): void;
}

interface Running {
  label: string;
  status?: string;
  t0: number;
  /** Off a terminal: the still-waiting lines. */
  timer?: NodeJS.Timeout;
  /** Until the step is shown (StepOptions.showAfterMs). */
  hidden?: NodeJS.Timeout;
}

const PREFIX = "fleetlab: ";
const HOURGLASS = "⏳ ";
const CLEAR_LINE = "\r\x1b[K";

export function createProgress(stream: ProgressStream, opts: ProgressOptions = {}): Progress {
  const now = opts.now ?? (() => performance.now());
  const quiet = opts.quiet ?? (() => env("FLEETLAB_QUIET") === "1");
  const live = opts.live ?? (stream.isTTY === true && env("TERM") !== "dumb");
  const refreshMs = opts.refreshMs ?? 1_000;
  const stillWaitingMs = opts.stillWaitingMs ?? 30_000;
  const current = new AsyncLocalStorage<Running>();
  const running: Running[] = [];
  let shown = false; // the status line is on the terminal now
  let refresh: NodeJS.Timeout | undefined;

  const draw = () => {
    if (quiet() || !running.length) return;
    stream.write(`\r${statusLine(running, now(), (stream.columns ?? 80) - 1)}\x1b[K`);
    shown = true;
  };
  const clear = () => {
    if (!shown) return;
    stream.write(CLEAR_LINE);
    shown = false;
  };
  /** A permanent line: above the status line on a terminal. */
  const line = (text: string) => {
    if (quiet()) return;
    if (live) {
      clear();
      stream.write(`${PREFIX}${text}\n`);
      draw();
    } else stream.write(`${PREFIX}${text}\n`);
  };

  const start = (s: Running) => {
    running.push(s);
    if (live) {
      draw();
      refresh ??= setInterval(draw, refreshMs).unref();
    } else {
      if (!quiet()) stream.write(`${PREFIX}${s.label} ...\n`);
      s.timer = setInterval(() => {
        if (!quiet()) stream.write(`${PREFIX}still waiting: ${withStatus(s)} (${Math.round((now() - s.t0) / 1000)} s)\n`);
      }, stillWaitingMs).unref();
    }
  };
  const end = (s: Running, outcome: string) => {
    if (s.hidden) return clearTimeout(s.hidden); // over before it was worth showing
    running.splice(running.indexOf(s), 1);
    clearInterval(s.timer);
    if (!running.length && refresh) {
      clearInterval(refresh);
      refresh = undefined;
    }
    line(`${s.label}: ${outcome} ${fmtSecs(now() - s.t0)}`);
  };

  return {
    info: (msg) => line(msg),
    clear,
    status(text) {
      const s = current.getStore();
      if (!s || s.status === text) return;
      s.status = text;
      if (live && running.includes(s)) draw();
    },
    async step<T>(label: string, fn: () => Promise<T>, stepOpts: StepOptions = {}): Promise<T> {
      const s: Running = { label, t0: now() };
      if (stepOpts.showAfterMs && stepOpts.showAfterMs > 0) {
        // fixed: not a deadline: when a step's progress line shows
        s.hidden = setTimeout(() => {
          s.hidden = undefined;
          start(s);
        }, stepOpts.showAfterMs).unref();
      } else start(s);
      try {
        const out = await current.run(s, fn);
        end(s, "done in");
        return out;
      } catch (err) {
        end(s, "FAILED after");
        throw err;
      }
    },
  };
}

function withStatus(s: Running): string {
  return s.status ? `${s.label}: ${s.status}` : s.label;
}

/**
 * "fleetlab: ⏳ label 12 s · label 3 s" within `width` columns: when it does not fit, the
 * longest labels are shortened first (an ellipsis marks the cut), so every step stays visible.
 */
function statusLine(steps: readonly Running[], at: number, width: number): string {
  const head = PREFIX + HOURGLASS;
  const headWidth = head.length + 1; // the hourglass takes two columns
  const times = steps.map((s) => ` ${Math.floor((at - s.t0) / 1000)} s`);
  const labels = steps.map(withStatus);
  const budget = width - headWidth - times.reduce((a, t) => a + t.length, 0) - 3 * (steps.length - 1);
  const sum = (cap: number) => labels.reduce((a, l) => a + Math.min(l.length, cap), 0);
  let cap = Math.max(0, ...labels.map((l) => l.length));
  while (cap > 8 && sum(cap) > budget) cap--;
  const parts = steps.map((s, i) => fit(s, cap) + times[i]);
  const text = head + parts.join(" · ");
  return text.length + 1 > width ? cut(text, width - 1) : text;
}

/** A step's label and status in at most `cap` characters; what it waits for now keeps the most room. */
function fit(s: Running, cap: number): string {
  const full = withStatus(s);
  if (full.length <= cap) return full;
  if (!s.status) return cut(s.label, cap);
  const label = Math.min(s.label.length, Math.max(10, cap - s.status.length - 2));
  return `${cut(s.label, label)}: ${cut(s.status, cap - label - 2)}`;
}

function cut(text: string, n: number): string {
  return text.length <= n ? text : n <= 1 ? "…".slice(0, n) : `${text.slice(0, n - 1)}…`;
}

function fmtSecs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

// ---- the lab's progress, on this process's stderr ----

let progress: Progress | undefined;
function stderrProgress(): Progress {
  if (!progress) {
    const p = (progress = createProgress(process.stderr));
    // A process that exits with a step still running does not leave the status line behind.
    if (process.stderr.isTTY) process.once("exit", () => p.clear());
  }
  return progress;
}

export function info(msg: string): void {
  stderrProgress().info(msg);
}

/** Run a step, showing what it does or waits for and for how long, then its duration (or failure). */
export function step<T>(label: string, fn: () => Promise<T>, opts?: StepOptions): Promise<T> {
  return stderrProgress().step(label, fn, opts);
}

/**
 * Say what the step this code runs in is waiting for now (e.g. "node-1: device approved,
 * waiting for it to reconnect"): shown on the status line on a terminal and in the "still
 * waiting" lines elsewhere. Outside any step it does nothing.
 */
export function stepStatus(text: string | undefined): void {
  stderrProgress().status(text);
}

export function secs(t0: number): string {
  return fmtSecs(performance.now() - t0);
}

/** An error whose message is meant for the user as is (bad input, missing engine, ...). */
export { LabError } from "./errors.ts";
