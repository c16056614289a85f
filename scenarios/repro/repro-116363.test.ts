// repro-116363's checks on hand-made histories (no Docker): each holds on one and not on another,
// with the exact signature.
import { describe, expect, it } from "vitest";
import { judgeHistory, type Observations } from "../../lab/judge/history.ts";
import type { NodeView } from "../../lab/kits/nodes.ts";
import scenario, { type Observed } from "./repro-116363.ts";
import { approvedNodeView, checkOf as checkOfScenario, historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);

const view = (more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: { name: "node-1" }, nodeId: "9f2c4e", bundleStatus: "installed", bundles: [{ dir: "/state/bundles/b1", hash: "h1", inode: 42, receiptMtime: 1 }], ...more });
const bin = "fleetlab-3fa2c1d4";
const binPath = `/usr/local/bin/${bin}`;
const resolved = { ok: true as const, payload: { ok: true, payload: { bins: { [bin]: binPath } } }, ms: 22 };
const good = {
  invoke: { bin, binPath, result: resolved },
  reconnect: { conn: "c3", back: { conn: "c4", seq: 88 }, before: view(), after: view() },
} satisfies Observed;
const same = { sameNodeId: true, approvalState: "approved", paired: true, connected: true, pendingDevicePairing: 0, pendingNodePairing: 0, deviceApproved: true, nodeApproved: true, sameBundleDir: true };

describe("repro-116363: a result that reached the gateway before the close wins", () => {
  const id = "R-116363-result-wins";
  it("holds: node.invoke resolved ok with the node's payload", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 25, ok: true, found: ["fleetlab-<id>"], pathMatches: true });
  });

  it("does not hold: rejected DISCONNECTED", () => {
    const c = checkOf(id, { ...good, invoke: { bin, binPath, result: { ok: false as const, code: "UNAVAILABLE", detailsCode: "DISCONNECTED", message: "node disconnected (system.which)", ms: 30 } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 25, ok: false, code: "UNAVAILABLE", detailsCode: "DISCONNECTED", message: "node disconnected (system.which)" });
  });

  it("does not hold: ok, but without this invoke's path", () => {
    const c = checkOf(id, { ...good, invoke: { bin, binPath, result: { ...resolved, payload: { ok: true, payload: { bins: {} } } } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 25, ok: true, found: [], pathMatches: false });
  });
});

describe("repro-116363: the node comes back as the same node", () => {
  const id = "R-116363-same-node";
  it("holds: reconnected on a new connection, same node", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 60, reconnected: true, newConnection: true, ...same });
  });

  it("does not hold: no reconnect within the bound, node.list shows it disconnected", () => {
    const c = checkOf(id, { ...good, reconnect: { ...good.reconnect, back: null, after: view({ connected: false }) } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 60, reconnected: false, newConnection: false, ...same, connected: false });
  });

  it("does not hold: back, but its bundle directory reinstalled", () => {
    const c = checkOf(id, { ...good, reconnect: { ...good.reconnect, after: view({ bundles: [{ dir: "/state/bundles/b2", hash: "h1", inode: 43, receiptMtime: 2 }] }) } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 60, reconnected: true, newConnection: true, ...same, sameBundleDir: false });
  });
});

describe("repro-116363: verdicts", () => {
  it("a run where both hold reads pass; nothing observed reads unknown", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("pass");
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});
