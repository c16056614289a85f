import { describe, expect, it } from "vitest";
import { StopWaiting, WaitTimeout, pollUntil } from "./wait.ts";

/** A value that changes from `before` to `after` once `ms` have gone by (a fix landing late). */
function changesAfter<T>(ms: number, before: T, after: T): () => T {
  const at = Date.now() + ms;
  return () => (Date.now() >= at ? after : before);
}

describe("pollUntil", () => {
  it("returns the first observation that holds, without waiting for the deadline", async () => {
    let n = 0;
    const r = await pollUntil("the third value", () => ++n, (v) => v === 3, { deadlineMs: 5_000, intervalMs: 10 });
    expect(r).toMatchObject({ held: true, last: 3, polls: 3 });
    expect(r.ms).toBeLessThan(1_000);
  });

  it("sees a state that arrives later than a fixed snapshot would have looked, before its deadline", async () => {
    const probe = changesAfter(150, "broken", "fixed");
    const r = await pollUntil("the fix", probe, (v) => v === "fixed", { deadlineMs: 1_000, intervalMs: 20 });
    expect(r.held).toBe(true);
    expect(r.last).toBe("fixed");
    expect(r.ms).toBeGreaterThanOrEqual(150);
  });

  it("when nothing holds, returns the state observed at the deadline (not before it)", async () => {
    const probe = changesAfter(120, "early", "at-deadline");
    const r = await pollUntil("never", probe, () => false, { deadlineMs: 200, intervalMs: 30 });
    expect(r.held).toBe(false);
    expect(r.last).toBe("at-deadline");
    expect(r.ms).toBeGreaterThanOrEqual(200);
    expect(r.polls).toBeGreaterThan(2);
  });

  it("counts the deadline from `from`: a deadline already past probes once", async () => {
    const r = await pollUntil("late", () => "state", () => false, { deadlineMs: 1_000, from: Date.now() - 5_000 });
    expect(r).toMatchObject({ held: false, last: "state", polls: 1 });
    expect(r.ms).toBeGreaterThanOrEqual(5_000);
  });

  it("a deadline with no observation at all is a WaitTimeout, never an outcome", async () => {
    const failing = () => {
      throw new Error("control API down");
    };
    const err = await pollUntil("anything", failing, () => true, { deadlineMs: 100, intervalMs: 20 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    expect((err as Error).message).toMatch(/nothing observed; last error: control API down/);
  });

  it("retries a probe that throws and keeps the latest observation", async () => {
    let n = 0;
    const r = await pollUntil(
      "flaky",
      () => {
        n += 1;
        if (n % 2 === 0) throw new Error("flaky");
        return n;
      },
      () => false,
      { deadlineMs: 150, intervalMs: 20 },
    );
    expect(r.held).toBe(false);
    expect(r.last % 2).toBe(1);
  });

  it("StopWaiting from the probe ends the poll at once", async () => {
    const t0 = Date.now();
    const err = await pollUntil(
      "stopped",
      () => {
        throw new StopWaiting("the container exited");
      },
      () => true,
      { deadlineMs: 5_000 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StopWaiting);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it("an aborted signal ends the poll with its reason", async () => {
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("scenario timed out")), 50);
    const err = await pollUntil("aborted", () => 1, () => false, { deadlineMs: 5_000, intervalMs: 10, signal: ctl.signal }).catch((e: unknown) => e);
    expect((err as Error).message).toBe("scenario timed out");
  });
});
