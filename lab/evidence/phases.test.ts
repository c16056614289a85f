import { describe, expect, it } from "vitest";
import { Phases, STOP, type Phase } from "./phases.ts";

/** Phases on a clock that each phase moves by its own duration, so the recorded times are exact. */
function clocked() {
  let t = 0;
  const ran: string[] = [];
  const phases = new Phases(() => t);
  const phase = (name: string, ms: number, o: { fails?: boolean; stops?: boolean } & Partial<Phase> = {}): Phase => ({
    name,
    cleanup: o.cleanup,
    when: o.when,
    run: async () => {
      ran.push(name);
      t += ms;
      if (o.fails) throw new Error(`${name} broke`);
      if (o.stops) return STOP;
    },
  });
  return { phases, phase, ran };
}

describe("named, timed phases", () => {
  it("every phase is recorded in order with its time and ok", async () => {
    const { phases, phase, ran } = clocked();
    await phases.sequence([phase("network", 120), phase("members", 9_000), phase("operator", 800)]);
    expect(ran).toEqual(["network", "members", "operator"]);
    expect(phases.rows).toEqual([
      { name: "network", ms: 120, ok: true },
      { name: "members", ms: 9_000, ok: true },
      { name: "operator", ms: 800, ok: true },
    ]);
  });

  it("a failing phase is recorded ok: false, the phases after it do not run, the clean-up ones do, and its error is thrown after them", async () => {
    const { phases, phase, ran } = clocked();
    const run = phases.sequence([phase("lab", 10), phase("body", 50, { fails: true }), phase("drain", 5, { cleanup: true }), phase("evidence checks", 30), phase("lab after", 7, { cleanup: true })]);
    await expect(run).rejects.toThrow("body broke");
    expect(ran).toEqual(["lab", "body", "drain", "lab after"]);
    expect(phases.rows).toEqual([
      { name: "lab", ms: 10, ok: true },
      { name: "body", ms: 50, ok: false },
      { name: "drain", ms: 5, ok: true },
      { name: "lab after", ms: 7, ok: true },
    ]);
  });

  it("a clean-up that fails too is recorded, the next clean-up still runs, and the first error is the one thrown", async () => {
    const { phases, phase, ran } = clocked();
    await expect(phases.sequence([phase("body", 1, { fails: true }), phase("drain", 1, { cleanup: true, fails: true }), phase("lab after", 1, { cleanup: true })])).rejects.toThrow("body broke");
    expect(ran).toEqual(["body", "drain", "lab after"]);
    expect(phases.rows.map((r) => [r.name, r.ok])).toEqual([["body", false], ["drain", false], ["lab after", true]]);
    const alone = clocked();
    await expect(alone.phases.sequence([alone.phase("body", 1), alone.phase("drain", 1, { cleanup: true, fails: true })])).rejects.toThrow("drain broke");
  });

  it("a phase that stops ends the sequence without an error: clean-ups still run, and one with nothing to do (when) is left out", async () => {
    const { phases, phase, ran } = clocked();
    let bodyRan = false;
    await phases.sequence([
      phase("needs", 3, { stops: true }),
      phase("body", 1, { when: () => (bodyRan = true) }),
      phase("drain", 1, { cleanup: true, when: () => bodyRan }),
      phase("record", 2, { cleanup: true }),
    ]);
    expect(ran).toEqual(["needs", "record"]);
    expect(phases.rows).toEqual([
      { name: "needs", ms: 3, ok: true },
      { name: "record", ms: 2, ok: true },
    ]);
  });

  it("run() times one phase on its own and hands its value or error on", async () => {
    const phases = new Phases();
    expect(await phases.run("images", async () => 42)).toBe(42);
    await expect(phases.run("operator", async () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(phases.rows.map((r) => [r.name, r.ok])).toEqual([["images", true], ["operator", false]]);
    expect(phases.rows.every((r) => Number.isInteger(r.ms) && r.ms >= 0)).toBe(true);
  });
});
