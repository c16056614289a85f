import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./reconnect.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import type { NodeView } from "../lab/kits/nodes.ts";
import { approvedNodeView, historyOf, premiseOf } from "../lab/testing/histories.ts";

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
/** A whole run where all is well: the session placed, one bundle directory before the cuts, both cuts as they should be. */
const good = (): Observed => ({ dispatch: { alias: "node-1", state: "active", deviceId: "n1" }, bundlesBefore: 1, wire: cut(), network: cut() });

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

  it("the whole run as it should be (placed, one bundle directory, both cuts): pass", () => {
    expect(Object.values(judged(good())).map((x) => [x.id, x.holds])[0]).toEqual(["R-reconnect-dispatch", true]);
    expect(judgeHistory(historyOf(scenario, good()), scenario, [])).toMatchObject({ verdict: "pass" });
  });

  it("R-reconnect-dispatch: the session must be placed on the node; a body that stopped there fails on it, nothing after it is judged", () => {
    expect(judged(good())["R-reconnect-dispatch"]).toMatchObject({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local: Observed = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local)["R-reconnect-dispatch"]).toMatchObject({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    const j = judgeHistory({ ...historyOf(scenario, local), stopped: "R-reconnect-dispatch" }, scenario, []);
    expect(j).toMatchObject({ verdict: "fail", detail: "R-reconnect-dispatch: expectation not met and no finding is registered as R-reconnect-dispatch" });
    expect(j.checks.map((c) => c.findingId)).toEqual(["R-reconnect-dispatch"]);
  });

  it("P-reconnect-one-bundle: met with one bundle directory before the cuts, not with none or two; a body that stopped there is unknown", () => {
    expect(premiseOf(scenario, "P-reconnect-one-bundle", good())).toEqual({ id: "P-reconnect-one-bundle", met: true, observed: { bundles: 1 } });
    expect(premiseOf(scenario, "P-reconnect-one-bundle", { bundlesBefore: 0 })).toEqual({ id: "P-reconnect-one-bundle", met: false, observed: { bundles: 0 } });
    expect(premiseOf(scenario, "P-reconnect-one-bundle", { bundlesBefore: 2 })).toEqual({ id: "P-reconnect-one-bundle", met: false, observed: { bundles: 2 } });
    expect(premiseOf(scenario, "P-reconnect-one-bundle", {})).toBeUndefined();
    const two: Observed = { dispatch: good().dispatch, bundlesBefore: 2 };
    const j = judgeHistory({ ...historyOf(scenario, two), stopped: "P-reconnect-one-bundle" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain('premise P-reconnect-one-bundle not met (before the cuts the node has exactly one installed bundle directory, the one each cut\'s same-bundle check compares against): observed {"bundles":2}');
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
    const h = historyOf(scenario, { wire: cut() });
    expect(judgeHistory({ ...h, bodyReturned: false, problems: [{ verdict: "fail" as const, text: "boom" }] }, scenario, [])).toMatchObject({ verdict: "fail", detail: "boom" });
    // The same history from a body that returned would be the lab's fault: unknown, not pass.
    expect(judgeHistory({ ...h, bodyReturned: true }, scenario, []).verdict).toBe("unknown");
  });
});
