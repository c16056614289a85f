// two-nodes' declared premise and checks, judged on hand-made histories (no Docker): the lab's
// node hosts, the dispatches at once, what each node then showed (bundle, checkout, git
// requests), each node's turn and the reclaims, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import { checkOf, historyOf, premiseOf } from "../lab/testing/histories.ts";
import scenario, { type Observed } from "./two-nodes.ts";

const HASH = "ab".repeat(32);
const REPO = "two-nodes-k3x9";
const SHA = "c0ffee0000000000000000000000000000000000";
const node = (alias: string, env: string, more: Partial<NonNullable<Observed["perNode"]>[number]> = {}): NonNullable<Observed["perNode"]>[number] => ({
  alias,
  version: "2026.9.6",
  placement: { workerBundleHash: HASH, environmentId: env },
  bundles: [{ hash: HASH, receiptHash: HASH }],
  head: SHA,
  gitRequests: [
    { method: "GET", path: `/smart/${REPO}.git/info/refs`, status: 200 },
    { method: "POST", path: `/smart/${REPO}.git/git-upload-pack`, status: 200 },
  ],
  ...more,
});
const turn = (alias: string, env: string, more: Partial<TurnSeen> = {}): TurnSeen => {
  const reply = `fleetlab-ok: read returned: mark-${alias} written only on ${alias}`;
  return { alias, marker: { nonce: `mark-${alias}`, reply, environmentId: env }, reply, launches: [{ seq: 700, t: 1, conn: "c4", launchId: "l", environmentId: env }], ...more };
};

const good = (): Observed => ({
  hosts: ["node-1", "node-2"],
  workerHosts: [
    { alias: "node-1", nodeId: "id-1" },
    { alias: "node-2", nodeId: "id-2" },
  ],
  expected: { repo: REPO, sha: SHA, bundleVersion: "2026.9.6" },
  dispatch: [
    { alias: "node-1", state: "active", deviceId: "id-1" },
    { alias: "node-2", state: "active", deviceId: "id-2" },
  ],
  perNode: [node("node-1", "env-1"), node("node-2", "env-2")],
  turns: [turn("node-1", "env-1"), turn("node-2", "env-2")],
  reclaims: [
    { alias: "node-1", state: "reclaimed" },
    { alias: "node-2", state: "reclaimed" },
  ],
});
const judged = (o: Observed, id: string) => {
  const c = checkOf(scenario, id, o)!;
  return { holds: c.holds, observed: c.observed };
};
const BUNDLE_OK = { versionIsBuild: true, bundleDirs: 1, dirIsPlacementHash: true, receiptIsPlacementHash: true };

describe("two-nodes", () => {
  it("a run on two node hosts where both were placed, installed, fetched, answered and were reclaimed: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-two-nodes-dispatch", true],
      ["R-two-nodes-placed", true],
      ["R-two-nodes-bundle", true],
      ["R-two-nodes-placements", true],
      ["R-two-nodes-checkout", true],
      ["R-two-nodes-turns", true],
      ["R-two-nodes-reclaim", true],
    ]);
    expect(judgeHistory(historyOf(scenario, good()), scenario, []).verdict).toBe("pass");
  });

  it("P-two-nodes-hosts: met with two node hosts or more; with one the body stops and the verdict is unknown", () => {
    expect(premiseOf(scenario, "P-two-nodes-hosts", good())).toEqual({ id: "P-two-nodes-hosts", met: true, observed: { nodeHosts: 2 } });
    expect(premiseOf(scenario, "P-two-nodes-hosts", { hosts: ["node-1", "node-2", "node-3"] })).toEqual({ id: "P-two-nodes-hosts", met: true, observed: { nodeHosts: 3 } });
    const one: Observed = { hosts: ["node-1"] };
    expect(premiseOf(scenario, "P-two-nodes-hosts", one)).toEqual({ id: "P-two-nodes-hosts", met: false, observed: { nodeHosts: 1 } });
    const j = judgeHistory({ ...historyOf(scenario, one), stopped: "P-two-nodes-hosts" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", 'the lab could not tell: premise P-two-nodes-hosts not met (the lab has at least two node hosts, so the sessions can be dispatched at once each to its own node): observed {"nodeHosts":1}']);
    // Nothing after the premise was reached: no check reads anything, none says "nothing to judge".
    expect(j.derived).toEqual([]);
  });

  it("R-two-nodes-dispatch: every dispatch gives an active placement; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-two-nodes-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "active" }] });
    const local: Observed = { ...good(), dispatch: [{ alias: "node-1", state: "active", deviceId: "id-1" }, { alias: "node-2", state: "failed" }] };
    expect(judged(local, "R-two-nodes-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "failed" }] });
    const { hosts, workerHosts, expected, dispatch } = local;
    expect(judgeHistory({ ...historyOf(scenario, { hosts, workerHosts, expected, dispatch }), stopped: "R-two-nodes-dispatch" }, scenario, [])).toMatchObject({
      verdict: "fail",
      detail: "R-two-nodes-dispatch: expectation not met and no finding is registered as R-two-nodes-dispatch",
    });
  });

  it("R-two-nodes-placed: each session on the node it was sent to; on another node, or no runner, does not hold and stops the body", () => {
    expect(judged(good(), "R-two-nodes-placed")).toEqual({ holds: true, observed: [{ alias: "node-1", onItsNode: true }, { alias: "node-2", onItsNode: true }] });
    const swapped: Observed = { ...good(), dispatch: [{ alias: "node-1", state: "active", deviceId: "id-2" }, { alias: "node-2", state: "active" }] };
    expect(judged(swapped, "R-two-nodes-placed")).toEqual({ holds: false, observed: [{ alias: "node-1", onItsNode: false }, { alias: "node-2", onItsNode: false }] });
    // A placement that is not active is the dispatch check's: this one reads only the active ones.
    expect(judged({ ...good(), dispatch: [{ alias: "node-1", state: "active", deviceId: "id-1" }, { alias: "node-2", state: "failed" }] }, "R-two-nodes-placed")).toEqual({ holds: true, observed: [{ alias: "node-1", onItsNode: true }] });
    expect(checkOf(scenario, "R-two-nodes-placed", { ...good(), dispatch: [{ alias: "node-1", state: "failed" }] })).toBeUndefined();
    const { hosts, workerHosts, expected, dispatch } = swapped;
    expect(judgeHistory({ ...historyOf(scenario, { hosts, workerHosts, expected, dispatch }), stopped: "R-two-nodes-placed" }, scenario, [])).toMatchObject({
      verdict: "fail",
      detail: "R-two-nodes-placed: expectation not met and no finding is registered as R-two-nodes-placed",
    });
  });

  it("R-two-nodes-bundle: the build's version, one directory named by the placement's hash, its receipt the same; observed names which part differs", () => {
    expect(judged(good(), "R-two-nodes-bundle")).toEqual({ holds: true, observed: [{ alias: "node-1", ...BUNDLE_OK }, { alias: "node-2", ...BUNDLE_OK }] });
    const drift: Observed = {
      ...good(),
      perNode: [
        node("node-1", "env-1", { version: "2026.9.1", bundles: [{ hash: HASH, receiptHash: "cd".repeat(32) }] }),
        node("node-2", "env-2", { bundles: [{ hash: "ef".repeat(32), receiptHash: HASH }, { hash: HASH, receiptHash: HASH }] }),
      ],
    };
    expect(judged(drift, "R-two-nodes-bundle")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", versionIsBuild: false, bundleDirs: 1, dirIsPlacementHash: true, receiptIsPlacementHash: false },
        { alias: "node-2", versionIsBuild: true, bundleDirs: 2, dirIsPlacementHash: false, receiptIsPlacementHash: true },
      ],
    });
    const none: Observed = { ...good(), perNode: [node("node-1", "env-1"), node("node-2", "env-2", { version: null, bundles: [] })] };
    expect(judged(none, "R-two-nodes-bundle")).toEqual({ holds: false, observed: [{ alias: "node-1", ...BUNDLE_OK }, { alias: "node-2", versionIsBuild: false, bundleDirs: 0, dirIsPlacementHash: false, receiptIsPlacementHash: false }] });
    expect(judgeHistory(historyOf(scenario, drift), scenario, []).verdict).toBe("fail");
  });

  it("R-two-nodes-placements: one bundle hash on every node, one environment per placement; different hashes or a shared environment does not hold", () => {
    expect(judged(good(), "R-two-nodes-placements")).toEqual({ holds: true, observed: { placements: 2, bundleHashes: 1, environments: 2 } });
    const other = "ef".repeat(32);
    const twoBundles: Observed = { ...good(), perNode: [node("node-1", "env-1"), node("node-2", "env-2", { placement: { workerBundleHash: other, environmentId: "env-2" }, bundles: [{ hash: other, receiptHash: other }] })] };
    expect(judged(twoBundles, "R-two-nodes-placements")).toEqual({ holds: false, observed: { placements: 2, bundleHashes: 2, environments: 2 } });
    const shared: Observed = { ...good(), perNode: [node("node-1", "env-1"), node("node-2", "env-1")] };
    expect(judged(shared, "R-two-nodes-placements")).toEqual({ holds: false, observed: { placements: 2, bundleHashes: 1, environments: 1 } });
    expect(judgeHistory(historyOf(scenario, shared), scenario, []).verdict).toBe("fail");
  });

  it("R-two-nodes-checkout: each node at the published commit and fetched the repo itself; another HEAD, or no upload-pack of its own, does not hold", () => {
    expect(judged(good(), "R-two-nodes-checkout")).toEqual({ holds: true, observed: [{ alias: "node-1", atPublishedCommit: true, fetchedItself: true }, { alias: "node-2", atPublishedCommit: true, fetchedItself: true }] });
    const stale: Observed = {
      ...good(),
      perNode: [node("node-1", "env-1", { head: "deadbeef00000000000000000000000000000000" }), node("node-2", "env-2", { gitRequests: [{ method: "GET", path: `/smart/${REPO}.git/info/refs`, status: 200 }] })],
    };
    expect(judged(stale, "R-two-nodes-checkout")).toEqual({ holds: false, observed: [{ alias: "node-1", atPublishedCommit: false, fetchedItself: true }, { alias: "node-2", atPublishedCommit: true, fetchedItself: false }] });
    expect(judgeHistory(historyOf(scenario, stale), scenario, []).verdict).toBe("fail");
  });

  it("R-two-nodes-turns: every turn proven on its node; a gateway-local answer does not hold, and a body that stopped there fails on it", () => {
    expect(judged(good(), "R-two-nodes-turns")).toEqual({ holds: true, observed: [{ alias: "node-1", reply: "node-only marker", launches: 1 }, { alias: "node-2", reply: "node-only marker", launches: 1 }] });
    // The gateway ran it: the read found no marker, and the node's tap saw no launch.
    const local = turn("node-1", "env-1", { reply: "fleetlab-ok: read failed: ENOENT", launches: [] });
    const o: Observed = { ...good(), turns: [local] };
    expect(judged(o, "R-two-nodes-turns")).toEqual({ holds: false, observed: [{ alias: "node-1", reply: "fleetlab-ok: read failed: ENOENT", launches: 0 }] });
    const { reclaims: _reclaims, ...stopped } = o;
    expect(judgeHistory({ ...historyOf(scenario, stopped), stopped: "R-two-nodes-turns" }, scenario, [])).toMatchObject({
      verdict: "fail",
      detail: "R-two-nodes-turns: expectation not met and no finding is registered as R-two-nodes-turns",
    });
  });

  it("R-two-nodes-reclaim: every session reclaimed; another state does not hold", () => {
    expect(judged(good(), "R-two-nodes-reclaim")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "reclaimed" }, { alias: "node-2", state: "reclaimed" }] });
    const draining: Observed = { ...good(), reclaims: [{ alias: "node-1", state: "reclaimed" }, { alias: "node-2", state: "draining" }] };
    expect(judged(draining, "R-two-nodes-reclaim")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "reclaimed" }, { alias: "node-2", state: "draining" }] });
    expect(judgeHistory(historyOf(scenario, draining), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { reclaims: _reclaims, ...rest } = good();
    expect(judgeHistory(historyOf(scenario, rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-two-nodes-reclaim had nothing to judge: the body returned without observing what it reads" });
  });
});
