// partition-heal's declared checks, judged on hand-made histories (no Docker): the gateway
// noticing the partition, the node's reconnect, its next turn and its bundle, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, emptyHistory, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { NodeView } from "../lab/kits/nodes.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { type Observed } from "./partition-heal.ts";
import { approvedNodeView } from "../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => ({ ...emptyHistory("partition-heal", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations });
const judged = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks!, o, true).checks.find((x) => x.id === id)!;
  return { holds: c.holds, observed: c.observed };
};

const DIR = { dir: "/home/lab/.openclaw/node-host/gateway-1/bundles/ab12", hash: "ab12", inode: 31, receiptMtime: 1_796_000_000 };
const view = (more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: { displayName: "node-1" }, nodeId: "id-1", bundleStatus: "installed", bundles: [DIR], ...more });
const REPLY = "fleetlab-ok: read returned: mark-7 written only on node-1";
const turn = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: "mark-7", reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 500, t: 1, conn: "c9", launchId: "l", environmentId: "env-1" }], ...more });

const good = (): Observed => ({
  dispatch: { alias: "node-1", state: "active", deviceId: "id-1" },
  noticed: { down: { ms: 31_000 }, noticedMs: 33_400 },
  reconnect: { conn: "c3", back: { conn: "c9" }, before: view(), after: view() },
  turn: turn(),
  bundle: { before: [DIR], now: { status: "installed", bundles: [DIR] } },
});
const SAME = { sameNodeId: true, approvalState: "approved", paired: true, connected: true, pendingDevicePairing: 0, pendingNodePairing: 0, deviceApproved: true, nodeApproved: true, sameBundleDir: true };

describe("partition-heal", () => {
  it("a run where the gateway noticed, the node came back the same, its turn ran there and its bundle stayed: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-partition-dispatch", true],
      ["R-partition-noticed", true],
      ["R-partition-reconnect", true],
      ["R-partition-turn", true],
      ["R-partition-bundle", true],
    ]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("R-partition-noticed: disconnected within 80 s; later, or never, does not hold", () => {
    expect(judged(good(), "R-partition-noticed")).toEqual({ holds: true, observed: { noticed: true, withinBound: true } });
    expect(judged({ ...good(), noticed: { down: { ms: 85_000 }, noticedMs: 86_100 } }, "R-partition-noticed")).toEqual({ holds: false, observed: { noticed: true, withinBound: false } });
    const never = { ...good(), noticed: { down: { error: "node-1 disconnected in node.list: not within 100000 ms" }, noticedMs: 100_200 } };
    expect(judged(never, "R-partition-noticed")).toEqual({ holds: false, observed: { noticed: false } });
    expect(judgeHistory(hist(never), scenario, []).verdict).toBe("fail");
  });

  it("R-partition-reconnect: a new connection, the same approved node; no reconnect or a pairing request does not hold", () => {
    expect(judged(good(), "R-partition-reconnect")).toEqual({ holds: true, observed: { reconnected: true, ...SAME } });
    const none = { ...good(), reconnect: { conn: "c3", back: { error: "no successful connect of the node on / within 120000 ms" }, before: view(), after: view() } };
    expect(judged(none, "R-partition-reconnect")).toEqual({ holds: false, observed: { reconnected: false, ...SAME } });
    const repaired = { ...good(), reconnect: { conn: "c3", back: { conn: "c9" }, before: view(), after: view({ pendingDevice: 1, approvalState: "pending" }) } };
    expect(judged(repaired, "R-partition-reconnect")).toEqual({ holds: false, observed: { reconnected: true, ...SAME, pendingDevicePairing: 1, approvalState: "pending" } });
    // The same connection as before the partition is no reconnect, though the observed cannot tell it.
    expect(judged({ ...good(), reconnect: { conn: "c3", back: { conn: "c3" }, before: view(), after: view() } }, "R-partition-reconnect")).toEqual({ holds: false, observed: { reconnected: true, ...SAME } });
    expect(judgeHistory(hist(none), scenario, []).verdict).toBe("fail");
  });

  it("R-partition-turn: proven on the node; a turn with no reply does not hold and carries its error", () => {
    expect(judged(good(), "R-partition-turn")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const failed = { ...good(), turn: turn({ reply: null, error: "chat turn r in s ended with status timeout" }) };
    expect(judged(failed, "R-partition-turn")).toEqual({ holds: false, observed: { reply: "none", launches: 1, error: "chat turn r in s ended with status timeout" } });
  });

  it("R-partition-bundle: installed and the same directory; not reported, or reinstalled, does not hold", () => {
    expect(judged(good(), "R-partition-bundle")).toEqual({ holds: true, observed: { status: "installed", sameBundleDir: true } });
    expect(judged({ ...good(), bundle: { before: [DIR], now: { status: null, bundles: [DIR] } } }, "R-partition-bundle")).toEqual({ holds: false, observed: { status: null, sameBundleDir: true } });
    const reinstalled = { ...good(), bundle: { before: [DIR], now: { status: "installed", bundles: [{ ...DIR, receiptMtime: 1_796_000_900 }] } } };
    expect(judged(reinstalled, "R-partition-bundle")).toEqual({ holds: false, observed: { status: "installed", sameBundleDir: false } });
    expect(judgeHistory(hist(reinstalled), scenario, []).verdict).toBe("fail");
  });

  it("R-partition-dispatch: the session must be placed on the node; a body that stopped there fails on it, nothing after it is judged", () => {
    expect(judged(good(), "R-partition-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local, "R-partition-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    expect(judgeHistory({ ...hist(local), stopped: "R-partition-dispatch" }, scenario, [])).toMatchObject({ verdict: "fail", detail: "R-partition-dispatch: expectation not met and no finding is registered as R-partition-dispatch" });
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { bundle: _bundle, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-partition-bundle had nothing to judge: the body returned without observing what it reads" });
  });
});
