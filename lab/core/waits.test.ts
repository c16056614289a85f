import { describe, expect, it } from "vitest";
import { pollUntil, sleep, waitFor, WaitTimeout } from "./wait.ts";
import { WaitLedger, bodyWaits, ownWorkS, waitBreakdown, withWaitLedger } from "./waits.ts";

describe("where a scenario body's waits went", () => {
  it("each millisecond once: a window before an observed wait before a pause, clipped to the body", () => {
    const b = waitBreakdown(
      [
        { kind: "pause", from: 0, to: 100 },
        { kind: "observed", from: 50, to: 300 }, // 50 of it under the pause: counted observed
        { kind: "window", from: 200, to: 500 }, // 100 of it under the observed wait: counted window
        { kind: "observed", from: 450, to: 900 }, // runs past the body's end (800)
        { kind: "request", from: 280, to: 320 }, // under the observed and the window: counted neither
        { kind: "request", from: 850, to: 1000 }, // after the observed wait, 800 is the end anyway
      ],
      0,
      800,
    );
    expect(b).toEqual({ pauseMs: 50, observedMs: 150 + 300, requestMs: 0, windowMs: 300 });
    expect(waitBreakdown([{ kind: "request", from: 10, to: 30 }, { kind: "pause", from: 20, to: 60 }], 0, 100)).toEqual({ windowMs: 0, observedMs: 0, requestMs: 20, pauseMs: 30 });
  });

  it("nothing outside a ledger is recorded, and a body's waits are told apart by how they ended", async () => {
    await sleep(5); // outside any ledger: nowhere to go, no error
    const ledger = new WaitLedger();
    await withWaitLedger(ledger, async () => {
      let n = 0;
      await waitFor("the third probe", () => ++n >= 3, { timeoutMs: 5_000, intervalMs: 20, bound: "expectation" });
      const r = await pollUntil("something that never comes", () => 0, (v) => v > 0, { deadlineMs: 120, intervalMs: 20 });
      expect(r.held).toBe(false);
      await sleep(60);
      await expect(waitFor("never", () => false, { timeoutMs: 80, intervalMs: 20, bound: "expectation" })).rejects.toBeInstanceOf(WaitTimeout);
    });
    expect(ledger.intervals.map((i) => i.kind)).toEqual(["observed", "window", "pause", "window"]);
    const [observed, window, pause] = ledger.intervals;
    expect(observed!.to - observed!.from).toBeGreaterThanOrEqual(30);
    expect(window!.to - window!.from).toBeGreaterThanOrEqual(110);
    expect(pause!.to - pause!.from).toBeGreaterThanOrEqual(55);
  });

  it("a body's waits in seconds, and what no wait covers (never below 0)", () => {
    const w = bodyWaits([{ kind: "window", from: 1_000, to: 3_000 }, { kind: "request", from: 3_000, to: 3_500 }], 1_000, 5_000);
    expect(w).toEqual({ bodyS: 4, windowS: 2, observedS: 0, requestS: 0.5, pauseS: 0 });
    expect(ownWorkS(w)).toBe(1.5);
    expect(ownWorkS({ bodyS: 1, windowS: 2, observedS: 0, pauseS: 0 })).toBe(0);
  });
});
