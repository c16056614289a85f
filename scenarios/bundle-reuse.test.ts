// bundle-reuse's declared checks, judged on hand-made histories (no Docker): the two dispatches to
// one node, its one bundle directory and its reuse, the worker checkouts, both turns on the node,
// the dumb-HTTP fetch, node.list's bundle status and the reclaims, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import type { BundleDir } from "../lab/kits/inside-node.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import scenario, { type Observed, type RoundSeen } from "./bundle-reuse.ts";
import { checkOf, historyOf } from "../lab/testing/histories.ts";

const judged = (o: Observed, id: string) => {
  const c = checkOf(scenario, id, o);
  return c && { holds: c.holds, observed: c.observed };
};

const DIR: BundleDir = {
  dir: "/home/lab/.openclaw/node-host/gateway-1/bundles/ab12",
  hash: "ab12",
  inode: 31,
  receiptMtime: 1_796_000_000,
  receipt: { bundleHash: "ab12", openclawVersion: "2026.9.6" },
  files: ["bootstrap-receipt.json", "worker.mjs"],
};
const WS = { repo: "bundle-reuse-3fa2c1", sha: "5d41402abc4b2a76b9719d911017c592", labUrl: "http://git.lab/dumb/bundle-reuse-3fa2c1.git" };
const round = (more: Partial<RoundSeen> = {}): RoundSeen => ({ workerBundleHash: "ab12", bundles: [DIR], strayReceipts: [], checkout: { head: WS.sha, origin: WS.labUrl }, ...more });
const turn = (nonce: string, more: Partial<TurnSeen> = {}): TurnSeen => {
  const reply = `fleetlab-ok: read returned: ${nonce} written only on node-1`;
  return { alias: "node-1", marker: { nonce, reply, environmentId: `env-${nonce}` }, reply, launches: [{ seq: 500, t: 1, conn: "c9", launchId: "l", environmentId: `env-${nonce}` }], ...more };
};
const ACTIVE = { alias: "node-1", state: "active", deviceId: "id-1" };
const DUMB = [
  { method: "GET", path: `/dumb/${WS.repo}.git/info/refs`, status: 200 },
  { method: "GET", path: `/dumb/${WS.repo}.git/objects/ab/cdef0123`, status: 200 },
];

/** A run on a node that already had the bundle (the shared lab after an earlier scenario): everything holds. */
const good = (): Observed => ({
  node: { nodeId: "id-1", bundlesBefore: [DIR] },
  workspace: WS,
  dispatches: [ACTIVE, ACTIVE],
  rounds: [round(), round()],
  turns: [turn("mark-1"), turn("mark-2")],
  fetched: DUMB,
  after: { bundleStatus: "installed" },
  reclaims: ["reclaimed", "reclaimed"],
});
const hist = (o: Observed) => historyOf(scenario, o);

describe("bundle-reuse", () => {
  it("declares its checks in the order the body makes them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual([
      "R-bundle-reuse-dispatch",
      "R-bundle-reuse-bundle",
      "R-bundle-reuse-checkout",
      "R-bundle-reuse-turns",
      "R-bundle-reuse-dumb-fetch",
      "R-bundle-reuse-installed",
      "R-bundle-reuse-reclaim",
    ]);
  });

  it("a run where both dispatches reuse the one bundle and both turns answer from the node: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.every((c) => c.holds)).toBe(true);
    expect(judgeHistory(hist(good()), scenario, [])).toMatchObject({ verdict: "pass", detail: undefined });
    // A fresh node (no bundle before the first dispatch) passes too.
    expect(judgeHistory(hist({ ...good(), node: { nodeId: "id-1", bundlesBefore: [] } }), scenario, []).verdict).toBe("pass");
  });

  it("R-bundle-reuse-dispatch: active and on the node; not active, or on another runner, does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-dispatch")).toEqual({
      holds: true,
      observed: [
        { alias: "node-1", state: "active", onNode: true },
        { alias: "node-1", state: "active", onNode: true },
      ],
    });
    const local = { ...good(), dispatches: [ACTIVE, { alias: "node-1", state: "local" }] };
    expect(judged(local, "R-bundle-reuse-dispatch")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", state: "active", onNode: true },
        { alias: "node-1", state: "local", onNode: false },
      ],
    });
    expect(judged({ ...good(), dispatches: [{ ...ACTIVE, deviceId: "id-2" }] }, "R-bundle-reuse-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "active", onNode: false }] });
  });

  it("R-bundle-reuse-dispatch: a body that stopped at the second dispatch fails on it; what it did not reach is not judged", () => {
    const stopped: Observed = { node: good().node, workspace: WS, dispatches: [ACTIVE, { alias: "node-1", state: "failed" }], rounds: [round()], turns: [turn("mark-1")] };
    const j = judgeHistory({ ...hist(stopped), stopped: "R-bundle-reuse-dispatch" }, scenario, []);
    expect(j).toMatchObject({ verdict: "fail", detail: "R-bundle-reuse-dispatch: expectation not met and no finding is registered as R-bundle-reuse-dispatch" });
    expect(j.derived.map((c) => [c.id, c.holds])).toEqual([
      ["R-bundle-reuse-dispatch", false],
      ["R-bundle-reuse-bundle", true],
      ["R-bundle-reuse-checkout", true],
      ["R-bundle-reuse-turns", true],
    ]);
  });

  it("R-bundle-reuse-bundle: one directory named by the placement, reused as it was; the observed names what differs", () => {
    expect(judged(good(), "R-bundle-reuse-bundle")).toEqual({
      holds: true,
      observed: {
        rounds: [
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
        ],
        secondChanged: [],
        sameWorkerBundleHash: true,
        preinstalledChanged: [],
      },
    });
    // Reinstalled by the second dispatch: a new inode and receipt.
    const reinstalled = { ...good(), rounds: [round(), round({ bundles: [{ ...DIR, inode: 77, receiptMtime: 1_796_000_900 }] })] };
    expect(judged(reinstalled, "R-bundle-reuse-bundle")).toEqual({
      holds: false,
      observed: {
        rounds: [
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
        ],
        secondChanged: ["inode", "receiptMtime"],
        sameWorkerBundleHash: true,
        preinstalledChanged: [],
      },
    });
    expect(judgeHistory(hist(reinstalled), scenario, []).verdict).toBe("fail");
    // A second bundle beside the first, named by a new workerBundleHash, and a stray receipt.
    const OTHER = { ...DIR, dir: DIR.dir.replace("ab12", "cd34"), hash: "cd34" };
    const second = { ...good(), rounds: [round(), round({ workerBundleHash: "cd34", bundles: [DIR, OTHER], strayReceipts: ["/home/lab/bootstrap-receipt.json"] })] };
    expect(judged(second, "R-bundle-reuse-bundle")).toEqual({
      holds: false,
      observed: {
        rounds: [
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
          { bundleDirs: 2, namedByPlacement: false, strayReceipts: 1 },
        ],
        secondChanged: [],
        sameWorkerBundleHash: false,
        preinstalledChanged: [],
      },
    });
    // The first dispatch replaced the bundle that was there before; on a fresh node that part is not judged.
    const replaced = { ...good(), node: { nodeId: "id-1", bundlesBefore: [{ ...DIR, receipt: { bundleHash: "ab12", openclawVersion: "2026.9.5" } }] } };
    expect(judged(replaced, "R-bundle-reuse-bundle")).toMatchObject({ holds: false, observed: { preinstalledChanged: ["receipt"] } });
    expect(judged({ ...good(), node: { nodeId: "id-1", bundlesBefore: [] } }, "R-bundle-reuse-bundle")).toMatchObject({ holds: true, observed: { preinstalledChanged: null } });
    // No bundle directory at all after a dispatch.
    expect(judged({ ...good(), rounds: [round({ bundles: [] }), round()] }, "R-bundle-reuse-bundle")).toEqual({
      holds: false,
      observed: {
        rounds: [
          { bundleDirs: 0, namedByPlacement: false, strayReceipts: 0 },
          { bundleDirs: 1, namedByPlacement: true, strayReceipts: 0 },
        ],
        secondChanged: ["missing"],
        sameWorkerBundleHash: true,
        preinstalledChanged: ["missing"],
      },
    });
  });

  it("R-bundle-reuse-checkout: the published commit from the dumb-HTTP URL; another HEAD or origin does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-checkout")).toEqual({
      holds: true,
      observed: [
        { atPublishedHead: true, dumbHttpOrigin: true },
        { atPublishedHead: true, dumbHttpOrigin: true },
      ],
    });
    const smartOrigin = { ...good(), rounds: [round(), round({ checkout: { head: "0000000", origin: `http://git.lab/smart/${WS.repo}.git` } })] };
    expect(judged(smartOrigin, "R-bundle-reuse-checkout")).toEqual({
      holds: false,
      observed: [
        { atPublishedHead: true, dumbHttpOrigin: true },
        { atPublishedHead: false, dumbHttpOrigin: false },
      ],
    });
  });

  it("R-bundle-reuse-turns: both turns proven on the node; a turn answered elsewhere does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-turns")).toEqual({
      holds: true,
      observed: [
        { reply: "node-only marker", launches: 1 },
        { reply: "node-only marker", launches: 1 },
      ],
    });
    const onGateway = { ...good(), turns: [turn("mark-1"), turn("mark-2", { reply: "fleetlab-ok: read returned: nothing", launches: [] })] };
    expect(judged(onGateway, "R-bundle-reuse-turns")).toEqual({
      holds: false,
      observed: [
        { reply: "node-only marker", launches: 1 },
        { reply: "fleetlab-ok: read returned: nothing", launches: 0 },
      ],
    });
  });

  it("R-bundle-reuse-dumb-fetch: objects over dumb HTTP, no smart request; none, or smart, does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-dumb-fetch")).toEqual({ holds: true, observed: { dumbObjects: true, smart: false } });
    expect(judged({ ...good(), fetched: [] }, "R-bundle-reuse-dumb-fetch")).toEqual({ holds: false, observed: { dumbObjects: false, smart: false } });
    const smart = { ...good(), fetched: [...DUMB, { method: "GET", path: `/smart/${WS.repo}.git/info/refs?service=git-upload-pack`, status: 200 }] };
    expect(judged(smart, "R-bundle-reuse-dumb-fetch")).toEqual({ holds: false, observed: { dumbObjects: true, smart: true } });
    // An object GET that was not answered 200 is no fetch.
    expect(judged({ ...good(), fetched: [{ ...DUMB[1]!, status: 404 }] }, "R-bundle-reuse-dumb-fetch")).toEqual({ holds: false, observed: { dumbObjects: false, smart: false } });
  });

  it("R-bundle-reuse-installed: node.list says installed afterwards; anything else does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-installed")).toEqual({ holds: true, observed: { status: "installed" } });
    expect(judged({ ...good(), after: { bundleStatus: null } }, "R-bundle-reuse-installed")).toEqual({ holds: false, observed: { status: null } });
    expect(judged({ ...good(), after: { bundleStatus: "installing" } }, "R-bundle-reuse-installed")).toEqual({ holds: false, observed: { status: "installing" } });
  });

  it("R-bundle-reuse-reclaim: every reclaim gives reclaimed; one that does not, does not hold", () => {
    expect(judged(good(), "R-bundle-reuse-reclaim")).toEqual({ holds: true, observed: ["reclaimed", "reclaimed"] });
    const kept = { ...good(), reclaims: ["reclaimed", "active"] };
    expect(judged(kept, "R-bundle-reuse-reclaim")).toEqual({ holds: false, observed: ["reclaimed", "active"] });
    expect(judgeHistory(hist(kept), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { reclaims: _reclaims, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-bundle-reuse-reclaim had nothing to judge: the body returned without observing what it reads" });
  });
});
