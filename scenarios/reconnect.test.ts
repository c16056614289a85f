import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./reconnect.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";
import type { NodeView } from "../lab/kits/nodes.ts";
import { approvedNodeView } from "../lab/testing/histories.ts";

const bundles = [{ dir: "/b/abc", hash: "abc", inode: 7, receiptMtime: 1 }];
const view = (more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: {}, nodeId: "n1", bundles, ...more });
const turn = (reply: string | null, launches = 1) => ({ alias: "node-1", marker: { nonce: "mark-1", reply: "fleetlab-ok: read returned: mark-1 written only on node-1", environmentId: "env-1" }, reply, launches: Array.from({ length: launches }, (_, i) => ({ seq: 10 + i, t: 0, conn: "c2", environmentId: "env-1" })) });
const cut = (more: Partial<NonNullable<Observed["wire"]>> = {}): NonNullable<Observed["wire"]> => ({
  before: view(),
  after: view(),
  conn: "c1",
  reconnectedOn: "c2",
  turn: turn("fleetlab-ok: read returned: mark-1 written only on node-1"),
  bundle: { status: "installed", bundles },
  ...more,
});
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, o, true).checks.map((c) => [c.id, c]));

describe("reconnect's checks over what its body observed", () => {
  it("the same node on a new connection, a turn proven on it, the same bundle: every check holds", () => {
    const c = judged({ wire: cut(), network: cut() });
    expect(Object.values(c).map((x) => [x.id, x.holds])).toEqual([
      ["R-reconnect-wire-same-node", true],
      ["R-reconnect-wire-turn", true],
      ["R-reconnect-wire-bundle", true],
      ["R-reconnect-network-same-node", true],
      ["R-reconnect-network-turn", true],
      ["R-reconnect-network-bundle", true],
    ]);
    expect(c["R-reconnect-wire-turn"]!.observed).toEqual({ reply: "node-only marker", launches: 1 });
  });

  it("same-node: a new nodeId, a pairing request or no new connection is short, with what was seen", () => {
    const c = judged({ wire: cut({ after: view({ nodeId: "n2", pendingNode: 1 }), reconnectedOn: "c1" }) });
    expect(c["R-reconnect-wire-same-node"]).toMatchObject({ holds: false, observed: { sameNodeId: false, pendingNodePairing: 1, newConnection: false } });
  });

  it("turn: a reply without the node-only marker (a gateway-local run) or no launch on the node's tap is short", () => {
    expect(judged({ wire: cut({ turn: turn("fleetlab-ok: read returned: nothing") }) })["R-reconnect-wire-turn"]).toMatchObject({ holds: false, observed: { reply: "fleetlab-ok: read returned: nothing", launches: 1 } });
    expect(judged({ network: cut({ turn: { ...turn("fleetlab-ok: read returned: mark-1 written only on node-1", 0), error: "TIMEOUT" } }) })["R-reconnect-network-turn"]).toMatchObject({ holds: false, observed: { launches: 0, error: "TIMEOUT" } });
  });

  it("bundle: reinstalled (another directory) or not reported installed is short", () => {
    const c = judged({ network: cut({ bundle: { status: null, bundles: [{ ...bundles[0]!, inode: 8 }] } }) });
    expect(c["R-reconnect-network-bundle"]).toMatchObject({ holds: false, observed: { status: null, sameBundleDir: false } });
  });

  it("a body that ended before the network cut: the wire's checks judged, the rest not reached (no unknown added)", () => {
    const h = { ...emptyHistory("reconnect", "2026.9.6", { own: [], labWide: [] }), observations: { wire: cut() } };
    expect(judgeHistory({ ...h, bodyReturned: false, problems: [{ verdict: "fail" as const, text: "boom" }] }, scenario, [])).toMatchObject({ verdict: "fail", detail: "boom" });
    // The same history from a body that returned would be the lab's fault: unknown, not pass.
    expect(judgeHistory({ ...h, bodyReturned: true }, scenario, []).verdict).toBe("unknown");
  });
});
