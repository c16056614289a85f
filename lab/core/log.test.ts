import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { createProgress, type ProgressOptions } from "./log.ts";

/** A stderr stand-in: a Writable that keeps what was written, a terminal or not. */
function fakeStderr(isTTY: boolean, columns = 120) {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString());
        cb();
      },
    }),
    { isTTY, columns },
  );
  return { stream, text: () => chunks.join(""), chunks };
}

/** A step that ends when told to (resolve or reject). */
function pending<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const opts: ProgressOptions = { now: () => Date.now(), quiet: () => false };

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  vi.stubEnv("TERM", "xterm-256color");
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe("on a terminal", () => {
  test("one status line, rewritten in place, shows every running step; info() prints above it; cleared at the end", async () => {
    const { stream, text } = fakeStderr(true);
    const p = createProgress(stream, opts);
    const ready = pending();
    const pairing = pending();

    const a = p.step("gateway /readyz", () => ready.promise);
    expect(text()).toBe("\rfleetlab: ⏳ gateway /readyz 0 s\x1b[K");
    await vi.advanceTimersByTimeAsync(9_000);
    expect(text()).toContain("\rfleetlab: ⏳ gateway /readyz 9 s\x1b[K"); // refreshed every second, in place
    const b = p.step("pairing node-1", () => pairing.promise);
    await vi.advanceTimersByTimeAsync(3_000);

    // concurrent steps share the one line
    const now = text();
    expect(now.endsWith("\rfleetlab: ⏳ gateway /readyz 12 s · pairing node-1 3 s\x1b[K")).toBe(true);
    expect(now).not.toContain("\n"); // nothing permanent yet: only the status line, rewritten

    // info: clear the status line, print, draw it again
    p.info("node node-1 still not connected: restarting it");
    expect(text().slice(now.length)).toBe(
      "\r\x1b[K" + "fleetlab: node node-1 still not connected: restarting it\n" + "\rfleetlab: ⏳ gateway /readyz 12 s · pairing node-1 3 s\x1b[K",
    );

    // a step that ends prints its line above the status line, which goes on without it
    let mark = text().length;
    ready.resolve();
    await a;
    expect(text().slice(mark)).toBe("\r\x1b[K" + "fleetlab: gateway /readyz: done in 12.0 s\n" + "\rfleetlab: ⏳ pairing node-1 3 s\x1b[K");

    await vi.advanceTimersByTimeAsync(2_000);
    expect(text().endsWith("\rfleetlab: ⏳ pairing node-1 5 s\x1b[K")).toBe(true);

    // the last step to end clears the line for good
    mark = text().length;
    pairing.reject(new Error("timed out"));
    await expect(b).rejects.toThrow("timed out");
    expect(text().slice(mark)).toBe("\r\x1b[K" + "fleetlab: pairing node-1: FAILED after 5.0 s\n");
    mark = text().length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(text().length).toBe(mark); // no more redraws

    // info with no step running: a plain line, nothing to clear
    p.info("images ready");
    expect(text().slice(mark)).toBe("fleetlab: images ready\n");
  });

  test("what a step waits for now (status) shows on its part of the line, from inside the step's own async work", async () => {
    const { stream, text } = fakeStderr(true);
    const p = createProgress(stream, opts);
    const gate = pending();
    const s = p.step("pairing node-1, node-2", async () => {
      p.status("node-1 device approved, waiting for it to ask for node pairing");
      await gate.promise;
      p.status("node-1 connected, waiting for its worker slots");
      return 7;
    });
    p.status("outside any step: ignored");
    await vi.advanceTimersByTimeAsync(4_000);
    expect(text().endsWith("\rfleetlab: ⏳ pairing node-1, node-2: node-1 device approved, waiting for it to ask for node pairing 4 s\x1b[K")).toBe(true);
    expect(text()).not.toContain("ignored");
    gate.resolve();
    await expect(s).resolves.toBe(7);
    expect(text()).toContain("node-1 connected, waiting for its worker slots 4 s\x1b[K");
    expect(text().endsWith("\r\x1b[K" + "fleetlab: pairing node-1, node-2: done in 4.0 s\n")).toBe(true);
  });

  test("a nested step shows beside its outer step and reports to its own part", async () => {
    const { stream, text } = fakeStderr(true);
    const p = createProgress(stream, opts);
    const inner = pending();
    const outer = p.step("images", () => p.step("building image fleetlab/base:abc", () => inner.promise));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(text().endsWith("\rfleetlab: ⏳ images 1 s · building image fleetlab/base:abc 1 s\x1b[K")).toBe(true);
    inner.resolve();
    await outer;
    expect(text().endsWith("fleetlab: building image fleetlab/base:abc: done in 1.0 s\n" + "\rfleetlab: ⏳ images 1 s\x1b[K" + "\r\x1b[K" + "fleetlab: images: done in 1.0 s\n")).toBe(true);
  });

  test("the status line never wraps: long labels are shortened to the terminal's width", async () => {
    const { stream, chunks } = fakeStderr(true, 80);
    const p = createProgress(stream, opts);
    const gate = pending();
    const steps = [
      p.step("containers started (model, git, north, south, tap-node-1, tap-node-2, gateway, node-1, node-2)", () => gate.promise),
      p.step("gateway /readyz, model, git, north, south, tap-node-1, tap-node-2 /healthz", async () => {
        p.status("still starting");
        await gate.promise;
      }),
    ];
    await vi.advanceTimersByTimeAsync(12_000);
    const lines = chunks.filter((c) => c.includes("⏳")).map((c) => c.replace(/^\r/, "").replace(/\x1b\[K$/, ""));
    expect(lines.length).toBeGreaterThan(10);
    for (const l of lines) expect(l.length + 1).toBeLessThanOrEqual(79); // ⏳ takes two columns
    const last = lines.at(-1)!;
    expect(last).toMatch(/^fleetlab: ⏳ containers.*… 12 s · gateway.*…: still starting 12 s$/); // what it waits for keeps its room
    gate.resolve();
    await Promise.all(steps);
  });

  test("a step with showAfterMs joins the status line only once it has run that long", async () => {
    const { stream, text } = fakeStderr(true);
    const p = createProgress(stream, opts);
    const gate = pending();
    const outer = p.step("scenario reconnect", () => gate.promise);
    const quick = p.step("waiting for node-1 to offer its worker slots again", async () => {
      await vi.advanceTimersByTimeAsync(500);
    }, { showAfterMs: 1_000 });
    await quick;
    expect(text()).not.toContain("worker slots");
    const slow = p.step("waiting for the gateway to notice node-1 is gone (up to 75 s)", async () => {
      await vi.advanceTimersByTimeAsync(3_000);
    }, { showAfterMs: 1_000 });
    await slow;
    expect(text()).toContain("\rfleetlab: ⏳ scenario reconnect 3 s · waiting for the gateway to notice node-1 is gone (up to 75 s) 2 s\x1b[K");
    expect(text()).toContain("fleetlab: waiting for the gateway to notice node-1 is gone (up to 75 s): done in 3.0 s\n");
    gate.resolve();
    await outer;
  });

  test("TERM=dumb is treated as no terminal", async () => {
    vi.stubEnv("TERM", "dumb");
    const { stream, text } = fakeStderr(true);
    await createProgress(stream, opts).step("x", async () => {});
    expect(text()).toBe("fleetlab: x ...\nfleetlab: x: done in 0.0 s\n");
  });
});

describe("off a terminal (CI logs, pipes)", () => {
  test("a line when a step starts and one when it ends; a still-waiting line every 30 s; nothing rewritten", async () => {
    const { stream, text } = fakeStderr(false);
    const p = createProgress(stream, opts);
    const build = pending();
    const s = p.step("building image fleetlab/openclaw-pkg:abc", () => build.promise);
    expect(text()).toBe("fleetlab: building image fleetlab/openclaw-pkg:abc ...\n");
    await vi.advanceTimersByTimeAsync(29_000);
    expect(text().split("\n")).toHaveLength(2); // no line per second
    await vi.advanceTimersByTimeAsync(36_000);
    build.resolve();
    await s;
    expect(text()).toBe(
      [
        "fleetlab: building image fleetlab/openclaw-pkg:abc ...",
        "fleetlab: still waiting: building image fleetlab/openclaw-pkg:abc (30 s)",
        "fleetlab: still waiting: building image fleetlab/openclaw-pkg:abc (60 s)",
        "fleetlab: building image fleetlab/openclaw-pkg:abc: done in 65.0 s",
        "",
      ].join("\n"),
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(text().split("\n")).toHaveLength(5); // the still-waiting timer ended with the step
    expect(text()).not.toContain("\r");
    expect(text()).not.toContain("\x1b");
  });

  test("concurrent steps and info() each get whole lines; a step's status shows in its still-waiting line; a failure says so", async () => {
    const { stream, text } = fakeStderr(false);
    const p = createProgress(stream, opts);
    const pairing = pending();
    const keepalive = pending();
    const a = p.step("pairing node-1, node-2", async () => {
      p.status("node-2 device approved, waiting for it to ask for node pairing");
      await pairing.promise;
    });
    await vi.advanceTimersByTimeAsync(10_000);
    const b = p.step("waiting for the gateway to notice node-1 is gone (up to 75 s)", () => keepalive.promise);
    p.info("node node-2 still not connected 2 s after device approval: restarting it");
    await vi.advanceTimersByTimeAsync(25_000);
    pairing.resolve();
    await a;
    keepalive.reject(new Error("timed out"));
    await expect(b).rejects.toThrow("timed out");
    expect(text()).toBe(
      [
        "fleetlab: pairing node-1, node-2 ...",
        "fleetlab: waiting for the gateway to notice node-1 is gone (up to 75 s) ...",
        "fleetlab: node node-2 still not connected 2 s after device approval: restarting it",
        "fleetlab: still waiting: pairing node-1, node-2: node-2 device approved, waiting for it to ask for node pairing (30 s)",
        "fleetlab: pairing node-1, node-2: done in 35.0 s",
        "fleetlab: waiting for the gateway to notice node-1 is gone (up to 75 s): FAILED after 25.0 s",
        "",
      ].join("\n"),
    );
  });

  test("a step with showAfterMs prints nothing when it is over sooner, and its lines when it is not", async () => {
    const { stream, text } = fakeStderr(false);
    const p = createProgress(stream, opts);
    await p.step("waiting for node-1 to offer its worker slots again", async () => {
      await vi.advanceTimersByTimeAsync(400);
    }, { showAfterMs: 1_000 });
    expect(text()).toBe("");
    const slow = p.step("waiting for node-1 to connect to the gateway again", async () => {
      await vi.advanceTimersByTimeAsync(4_000);
    }, { showAfterMs: 1_000 });
    await slow;
    expect(text()).toBe("fleetlab: waiting for node-1 to connect to the gateway again ...\nfleetlab: waiting for node-1 to connect to the gateway again: done in 4.0 s\n");
  });

  test("FLEETLAB_QUIET=1 silences everything, and steps still run and return", async () => {
    vi.stubEnv("FLEETLAB_QUIET", "1");
    for (const isTTY of [true, false]) {
      const { stream, text } = fakeStderr(isTTY);
      const p = createProgress(stream, { now: () => Date.now() });
      const r = p.step("x", async () => {
        p.status("y");
        await vi.advanceTimersByTimeAsync(61_000);
        return 42;
      });
      p.info("hello");
      await expect(r).resolves.toBe(42);
      expect(text()).toBe("");
    }
  });
});
