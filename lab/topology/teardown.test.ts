import { describe, expect, it } from "vitest";
import { TeardownStack } from "./teardown.ts";

describe("the lab's teardown stack", () => {
  it("undoes newest first, and only what came after a mark", async () => {
    const t = new TeardownStack();
    const order: string[] = [];
    t.defer("operator", async () => void order.push("operator"));
    const mark = t.mark();
    t.defer("partition", async () => void order.push("partition"));
    t.defer("kill", async () => void order.push("kill"));
    expect((await t.drain(mark)).done).toEqual(["kill", "partition"]);
    expect(t.pending).toEqual(["operator"]);
    await t.drain();
    expect(order).toEqual(["kill", "partition", "operator"]);
  });

  it("a failing undo is reported, does not stop the others, and stays for the next drain", async () => {
    const t = new TeardownStack();
    let fail = true;
    const done: string[] = [];
    t.defer("a", async () => void done.push("a"));
    t.defer("b", async () => {
      if (fail) throw new Error("helper gone");
      done.push("b");
    });
    t.defer("c", async () => void done.push("c"));
    const r = await t.drain();
    expect(r.failed).toEqual([{ name: "b", error: "helper gone" }]);
    expect(done).toEqual(["c", "a"]);
    expect(t.pending).toEqual(["b"]);
    fail = false;
    expect((await t.drain()).done).toEqual(["b"]);
  });

  it("an undo removed by its owner (undone another way) is not run", async () => {
    const t = new TeardownStack();
    let ran = false;
    const off = t.defer("x", async () => void (ran = true));
    off();
    await t.drain();
    expect(ran).toBe(false);
  });
});
