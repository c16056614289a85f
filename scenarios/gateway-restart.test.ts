// gateway-restart's declared checks and premise, judged on hand-made histories (no Docker): what
// its body observes of each node (dispatches, turns before, the gateway's address, views,
// placements, turns, bundles, slots) decides them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { Placement } from "../lab/clients/sessions.ts";
import type { BundleSeen, NodeView } from "../lab/kits/nodes.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { type Observed } from "./gateway-restart.ts";
import { approvedNodeView, historyOf, premiseOf } from "../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const check = (o: Observed, id: string) => deriveChecks(scenario.checks!, o, true).checks.find((c) => c.id === id);
/** A check's holds and exact observed. */
const judged = (o: Observed, id: string) => {
  const c = check(o, id)!;
  return { holds: c.holds, observed: c.observed };
};
const outcome = (o: Observed, id: string) => judgeHistory(hist(o), scenario, []).checks.find((c) => c.findingId === id)?.outcome;

const bundleDir = (node: string) => ({ dir: `/home/lab/.openclaw/node-host/gateway-1/bundles/${node}ab`, hash: `${node}ab`, inode: 4711, receiptMtime: 1_796_000_000 });
const view = (node: string, more: Partial<NodeView> = {}): NodeView => approvedNodeView({ node: { displayName: node }, nodeId: `id-${node}`, bundleStatus: "installed", bundles: [bundleDir(node)], ...more });
const placement = (node: string, more: Partial<Placement> = {}): Placement => ({ state: "active", generation: 1, providerId: "device", remoteWorkspaceDir: `/work/${node}`, runner: { kind: "device", status: "available", deviceId: `id-${node}` }, ...more });
const REPLY = (node: string) => `fleetlab-ok: read returned: mark-01 written only on ${node}`;
const turn = (node: string, more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: node, marker: { nonce: "mark-01", reply: REPLY(node), environmentId: `env-${node}` }, reply: REPLY(node), launches: [{ seq: 90, t: 1, conn: "c7", launchId: "l", environmentId: `env-${node}` }], ...more });
const seen = (status: string | null, node: string): BundleSeen => ({ status, bundles: [bundleDir(node)] });
const NODES = ["node-1", "node-2"];

/** Everything back after the restart, as a passing run observes it. */
const good = (): Observed => ({
  dispatches: NODES.map((n) => ({ alias: n, state: "active", deviceId: `id-${n}` })),
  turnsBefore: NODES.map((n) => ({ node: n, seen: turn(n) })),
  gatewayIp: { before: "172.30.0.2", member: "172.30.0.2", engine: "172.30.0.2" },
  views: NODES.map((n) => ({ node: n, before: view(n), after: view(n) })),
  placements: NODES.map((n) => ({ node: n, before: placement(n), after: placement(n) })),
  turns: NODES.map((n) => ({ node: n, seen: turn(n) })),
  bundles: NODES.map((n) => ({ node: n, before: [bundleDir(n)], now: seen("installed", n) })),
  slots: NODES.map((n) => ({ node: n, free: true, workerSlots: { total: 2, available: 2 } })),
});

const DIALECT = 'error: "⚠️ Agent failed before reply: Cloud worker finished, but its workspace result could not be reconciled: device worker node is not connected with the supervisor dialect.\\nTo view logs, run `openclaw logs --follow` in a terminal."';

describe("gateway-restart", () => {
  it("a run where everything came back: every check holds, pass", () => {
    const { checks, notes } = deriveChecks(scenario.checks!, good(), true);
    expect(notes).toEqual([]);
    expect(checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-gateway-restart-dispatch", true],
      ["R-gateway-restart-turns-before", true],
      ["R-gateway-restart-pairing", true],
      ["R-gateway-restart-placements", true],
      ["R-gateway-restart-turns", true],
      ["R-gateway-restart-bundles", true],
      ["R-gateway-restart-slots", true],
    ]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("R-gateway-restart-dispatch: each session placed on its node; a body that stopped at a dispatch left active fails on it, nothing after it is judged", () => {
    expect(judged(good(), "R-gateway-restart-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "active" }] });
    const local = { dispatches: [{ alias: "node-1", state: "active", deviceId: "id-node-1" }, { alias: "node-2", state: "local" }] };
    expect(judged(local, "R-gateway-restart-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "local" }] });
    const j = judgeHistory({ ...hist(local), stopped: "R-gateway-restart-dispatch" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-gateway-restart-dispatch: expectation not met and no finding is registered as R-gateway-restart-dispatch"]);
  });

  it("R-gateway-restart-turns-before: each turn before the restart ran on its node, counted; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-gateway-restart-turns-before")).toEqual({ holds: true, observed: { nodes: 2, completed: 2, failedWith: [] } });
    const error = "chat turn 735f3dc0-594f-4f77-9092-cbd98a43f8a0 in agent:main:fleetlab-92f060 ended with status error: boom";
    const o = { dispatches: good().dispatches, turnsBefore: [{ node: "node-1", seen: turn("node-1") }, { node: "node-2", seen: turn("node-2", { reply: null, launches: [], error }) }] };
    expect(judged(o, "R-gateway-restart-turns-before")).toEqual({ holds: false, observed: { nodes: 2, completed: 1, failedWith: ["error: boom"] } });
    const j = judgeHistory({ ...hist(o), stopped: "R-gateway-restart-turns-before" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-gateway-restart-turns-before: expectation not met and no finding is registered as R-gateway-restart-turns-before"]);
  });

  it("P-gateway-restart-ip: the lab's record of the gateway's address follows the engine's; when it does not, the body stops and the lab could not tell", () => {
    expect(premiseOf(scenario, "P-gateway-restart-ip", good())).toEqual({ id: "P-gateway-restart-ip", met: true, observed: { follows: true, changed: false } });
    const moved = { before: "172.30.0.2", member: "172.30.0.2", engine: "172.30.0.9" };
    expect(premiseOf(scenario, "P-gateway-restart-ip", { gatewayIp: moved })).toEqual({ id: "P-gateway-restart-ip", met: false, observed: { follows: false, changed: true } });
    expect(premiseOf(scenario, "P-gateway-restart-ip", { gatewayIp: { ...moved, engine: null } })).toEqual({ id: "P-gateway-restart-ip", met: false, observed: { follows: false, changed: true } });
    const { dispatches, turnsBefore } = good();
    const j = judgeHistory({ ...hist({ dispatches, turnsBefore, gatewayIp: moved }), stopped: "P-gateway-restart-ip" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-gateway-restart-ip not met");
  });

  it("R-gateway-restart-pairing: per node, what came back; a node with a pairing request or another bundle directory does not hold", () => {
    const ok = { sameNodeId: true, approvalState: "approved", paired: true, pendingDevice: 0, pendingNode: 0, deviceApproved: true, nodeApproved: true, sameBundleDir: true };
    expect(judged(good(), "R-gateway-restart-pairing")).toEqual({ holds: true, observed: [{ node: "node-1", ...ok }, { node: "node-2", ...ok }] });
    const o = { ...good(), views: [{ node: "node-1", before: view("node-1"), after: view("node-1") }, { node: "node-2", before: view("node-2"), after: view("node-2", { pendingNode: 1, bundles: [{ ...bundleDir("node-2"), inode: 5000 }] }) }] };
    expect(judged(o, "R-gateway-restart-pairing")).toEqual({ holds: false, observed: [{ node: "node-1", ...ok }, { node: "node-2", ...ok, pendingNode: 1, sameBundleDir: false }] });
    expect(outcome(o, "R-gateway-restart-pairing")).toBe("fail");
  });

  it("R-gateway-restart-placements: still active on the same node and workspace; a placement gone reads state null", () => {
    const ok = (node: string) => ({ node, state: "active", sameRunner: true, runnerStatus: "available", sameGeneration: true, sameWorkspace: true });
    expect(judged(good(), "R-gateway-restart-placements")).toEqual({ holds: true, observed: [ok("node-1"), ok("node-2")] });
    const o = { ...good(), placements: [{ node: "node-1", before: placement("node-1"), after: placement("node-1", { generation: 2 }) }, { node: "node-2", before: placement("node-2"), after: null }] };
    expect(judged(o, "R-gateway-restart-placements")).toEqual({
      holds: false,
      observed: [
        { ...ok("node-1"), sameGeneration: false },
        { node: "node-2", state: null, sameRunner: false, runnerStatus: null, sameGeneration: false, sameWorkspace: false },
      ],
    });
  });

  it("R-gateway-restart-turns: counted, with each distinct failure's words; the supervisor-dialect failure on one node is the registered finding", () => {
    expect(judged(good(), "R-gateway-restart-turns")).toEqual({ holds: true, observed: { nodes: 2, completed: 2, failedWith: [] } });
    const error = `chat turn 735f3dc0-594f-4f77-9092-cbd98a43f8a0 in agent:main:fleetlab-92f060 ended with status ${DIALECT}`;
    const o = { ...good(), turns: [{ node: "node-1", seen: turn("node-1") }, { node: "node-2", seen: turn("node-2", { reply: null, error }) }] };
    const c = judged(o, "R-gateway-restart-turns");
    expect(c).toEqual({ holds: false, observed: { nodes: 2, completed: 1, failedWith: [DIALECT] } });
    expect(c.observed).toEqual(scenario.findings!.find((f) => f.id === "R-gateway-restart-turns")!.signature);
    const j = judgeHistory(hist(o), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-gateway-restart-turns"]);
    // A reply not proven on its node is named so.
    const unproven = { ...good(), turns: [{ node: "node-1", seen: turn("node-1", { launches: [] }) }, { node: "node-2", seen: turn("node-2") }] };
    expect(check(unproven, "R-gateway-restart-turns")!.observed).toEqual({ nodes: 2, completed: 1, failedWith: ['no error; reply "node-only marker" not proven on its node'] });
    expect(outcome(unproven, "R-gateway-restart-turns")).toBe("fail");
  });

  it("R-gateway-restart-bundles: counted; a node node.list reports no bundle for is the registered finding", () => {
    expect(judged(good(), "R-gateway-restart-bundles")).toEqual({ holds: true, observed: { nodes: 2, installed: 2, notReported: 0, sameBundleDir: true } });
    const o = { ...good(), bundles: [{ node: "node-1", before: [bundleDir("node-1")], now: seen("installed", "node-1") }, { node: "node-2", before: [bundleDir("node-2")], now: seen(null, "node-2") }] };
    expect(judged(o, "R-gateway-restart-bundles")).toEqual({ holds: false, observed: { nodes: 2, installed: 1, notReported: 1, sameBundleDir: true } });
    const j = judgeHistory(hist(o), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-gateway-restart-bundles"]);
    // Reinstalled (another directory): not the registered signature.
    const moved = { ...good(), bundles: [{ node: "node-1", before: [bundleDir("node-1")], now: { status: "installed", bundles: [{ ...bundleDir("node-1"), inode: 9 }] } }, { node: "node-2", before: [bundleDir("node-2")], now: seen("installed", "node-2") }] };
    expect(judged(moved, "R-gateway-restart-bundles")).toEqual({ holds: false, observed: { nodes: 2, installed: 2, notReported: 0, sameBundleDir: false } });
    expect(outcome(moved, "R-gateway-restart-bundles")).toBe("fail");
  });

  it("R-gateway-restart-slots: counted; a node that keeps a slot is the registered finding", () => {
    expect(judged(good(), "R-gateway-restart-slots")).toEqual({ holds: true, observed: { nodes: 2, allFree: 2, held: [] } });
    const o = { ...good(), slots: [{ node: "node-1", free: false, workerSlots: { total: 2, available: 1 } }, { node: "node-2", free: true, workerSlots: { total: 2, available: 2 } }] };
    expect(judged(o, "R-gateway-restart-slots")).toEqual({ holds: false, observed: { nodes: 2, allFree: 1, held: [{ total: 2, available: 1 }] } });
    const j = judgeHistory(hist(o), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-gateway-restart-slots"]);
    // A node whose entry gave no slots at all reads null.
    expect(check({ ...good(), slots: [{ node: "node-1", free: false }] }, "R-gateway-restart-slots")!.observed).toEqual({ nodes: 1, allFree: 0, held: [null] });
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { views: _views, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-gateway-restart-pairing had nothing to judge: the body returned without observing what it reads" });
  });
});
