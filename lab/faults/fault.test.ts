// The life cycle every fault shares, on an in-memory fault (no Docker): steps in order and
// timed into the run's faults.jsonl, heal at any point, and the heal registered on the lab's
// teardown stack, which heals what is left at the end of a scenario (newest first).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Run } from "../evidence/run.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { Fault, type Detail, type FaultOptions } from "./fault.ts";
import { FaultTimeline, TIMELINE_FILE } from "./timeline.ts";

/** A fault on a flag: in effect `effectAfterMs` after inject, healed `healAfterMs` after heal. */
class FlagFault extends Fault {
  readonly kind = "flag";
  on = false;
  prepared = false;
  cleaned = false;
  calls: string[] = [];
  #onAt = 0;
  #offAt = 0;
  readonly t: { effectAfterMs?: number; healAfterMs?: number; failHeal?: boolean; neverInEffect?: boolean };
  constructor(
    target: string,
    opts: FaultOptions & { run?: Run } = {},
    t: { effectAfterMs?: number; healAfterMs?: number; failHeal?: boolean; neverInEffect?: boolean } = {},
  ) {
    super(target, opts, lab);
    this.t = t;
    made.push(this);
  }
  protected async doPrepare() {
    this.calls.push("prepare");
    this.prepared = true;
  }
  protected async doInject(): Promise<Detail> {
    this.calls.push("inject");
    this.on = true;
    this.#onAt = performance.now();
    return { injected: true };
  }
  protected async inEffect() {
    return !this.t.neverInEffect && performance.now() - this.#onAt >= (this.t.effectAfterMs ?? 0) ? { seen: true } : undefined;
  }
  protected async doHeal() {
    this.calls.push("heal");
    if (this.t.failHeal) throw new Error("cannot heal");
    this.on = false;
    this.#offAt = performance.now();
  }
  protected async isHealed() {
    return performance.now() - this.#offAt >= (this.t.healAfterMs ?? 0) ? {} : undefined;
  }
  protected async doCleanup() {
    this.calls.push("cleanup");
    this.cleaned = true;
  }
}

/** The teardown stack of the lab these faults belong to. */
let lab = new TeardownStack();
const made: FlagFault[] = [];
afterEach(async () => {
  // Nothing from one test may leak into the next.
  for (const f of made.splice(0)) f.t.failHeal = false;
  await lab.drain();
  lab = new TeardownStack();
});

describe("fault life cycle", () => {
  it("inject waits until the fault is in effect, heal until healed; each step lands in the run's faults.jsonl", async () => {
    const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-faults-")) });
    const f = new FlagFault("node-1", { run, intervalMs: 5 }, { effectAfterMs: 60, healAfterMs: 40 });
    const inj = await f.inject();
    expect(f.on).toBe(true);
    expect(inj.prepareMs).toBeGreaterThanOrEqual(0);
    expect(inj.inEffectMs).toBeGreaterThanOrEqual(55);
    expect(inj.totalMs).toBeGreaterThanOrEqual(inj.injectMs + inj.inEffectMs - 1);
    expect(inj.detail).toMatchObject({ injected: true, seen: true });
    const h = await f.heal();
    expect(f.on).toBe(false);
    expect(f.cleaned).toBe(true);
    expect(h.healedMs).toBeGreaterThanOrEqual(35);
    expect(f.done).toBe(true);

    const lines = FaultTimeline.read(path.join(run.dir, TIMELINE_FILE));
    expect(lines.map((l) => l.step)).toEqual(["prepare", "inject", "in-effect", "heal", "healed", "cleanup"]);
    for (const l of lines) expect(l).toMatchObject({ id: f.id, fault: "flag", target: "node-1" });
    // t is when the step started (epoch ms), in order; ms how long it took.
    for (let i = 1; i < lines.length; i++) expect(lines[i]!.t).toBeGreaterThanOrEqual(lines[i - 1]!.t);
    expect(lines.find((l) => l.step === "in-effect")!.ms).toBeGreaterThanOrEqual(55);
    expect(Math.abs(lines[0]!.t - Date.now())).toBeLessThan(5000);
    // run.json points at the timeline.
    expect(JSON.parse(fs.readFileSync(path.join(run.dir, "run.json"), "utf8")).faults).toEqual({ timeline: TIMELINE_FILE });
  });

  it("a fault is injected once; heal is safe at any point and twice", async () => {
    const never = new FlagFault("x");
    await never.heal(); // never prepared: nothing to do
    expect(never.calls).toEqual([]);
    await expect(never.inject()).rejects.toThrow(/cannot inject in state cleaned/);

    const prepared = new FlagFault("y");
    await prepared.prepare();
    expect(lab.pending).toEqual([`heal ${prepared}`]);
    await prepared.heal(); // prepared only: clean up, no heal
    expect(prepared.calls).toEqual(["prepare", "cleanup"]);
    expect(lab.pending).toEqual([]);

    const f = new FlagFault("z");
    await f.inject();
    await expect(f.inject()).rejects.toThrow(/injected once/);
    await f.heal();
    await f.heal();
    expect(f.calls).toEqual(["prepare", "inject", "heal", "cleanup"]);
  });

  it("a fault that never shows up in effect fails inject with what it waited for, and heal still undoes the inject", async () => {
    const f = new FlagFault("node-2", { timeoutMs: 100, intervalMs: 10 }, { neverInEffect: true });
    await expect(f.inject()).rejects.toThrow(/flag node-2 \(f\d+\): not in effect within 100 ms/);
    expect(f.on).toBe(true);
    await f.heal();
    expect(f.on).toBe(false);
    expect(f.timeline.of(f.id).map((e) => e.step)).toEqual(["prepare", "inject", "failed", "heal", "healed", "cleanup"]);
  });

  it("healing during the wait for 'in effect' stops the wait and heals", async () => {
    const f = new FlagFault("node-3", { intervalMs: 10 }, { effectAfterMs: 10_000 });
    const injecting = f.inject();
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    await f.heal();
    await expect(injecting).rejects.toThrow(/being healed/);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(f.on).toBe(false);
    expect(f.done).toBe(true);
  });

  it("a prepare that fails half-way is cleaned up and leaves nothing registered", async () => {
    const f = new (class extends FlagFault {
      protected override async doPrepare() {
        this.calls.push("prepare");
        throw new Error("no helper for you");
      }
    })("p");
    await expect(f.inject()).rejects.toThrow("no helper for you");
    expect(f.calls).toEqual(["prepare", "cleanup"]);
    expect(lab.pending).toEqual([]);
    expect(f.timeline.of(f.id).map((e) => [e.step, e.error])).toEqual([["failed", "no helper for you"]]);
  });

  it("a fault registers its heal on the lab's teardown stack when prepared and leaves it once healed", async () => {
    const f = new FlagFault("n");
    expect(lab.pending).toEqual([]); // made, not prepared: nothing to undo yet
    await f.inject();
    expect(lab.pending).toEqual([`heal ${f}`]);
    await f.heal();
    expect(lab.pending).toEqual([]);
    // opts.teardown wins over the lab's stack.
    const own = new TeardownStack();
    const g = new FlagFault("o", { teardown: own });
    await g.prepare();
    expect([lab.pending, own.pending]).toEqual([[], [`heal ${g}`]]);
    await own.drain();
    expect(g.done).toBe(true);
  });

  it("draining the stack heals newest first, reports failures and keeps the fault whose heal failed", async () => {
    const a = new FlagFault("a");
    const b = new FlagFault("b");
    const c = new FlagFault("c", {}, { failHeal: true });
    const d = new FlagFault("d");
    await a.inject();
    await b.inject();
    await c.inject();
    await d.prepare();
    const order: string[] = [];
    for (const f of [a, b, c, d]) {
      const orig = f.heal.bind(f);
      f.heal = () => (order.push(f.target), orig());
    }
    const res = await lab.drain();
    expect(order).toEqual(["d", "c", "b", "a"]);
    expect([a.on, b.on, d.prepared && d.cleaned]).toEqual([false, false, true]);
    expect(res.done).toEqual([`heal ${d}`, `heal ${b}`, `heal ${a}`]);
    expect(res.failed).toEqual([{ name: `heal ${c}`, error: "cannot heal" }]);
    // The failed one stays registered: down() or the interrupt handler tries again.
    expect(lab.pending).toEqual([`heal ${c}`]);
    expect(c.done).toBe(false);
    c.t.failHeal = false;
    expect((await lab.drain()).done).toEqual([`heal ${c}`]);
    expect(c.on).toBe(false);
    expect(lab.pending).toEqual([]);
  });

  it("draining back to a mark heals only the faults made after it (the runner, after each scenario)", async () => {
    const before = new FlagFault("before");
    await before.inject();
    const mark = lab.mark();
    const during = new FlagFault("during");
    await during.inject();
    await lab.drain(mark);
    expect([before.on, during.on]).toEqual([true, false]);
    expect(lab.pending).toEqual([`heal ${before}`]);
  });
});
