import { describe, expect, it } from "vitest";
import { StallWatch, overlapping, stallNote, stallSummary } from "./stalls.ts";

describe("stalls of the lab's own process", () => {
  const at = Date.parse("2026-11-30T14:30:52.959Z");
  const stall = { endedAt: at, ms: 24_400 };

  it("a stall counts for every window it overlaps, and only those", () => {
    expect(overlapping([stall], at - 60_000, at - 30_000)).toEqual([]); // ended before it began
    expect(overlapping([stall], at - 30_000, at - 10_000)).toEqual([stall]); // the window ends inside it
    expect(overlapping([stall], at - 1_000, at + 5_000)).toEqual([stall]); // begins inside it
    expect(overlapping([stall], at + 1, at + 5_000)).toEqual([]); // after it
  });

  it("the note gives the total, the longest and when it began", () => {
    expect(stallNote([])).toBeUndefined();
    expect(stallNote([stall, { endedAt: at + 10_000, ms: 1_200 }])).toBe(
      "the lab's own process stalled 25.6 s in 2 stall(s) during this scenario (longest 24.4 s, from 14:30:28.559Z): timings measured across a stall are partly the lab's",
    );
  });

  it("a blocked event loop is seen as a stall", async () => {
    const w = StallWatch.get();
    await new Promise((r) => setTimeout(r, 150));
    const from = Date.now();
    const until = Date.now() + 1_300;
    while (Date.now() < until); // block the loop
    await new Promise((r) => setTimeout(r, 250));
    const seen = w.within(from, Date.now());
    expect(seen).toHaveLength(1);
    expect(seen[0]!.ms).toBeGreaterThanOrEqual(1_000);
    expect(w.delay().max).toBeGreaterThanOrEqual(1_000);
  });

  it("the run's summary counts a 400 ms block as a stall of 250 ms or more, not of 1 s or more", async () => {
    const w = StallWatch.get();
    await new Promise((r) => setTimeout(r, 150));
    const from = Date.now();
    const until = Date.now() + 400;
    while (Date.now() < until); // block the loop
    await new Promise((r) => setTimeout(r, 250));
    const s = stallSummary(w, from);
    expect(s.over250ms).toBe(1);
    expect(s.over1s).toBe(0);
    expect(s.longestMs).toBeGreaterThanOrEqual(250);
    expect(s.longestMs).toBeLessThan(1_000);
  });
});
