// pair-and-run's declared checks and premise, judged on hand-made histories (no Docker): the
// dispatch and its placement, the installed bundle (node.list and the node's disk), the worker's
// checkout, the worker process during and after the turn, the proof the turn ran on the node, its
// model rounds, the worker path on the node's tap, the runner inventory updates (each with the
// gateway's answer) and the reclaim.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, judgeHistory } from "../lab/judge/history.ts";
import type { TurnSeen } from "../lab/kits/proof.ts";
import { checkOf, historyOf } from "../lab/testing/histories.ts";
import scenario, { type Observed } from "./pair-and-run.ts";

const hist = (observations: Observed) => historyOf(scenario, observations);
const judged = (o: Observed, id: string) => {
  const c = checkOf(scenario, id, o);
  return c && { holds: c.holds, observed: c.observed };
};
const EXPECTATION = "the gateway accepts every runner inventory (node.runnerInventory.update) an approved node host publishes";
const HOST = { enabled: true, capacity: { total: 2, available: 2 }, bundleStatus: 1 };

const HASH = "0230f50ea7ce1c5004f017e408544c9fcb2ff804acf49fe2500b7dd9f78788a7";
const DIR = `/home/lab/.openclaw/node-host/gateway-1/bundles/${HASH}`;
const RUNNER = { kind: "device", deviceId: "id-1", status: "available" };
const REPO = "pair-and-run-6a0e4c";
const URL = `http://git:8080/smart/${REPO}.git`;
const FILES = { "README.md": "# fleetlab workspace\n", "fleetlab-repo.txt": `${REPO}\n`, "src/notes/plan.md": "# Plan\n" };
const REPLY = "fleetlab-ok: read returned: mark-7 written only on node-1";
const WORKER = { pid: 249, cwd: "/home/lab", args: `/usr/local/bin/node ${DIR}/worker.mjs --internal-worker-ipc --internal-worker-session` };
const turn = (more: Partial<TurnSeen> = {}): TurnSeen => ({ alias: "node-1", marker: { nonce: "mark-7", reply: REPLY, environmentId: "env-1" }, reply: REPLY, launches: [{ seq: 63, t: 1, conn: "c2", launchId: "l", environmentId: "env-1" }], ...more });
const bundleDir = (more: Partial<NonNullable<Observed["bundles"]>["dirs"][number]> = {}) => ({ dir: DIR, hash: HASH, receipt: { bundleHash: HASH, openclawVersion: "2026.9.6" }, files: ["bootstrap-receipt.json", "worker.mjs"], ...more });

/** A run where everything went as a user needs it, on a node that held no bundle before. */
const good = (): Observed => ({
  dispatch: { alias: "node-1", state: "active", deviceId: "id-1" },
  placement: { nodeId: "id-1", providerId: "device", runner: RUNNER, workerBundleHash: HASH, described: { state: "active", runner: RUNNER } },
  nodeBundle: { version: "2026.9.6", packageVersion: "2026.9.6" },
  bundles: { placementHash: HASH, packageVersion: "2026.9.6", dirs: [bundleDir()], strayReceipts: [] },
  checkout: {
    repo: REPO,
    sha: "dfca19e",
    labUrl: URL,
    head: "dfca19e",
    origin: URL,
    published: FILES,
    contents: { ...FILES },
    nodeGitRequests: [
      { method: "GET", path: `/smart/${REPO}.git/info/refs?service=git-upload-pack`, status: 200 },
      { method: "POST", path: `/smart/${REPO}.git/git-upload-pack`, status: 200 },
    ],
  },
  during: { slots: { total: 2, available: 1 }, workers: [WORKER] },
  turn: turn(),
  rounds: [
    { round: 0, status: "completed" },
    { round: 1, status: "completed" },
  ],
  after: { workers: [] },
  wire: { bundlesBefore: 0, bundleInstalls: 1, bundleDownloads: [{ status: 200, resBytes: 27_984_740 }], launches: 1, workerSockets: 1 },
  inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 30 }],
  reclaim: { state: "reclaimed" },
});
const IDS = [
  "R-pair-dispatch",
  "R-pair-placement",
  "R-pair-node-bundle",
  "R-pair-bundle-dir",
  "R-pair-checkout",
  "R-pair-worker-during",
  "R-pair-turn",
  "R-pair-model-rounds",
  "R-pair-worker-gone",
  "R-pair-wire",
  "F-runner-inventory-rejected",
  "R-pair-reclaim",
];

describe("pair-and-run: a run where all went well", () => {
  it("every check holds and the verdict is pass", () => {
    const d = deriveChecks(scenario.checks!, good(), true);
    expect(d.checks.map((c) => [c.id, c.holds])).toEqual(IDS.map((id) => [id, true]));
    expect(d.notes).toEqual([]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("a node that held the bundle before (another shared scenario dispatched there first): one install command, no download, pass", () => {
    const o = { ...good(), wire: { bundlesBefore: 1, bundleInstalls: 1, bundleDownloads: [], launches: 1, workerSockets: 1 } };
    expect(judged(o, "R-pair-wire")).toEqual({ holds: true, observed: { firstInstall: false, bundleInstalls: 1, bundleDownloads: 0, fullDownloads: 0, launches: 1, workerSockets: 1 } });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("pass");
  });
});

describe("pair-and-run: the steps the body stops at", () => {
  it("R-pair-dispatch: the session must be placed on the node; a body that stopped there fails on it", () => {
    expect(judged(good(), "R-pair-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local, "R-pair-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    expect(judgeHistory({ ...hist(local), stopped: "R-pair-dispatch" }, scenario, [])).toMatchObject({ verdict: "fail", detail: "R-pair-dispatch: expectation not met and no finding is registered as R-pair-dispatch" });
  });

  it("R-pair-placement: the node's device, available, a sha256 bundle hash, and sessions.describe the same; otherwise it names what differs", () => {
    expect(judged(good(), "R-pair-placement")).toEqual({ holds: true, observed: { providerId: "device", runner: "the node", bundleHash: "sha256", described: { state: "active", sameRunner: true } } });
    const other = { ...RUNNER, deviceId: "id-2", status: "busy" };
    const elsewhere = { ...good(), placement: { nodeId: "id-1", providerId: "device", runner: other, workerBundleHash: "v1", described: { state: "active", runner: other } } };
    expect(judged(elsewhere, "R-pair-placement")).toEqual({
      holds: false,
      observed: { providerId: "device", runner: { kind: "device", status: "busy", deviceIsNode: false, keys: ["deviceId", "kind", "status"] }, bundleHash: "malformed", described: { state: "active", sameRunner: true } },
    });
    const undescribed = { ...good(), placement: { nodeId: "id-1", providerId: "local", runner: null, workerBundleHash: null, described: null } };
    expect(judged(undescribed, "R-pair-placement")).toEqual({ holds: false, observed: { providerId: "local", runner: null, bundleHash: "none", described: null } });
    const stale = { ...good(), placement: { nodeId: "id-1", providerId: "device", runner: RUNNER, workerBundleHash: HASH, described: { state: "syncing", runner: null } } };
    expect(judged(stale, "R-pair-placement")).toEqual({ holds: false, observed: { providerId: "device", runner: "the node", bundleHash: "sha256", described: { state: "syncing", sameRunner: false } } });
    const { dispatch } = good();
    expect(judgeHistory({ ...hist({ dispatch, placement: elsewhere.placement }), stopped: "R-pair-placement" }, scenario, [])).toMatchObject({
      verdict: "fail",
      detail: "R-pair-placement: expectation not met and no finding is registered as R-pair-placement",
    });
  });
});

describe("pair-and-run: what the body observed and goes on after", () => {
  it("R-pair-node-bundle: node.list's bundle version is the package version; another, or none, does not hold", () => {
    expect(judged(good(), "R-pair-node-bundle")).toEqual({ holds: true, observed: { matchesPackage: true } });
    const none = { ...good(), nodeBundle: { version: null, packageVersion: "2026.9.6" } };
    expect(judged(none, "R-pair-node-bundle")).toEqual({ holds: false, observed: { matchesPackage: false, version: null } });
    expect(judgeHistory(hist(none), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-bundle-dir: one directory named by the placement's hash, its receipt and worker.mjs, no stray receipt; otherwise which part differs", () => {
    expect(judged(good(), "R-pair-bundle-dir")).toEqual({ holds: true, observed: { dirs: 1, namedByPlacement: true, receiptBundleHash: true, receiptVersion: true, workerMjs: true, strayReceipts: 0 } });
    const two = { ...good(), bundles: { placementHash: HASH, packageVersion: "2026.9.6", dirs: [bundleDir(), bundleDir({ dir: "/x/bundles/b", hash: "b" })], strayReceipts: [] } };
    expect(judged(two, "R-pair-bundle-dir")).toEqual({ holds: false, observed: { dirs: 2, strayReceipts: 0 } });
    const wrong = { ...good(), bundles: { placementHash: HASH, packageVersion: "2026.9.6", dirs: [bundleDir({ receipt: { bundleHash: "b", openclawVersion: "2026.9.5" }, files: ["bootstrap-receipt.json"] })], strayReceipts: ["/home/lab/bootstrap-receipt.json"] } };
    expect(judged(wrong, "R-pair-bundle-dir")).toEqual({ holds: false, observed: { dirs: 1, namedByPlacement: true, receiptBundleHash: false, receiptVersion: false, workerMjs: false, strayReceipts: 1 } });
    const noReceipt = { ...good(), bundles: { placementHash: HASH, packageVersion: "2026.9.6", dirs: [bundleDir({ hash: "other", receipt: null })], strayReceipts: [] } };
    expect(judged(noReceipt, "R-pair-bundle-dir")).toEqual({ holds: false, observed: { dirs: 1, namedByPlacement: false, receiptBundleHash: false, receiptVersion: false, workerMjs: true, strayReceipts: 0 } });
    expect(judgeHistory(hist(wrong), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-checkout: the published commit, origin and files, fetched by the node over smart HTTP; otherwise which part differs", () => {
    expect(judged(good(), "R-pair-checkout")).toEqual({ holds: true, observed: { atPublishedCommit: true, originIsLab: true, filesDiffering: [], fetchedOverSmartHttp: true } });
    const c = good().checkout!;
    const off = {
      ...good(),
      checkout: { ...c, head: "0ld", origin: "/home/lab/workspaces/x", contents: { ...FILES, "src/notes/plan.md": "changed\n", "README.md": null }, nodeGitRequests: [{ method: "GET", path: `/dumb/${REPO}.git/info/refs`, status: 200 }, { method: "POST", path: `/smart/${REPO}.git/git-upload-pack`, status: 500 }] },
    };
    expect(judged(off, "R-pair-checkout")).toEqual({ holds: false, observed: { atPublishedCommit: false, originIsLab: false, filesDiffering: ["README.md", "src/notes/plan.md"], fetchedOverSmartHttp: false } });
    expect(judgeHistory(hist(off), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-worker-during: exactly one worker, from the installed bundle; none, two, or one from elsewhere does not hold", () => {
    expect(judged(good(), "R-pair-worker-during")).toEqual({ holds: true, observed: { workers: 1, fromInstalledBundle: true } });
    expect(judged({ ...good(), during: { slots: { total: 2, available: 1 }, workers: [] } }, "R-pair-worker-during")).toEqual({ holds: false, observed: { workers: 0 } });
    expect(judged({ ...good(), during: { slots: { total: 2, available: 1 }, workers: [WORKER, { ...WORKER, pid: 250 }] } }, "R-pair-worker-during")).toEqual({ holds: false, observed: { workers: 2 } });
    const elsewhere = { ...good(), during: { slots: { total: 2, available: 1 }, workers: [{ ...WORKER, args: "/usr/local/bin/node /opt/openclaw/worker.mjs --internal-worker-session" }] } };
    expect(judged(elsewhere, "R-pair-worker-during")).toEqual({ holds: false, observed: { workers: 1, fromInstalledBundle: false } });
    expect(judgeHistory(hist(elsewhere), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-turn: proven on the node; a reply without the node-only marker and no launch does not hold", () => {
    expect(judged(good(), "R-pair-turn")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const local = { ...good(), turn: turn({ reply: "fleetlab-ok: read failed: mark-7 not found", launches: [] }) };
    expect(judged(local, "R-pair-turn")).toEqual({ holds: false, observed: { reply: "fleetlab-ok: read failed: <nonce> not found", launches: 0 } });
    expect(judgeHistory(hist(local), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-model-rounds: round 0 and round 1, both completed; a failed or missing round does not hold", () => {
    expect(judged(good(), "R-pair-model-rounds")).toEqual({ holds: true, observed: good().rounds });
    const failed = [
      { round: 0, status: "completed" },
      { round: 1, status: "failed" },
    ];
    expect(judged({ ...good(), rounds: failed }, "R-pair-model-rounds")).toEqual({ holds: false, observed: failed });
    expect(judged({ ...good(), rounds: [{ round: null, status: "completed" }] }, "R-pair-model-rounds")).toEqual({ holds: false, observed: [{ round: null, status: "completed" }] });
    expect(judgeHistory(hist({ ...good(), rounds: failed }), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-worker-gone: no worker process once the slots are full again; one left does not hold", () => {
    expect(judged(good(), "R-pair-worker-gone")).toEqual({ holds: true, observed: { workers: 0 } });
    expect(judged({ ...good(), after: { workers: [WORKER] } }, "R-pair-worker-gone")).toEqual({ holds: false, observed: { workers: 1 } });
    expect(judgeHistory(hist({ ...good(), after: { workers: [WORKER] } }), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-wire: one install, the download on a fresh node (none again on one that had it), a launch, the worker's socket; otherwise the counts", () => {
    expect(judged(good(), "R-pair-wire")).toEqual({ holds: true, observed: { firstInstall: true, bundleInstalls: 1, bundleDownloads: 1, fullDownloads: 1, launches: 1, workerSockets: 1 } });
    // A fresh node whose download never passed the tap in full, with no launch or worker socket.
    const cut = { ...good(), wire: { bundlesBefore: 0, bundleInstalls: 1, bundleDownloads: [{ status: 200, resBytes: 4_096 }, { status: null, resBytes: 0 }], launches: 0, workerSockets: 0 } };
    expect(judged(cut, "R-pair-wire")).toEqual({ holds: false, observed: { firstInstall: true, bundleInstalls: 1, bundleDownloads: 2, fullDownloads: 0, launches: 0, workerSockets: 0 } });
    // A node that had the bundle downloads it again; two install commands.
    const again = { ...good(), wire: { bundlesBefore: 1, bundleInstalls: 2, bundleDownloads: [{ status: 200, resBytes: 27_984_740 }], launches: 1, workerSockets: 1 } };
    expect(judged(again, "R-pair-wire")).toEqual({ holds: false, observed: { firstInstall: false, bundleInstalls: 2, bundleDownloads: 1, fullDownloads: 1, launches: 1, workerSockets: 1 } });
    expect(judged({ ...again, wire: { ...again.wire, bundleInstalls: 1 } }, "R-pair-wire")).toMatchObject({ holds: false });
    expect(judgeHistory(hist(cut), scenario, []).verdict).toBe("fail");
  });

  it("R-pair-reclaim: the reclaim frees the placement; another state does not hold", () => {
    expect(judged(good(), "R-pair-reclaim")).toEqual({ holds: true, observed: { state: "reclaimed" } });
    expect(judged({ ...good(), reclaim: { state: "draining" } }, "R-pair-reclaim")).toEqual({ holds: false, observed: { state: "draining" } });
    expect(judgeHistory(hist({ ...good(), reclaim: { state: "draining" } }), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { turn: _turn, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-pair-turn had nothing to judge: the body returned without observing what it reads" });
  });
});

describe("pair-and-run: F-runner-inventory-rejected", () => {
  it("holds when the gateway accepted every update (an unanswered one is not a rejection)", () => {
    const o: Observed = { ...good(), inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 30 }] };
    expect(checkOf(scenario, "F-runner-inventory-rejected", o)).toEqual({ id: "F-runner-inventory-rejected", expectation: EXPECTATION, holds: true, observed: [] });
    expect(deriveChecks(scenario.checks!, o, true).notes).toEqual([]);
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("pass");
  });

  it("does not hold when one was rejected: its error codes and the worker host's keys, sorted", () => {
    const o: Observed = { ...good(), inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 12, ok: false, errorCode: "INVALID_REQUEST", errorDetailsCode: "INVALID_PARAMS", workerHost: { portalStream: 1, enabled: true, capacity: {} } }, { seq: 14, ok: false }] };
    expect(checkOf(scenario, "F-runner-inventory-rejected", o)).toEqual({
      id: "F-runner-inventory-rejected",
      expectation: EXPECTATION,
      holds: false,
      observed: [{ errorCode: "INVALID_REQUEST", errorDetailsCode: "INVALID_PARAMS", workerHostKeys: ["capacity", "enabled", "portalStream"] }, { workerHostKeys: [] }],
    });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("fail");
  });

  it("nothing observed once the body returned: the lab could not tell", () => {
    expect(judgeHistory(hist({}), scenario, [])).toMatchObject({ verdict: "unknown" });
    expect(deriveChecks(scenario.checks!, {}, true).notes).toEqual(IDS.map((id) => ({ verdict: "unknown", text: `check ${id} had nothing to judge: the body returned without observing what it reads` })));
  });
});

describe("pair-and-run: P-pair-inventory-answered", () => {
  it("met when the node published at least one update and the gateway answered it", () => {
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 10, ok: true, workerHost: HOST }, { seq: 30 }] })).toEqual({ premises: [{ id: "P-pair-inventory-answered", met: true, observed: { published: 2, answered: 1 } }], notes: [] });
    // A rejection is an answer too.
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 10, ok: false, errorCode: "X" }] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: true, observed: { published: 1, answered: 1 } }]);
  });

  it("not met when none was published, or none answered: the verdict is unknown (the check could say nothing)", () => {
    expect(derivePremises(scenario.premises, { inventory: [] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: false, observed: { published: 0, answered: 0 } }]);
    expect(derivePremises(scenario.premises, { inventory: [{ seq: 30 }] }).premises).toEqual([{ id: "P-pair-inventory-answered", met: false, observed: { published: 1, answered: 0 } }]);
    const j = judgeHistory(hist({ ...good(), inventory: [] }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", 'the lab could not tell: premise P-pair-inventory-answered not met (the node published at least one runner inventory (node.runnerInventory.update) during the turn and the gateway answered it, on the node\'s tap): observed {"published":0,"answered":0}']);
  });
});
