// repro-115539's check on hand-made histories (no Docker): it holds on one and not on others, with
// the exact signature.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations } from "../../lab/judge/history.ts";
import type { NodeView } from "../../lab/kits/nodes.ts";
import scenario, { type Observed } from "./repro-115539.ts";
import { approvedNodeView, historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (obs: Observations) => deriveChecks(scenario.checks!, obs, true).checks.find((c) => c.id === "R-115539-reconnects");

const view = (more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: { name: "node-1", connected: true }, nodeId: "9f2c4e", ...more });
const first = { line: "2026-12-01T10:00:01.000Z node host gateway connect failed: getaddrinfo EAI_AGAIN tap-node-1", failed: true };
const good = { reconnect: { first, failedBeforeHeal: 3, connected: true, before: view(), after: view() } } satisfies Observed;
const same = { sameNodeId: true, approvalState: "approved", paired: true, pendingDevicePairing: 0, pendingNodePairing: 0, deviceApproved: true, nodeApproved: true, sameBundleDir: true };

describe("repro-115539: a node whose first connect failed connects once its address answers again", () => {
  it("holds: connected within the bound, as the same node", () => {
    const c = checkOf(good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 60, firstConnectFailed: true, nodeExited: false, failedConnectsBeforeHeal: 3, connected: true, ...same });
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("pass");
  });

  it("does not hold: still disconnected at the bound (the node stopped trying)", () => {
    const c = checkOf({ reconnect: { ...good.reconnect, failedBeforeHeal: 1, connected: false, after: view({ connected: false }) } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 60, firstConnectFailed: true, nodeExited: false, failedConnectsBeforeHeal: 1, connected: false, ...same });
  });

  it("does not hold: connected, but as a new node with a pairing request; the node's container had exited", () => {
    const exited = { line: "(container exited 1) boom", failed: false, exited: true };
    const c = checkOf({ reconnect: { ...good.reconnect, first: exited, after: view({ nodeId: "77aa01", approvalState: "pending", pendingNode: 1, nodeApproved: false }) } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 60, firstConnectFailed: false, nodeExited: true, failedConnectsBeforeHeal: 3, connected: true, ...same, sameNodeId: false, approvalState: "pending", pendingNodePairing: 1, nodeApproved: false });
  });

  it("nothing observed after the body returned reads unknown, never pass", () => {
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});
