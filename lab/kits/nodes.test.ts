import { describe, expect, it } from "vitest";
import { sameNode, type NodeView } from "./nodes.ts";
import { approvedNodeView } from "../testing/histories.ts";

describe("sameNode", () => {
  const view = (over: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: {}, nodeId: "n1", bundleStatus: "installed", bundles: [{ dir: "/b/x", hash: "x", inode: 7, receiptMtime: 100 }], ...over });

  it("holds for the same approved node with its bundle untouched", () => {
    expect(sameNode(view(), view()).holds).toBe(true);
  });

  it("fails on a new identity, a pairing request, or a reinstalled bundle", () => {
    expect(sameNode(view(), view({ nodeId: "n2" })).observed.sameNodeId).toBe(false);
    expect(sameNode(view(), view({ pendingNode: 1 })).holds).toBe(false);
    const reinstalled = sameNode(view(), view({ bundles: [{ dir: "/b/x", hash: "x", inode: 8, receiptMtime: 200 }] }));
    expect([reinstalled.holds, reinstalled.observed.sameBundleDir]).toEqual([false, false]);
  });
});
