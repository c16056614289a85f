import { describe, expect, it } from "vitest";
import { StallWatch, mainThreadSched, overlapping, stallCause, stallNote, stallSummary } from "./stalls.ts";

/** Let the watcher tick (`ms` of an idle event loop). */
async function afterTick(ms = 150): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}
/** Keep the event loop from running for `ms` (a busy loop, on a CPU). */
function spin(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until); // block the loop
}

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
    await afterTick();
    const from = Date.now();
    spin(1_300);
    await afterTick(250);
    const seen = w.within(from, Date.now());
    expect(seen).toHaveLength(1);
    expect(seen[0]!.ms).toBeGreaterThanOrEqual(1_000);
    expect(w.delay().max).toBeGreaterThanOrEqual(1_000);
  });

  it("the run's summary counts a 400 ms block as a stall of 250 ms or more, not of 1 s or more", async () => {
    const w = StallWatch.get();
    await afterTick();
    const from = Date.now();
    spin(400);
    await afterTick(250);
    const s = stallSummary(w, from);
    expect(s.over250ms).toBe(1);
    expect(s.over1s).toBe(0);
    expect(s.longestMs).toBeGreaterThanOrEqual(250);
    expect(s.longestMs).toBeLessThan(1_000);
  });

  it("a stall says where the main thread was: on a CPU for a busy loop, blocked for a synchronous wait (the kernel's schedstat)", async () => {
    if (!mainThreadSched()) return; // a kernel without schedstat: stalls carry no cause (checked below by stallCause alone)
    const w = StallWatch.get();
    await afterTick();
    const from = Date.now();
    spin(600); // on a CPU
    await afterTick(250);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600); // blocked, off any CPU
    await afterTick(250);
    const seen = w.counted.filter((s) => s.endedAt >= from);
    expect(seen).toHaveLength(2);
    const [busy, blocked] = seen.map((s) => s.where!);
    expect(busy!.cpuMs).toBeGreaterThan(busy!.blockedMs);
    expect(blocked!.blockedMs).toBeGreaterThan(blocked!.cpuMs);
    expect(blocked!.blockedMs).toBeGreaterThanOrEqual(500);
    const sum = stallSummary(w, from);
    expect(sum.where!.cpuMs).toBeGreaterThanOrEqual(busy!.cpuMs);
    expect(sum.longest).toHaveLength(2);
  });

  it("the cause splits the interval: CPU and queue time from the readings, the rest blocked; GC no more than the CPU time", () => {
    expect(stallCause({ cpuMs: 100, queuedMs: 50 }, { cpuMs: 400, queuedMs: 850 }, 1_500, 900)).toEqual({ cpuMs: 300, gcMs: 300, queuedMs: 800, blockedMs: 400 });
    expect(stallCause({ cpuMs: 0, queuedMs: 0 }, { cpuMs: 10, queuedMs: 0 }, 1_000, 0)).toEqual({ cpuMs: 10, gcMs: 0, queuedMs: 0, blockedMs: 990 });
  });
});
