import { describe, expect, it } from "vitest";
import { leftBehind } from "./lab.ts";

// A shared lab's hygiene after each scenario (Lab.residue(), read from node.list).
describe("what a scenario left behind on the node hosts", () => {
  const node = (displayName: string, available: number, bundle?: string) => ({ displayName, workerSlots: { total: 2, available }, workerBundle: bundle ? { status: bundle } : undefined });

  it("a held worker slot, and an installed bundle reported before and not now; the bundles installed now", () => {
    const r = leftBehind([node("node-1", 1, "installed"), node("node-2", 2)], ["node-1", "node-2"], new Set(["node-1", "node-2"]));
    expect(r).toEqual({
      left: ["node-1 holding 1 of its 2 worker slot(s)", "node-2 no longer reported with its installed worker bundle (node.list workerBundle null; it was before)"],
      installed: ["node-1"],
    });
  });

  it("a bundle never reported before is not missed (the first turns install it); a node absent from node.list is named only for a bundle it had", () => {
    expect(leftBehind([node("node-1", 2), node("node-2", 2, "installed")], ["node-1", "node-2"], new Set())).toEqual({ left: [], installed: ["node-2"] });
    expect(leftBehind([], ["node-1", "node-2"], new Set(["node-2"])).left).toEqual(["node-2 no longer reported with its installed worker bundle (node.list workerBundle null; it was before)"]);
  });
});
