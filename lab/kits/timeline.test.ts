import { describe, expect, it } from "vitest";
import type { TimelineEntry } from "../faults/index.ts";
import { summarizeFaults } from "./timeline.ts";

const entry = (id: string, step: TimelineEntry["step"], t: number, ms: number, extra: Partial<TimelineEntry> = {}): TimelineEntry => ({ id, fault: "partition", target: "tap-node-2<->gateway", step, t, ms, ...extra });

describe("summarizeFaults", () => {
  it("gives inject -> in effect, how long the fault held, and heal -> healed per fault", () => {
    const s = summarizeFaults([
      entry("f1", "prepare", 1_000, 300),
      entry("f1", "inject", 1_300, 50),
      entry("f1", "in-effect", 1_350, 250),
      entry("f2", "trigger", 1_400, 700, { fault: "kill", target: "node-1" }),
      entry("f1", "heal", 27_000, 120),
      entry("f1", "healed", 27_120, 40),
      entry("f1", "cleanup", 27_160, 60),
    ]);
    expect(s).toEqual([
      { id: "f1", fault: "partition", target: "tap-node-2<->gateway", injectMs: 50, inEffectMs: 250, heldMs: 25_400, healMs: 120, healedMs: 40 },
      { id: "f2", fault: "kill", target: "node-1", triggerMs: 700 },
    ]);
  });

  it("keeps the steps that failed", () => {
    const s = summarizeFaults([entry("f3", "inject", 0, 10), entry("f3", "failed", 10, 30_000, { detail: { during: "in-effect" }, error: "not in effect within 30000 ms" })]);
    expect(s[0]!.failed).toEqual(["in-effect: not in effect within 30000 ms"]);
  });
});
