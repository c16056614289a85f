import assert from "node:assert/strict";
import { defineScenario } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout, workerProcesses } from "../lab/kits/inside-node.ts";
import { wireSummary, type InventoryUpdate } from "../lab/kits/node-wire.ts";
import { assertTurnOnNode, plantNodeMarker } from "../lab/kits/proof.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { createWorkerSession, dispatchTo, placementOf, reclaim, startHeldTurn, uniqueName } from "../lab/kits/workers.ts";
import { gitRequestsFrom, publishWorkspace } from "../lab/kits/workspace.ts";
import { packageVersion } from "../lab/definitions/build.ts";

// The paired worker path end to end on one node, as OpenClaw's qa-lab proves it in one
// process: publish a repo (smart HTTP), create a session on a gateway checkout of it,
// dispatch it to node-1, and run one worker turn. Inside the node container: exactly one
// bundle directory (the placement's bundle hash), a worker process from that bundle running
// in a checkout of the published commit; the reply is the scripted model's; the slot frees.
// Premise (proven, else unknown): P-pair-inventory-answered: the node published a runner
// inventory during the turn and the gateway answered it (F-runner-inventory-rejected judges those
// answers; with none it could say nothing).
// The body drives and observes (ctx.observe); the check and the premise below judge what it observed.

/** The runner inventory updates (node.runnerInventory.update) the node's tap saw during the scenario, each with the gateway's answer (ok absent: none). */
type Inventory = (Pick<InventoryUpdate, "seq" | "errorCode" | "errorDetailsCode" | "workerHost"> & { ok?: boolean })[];
export type Observed = {
  inventory?: Inventory;
};

export default defineScenario<Observed>({
  name: "pair-and-run",
  proves: "dispatch to node-1 installs one worker bundle, a worker runs in a checkout of the published commit (smart HTTP), the turn answers with the scripted reply, worker slots return to full",
  topology: "shared",
  // It proves the first install on a fresh node (download through the tap), so it runs
  // before any other shared scenario dispatches to node-1.
  order: 0,
  // F-runner-inventory-rejected judges the answers to the node's runner inventories: it can say
  // nothing when none was published in the window (an empty list of rejections is not "accepted").
  premises: [
    {
      id: "P-pair-inventory-answered",
      what: "the node published at least one runner inventory (node.runnerInventory.update) during the turn and the gateway answered it, on the node's tap",
      judge: (h) => {
        if (!h.inventory) return undefined;
        const answered = h.inventory.filter((i) => i.ok !== undefined);
        return { met: answered.length > 0, observed: { published: h.inventory.length, answered: answered.length } };
      },
    },
  ],
  checks: [
    {
      id: "F-runner-inventory-rejected",
      expectation: "the gateway accepts every runner inventory (node.runnerInventory.update) an approved node host publishes",
      judge: (h) => {
        if (!h.inventory) return undefined;
        const rejected = h.inventory.filter((i) => i.ok === false).map((i) => ({ errorCode: i.errorCode, errorDetailsCode: i.errorDetailsCode, workerHostKeys: Object.keys((i.workerHost as object) ?? {}).sort() }));
        return { holds: rejected.length === 0, observed: rejected };
      },
    },
  ],
  timeoutMs: 240_000,
  async run({ lab, log, file, observe, signal }) {
    const alias = lab.nodes[0]!.alias;
    const tapSince = await lab.tap(alias).seq();
    const tHost = performance.now();
    const node = await waitForWorkerHost(lab, alias, { signal });
    log(`${alias} before (a worker host ${Math.round(performance.now() - tHost)} ms after the scenario started): ${JSON.stringify(summarizeNode(node))}`);
    const bundlesBefore = await installedBundles(lab, alias);

    const gitSince = (await lab.git.log()).at(-1)?.seq ?? 0;
    const ws = await publishWorkspace(lab, { repo: uniqueName("pair-and-run"), protocol: "smart" });
    log(`published ${ws.repo} at ${ws.sha}; gateway checkout ${ws.gatewayCheckout} (origin ${ws.labUrl})`);
    const session = await createWorkerSession(lab, ws);
    log(`sessions.create: ${session.key}, worktree ${JSON.stringify(session.worktree)}`);

    const d = await dispatchTo(lab, session.key, alias);
    const p = d.placement;
    log(`sessions.dispatch to ${alias}: ${p.state} in ${d.ms} ms, bundle ${p.workerBundleHash}, checkout ${p.remoteWorkspaceDir}`);
    assert.equal(p.state, "active");
    assert.equal(p.providerId, "device");
    assert.deepEqual(p.runner, { kind: "device", deviceId: node.nodeId, status: "available" }, "placement runner is not node-1");
    assert.match(p.workerBundleHash ?? "", /^[a-f0-9]{64}$/);
    assert.deepEqual(await placementOf(lab, session.key).then((x) => x && { state: x.state, runner: x.runner }), { state: "active", runner: p.runner }, "sessions.describe does not show the active placement");

    // The bundle: node.list reports it installed, and the node holds exactly one bundle dir.
    const installed = await waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", { signal });
    assert.equal(installed.workerBundle?.version, packageVersion(lab.spec.openclawVersion), "node.list workerBundle.version");
    const bundles = await installedBundles(lab, alias);
    log(`bundle dirs on ${alias}: ${bundles.bundles.map((b) => b.dir).join(", ")} (before dispatch: ${bundlesBefore.bundles.length})`);
    assert.equal(bundles.bundles.length, 1, `expected exactly one installed bundle directory on ${alias}`);
    const bundle = bundles.bundles[0]!;
    assert.equal(bundle.hash, p.workerBundleHash, "bundle directory name vs placement.workerBundleHash");
    assert.equal(bundle.receipt?.bundleHash, p.workerBundleHash, "bootstrap-receipt.json bundleHash");
    assert.equal(bundle.receipt?.openclawVersion, packageVersion(lab.spec.openclawVersion), "bootstrap-receipt.json openclawVersion");
    assert.ok(bundle.files.includes("worker.mjs"), `bundle has no worker.mjs: ${bundle.files.join(", ")}`);
    assert.deepEqual(bundles.strayReceipts, [], "bundle receipts outside node-host/*/bundles/");

    // The checkout: the node fetched the repo itself and sits at the published commit.
    const co = await workerCheckout(lab, alias, p, ws);
    log(`worker checkout on ${alias}: HEAD ${co.head}, origin ${co.origin}, files ${co.files.join(", ")}`);
    assert.equal(co.head, ws.sha, "worker checkout HEAD vs published commit");
    assert.equal(co.origin, ws.labUrl, "worker checkout origin");
    for (const [rel, text] of Object.entries(ws.files)) assert.equal(co.contents[rel], text, `${rel} in the worker checkout`);
    const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
    assert.ok(
      fetched.some((e) => e.path === `/smart/${ws.repo}.git/git-upload-pack` && e.status === 200),
      `${alias} did not fetch ${ws.repo} over smart HTTP itself: ${JSON.stringify(fetched)}`,
    );

    // The turn: the model asks the worker to `read` a file that exists only in the node's
    // checkout (written there now), so the answer proves the tool ran in that checkout on the
    // node. The first model call is held so the worker process can be seen on the node.
    const marker = await plantNodeMarker(lab, alias, p);
    const { message, nonce: token } = marker;
    const turnSince = await lab.tap(alias).seq();
    const held = await startHeldTurn(lab, session.key, message, token);
    let during: { slots: unknown; workers: unknown } | undefined;
    try {
      const busy = await waitForNode(lab, alias, "one worker slot in use", (n) => !!n.workerSlots && n.workerSlots.available === n.workerSlots.total - 1, { signal });
      const workers = await workerProcesses(lab, alias);
      during = { slots: busy.workerSlots, workers };
      log(`during the turn: slots ${JSON.stringify(busy.workerSlots)}, workers ${JSON.stringify(workers)}`);
      assert.equal(workers.length, 1, "expected exactly one worker process on the node during the turn");
      assert.ok(workers[0]!.args.includes(`${bundle.dir}/worker.mjs`), `the worker does not run from the installed bundle: ${workers[0]!.args}`);
    } finally {
      await lab.model.release(held.held.id).catch(() => {});
    }
    const result = await held.turn;
    log(`worker turn: ${JSON.stringify(result.text)} in ${result.durationMs} ms (incl. the hold)`);
    const proof = await assertTurnOnNode(lab, { alias, marker, reply: result.text, tapSince: turnSince }, "the worker turn");
    const toolRound = (await lab.model.requests()).filter((r) => (r.userText ?? "").includes(token));
    assert.deepEqual(toolRound.map((r) => [r.round, r.status]), [[0, "completed"], [1, "completed"]], "model calls of the turn (call read, then answer)");

    const free = await waitForNode(lab, alias, "worker slots back to full", slotsFree, { signal });
    const workersAfter = await workerProcesses(lab, alias);
    assert.deepEqual(workersAfter, [], "a worker process is still running after the turn");
    log(`after the turn: slots ${JSON.stringify(free.workerSlots)}`);
    // Not asserted (the node wrote it outside the worker): does the gateway worktree get it back?
    const synced = session.worktree ? await lab.exec(lab.spec.gateway.alias, ["cat", `${session.worktree.path}/${marker.path}`]) : undefined;
    log(`node-only file in the gateway worktree after the turn: ${synced?.exitCode === 0 ? JSON.stringify(synced.stdout.trim()) : "absent"}`);

    // The wire between node-1 and the gateway, as its tap recorded it.
    const wire = await wireSummary(lab, alias, tapSince);
    const installedNow = bundlesBefore.bundles.length === 0;
    log(`tap: ${wire.bundleInstalls.length} worker.bundle.install.v1, ${wire.launches.length} worker.launch.v1, bundle GETs ${JSON.stringify(wire.bundleDownloads.map((h) => [h.status, h.resBytes]))}, worker sockets ${wire.workerSockets.length}, inventory updates ${JSON.stringify(wire.inventory.map((i) => i.ok))}`);
    // The gateway sends worker.bundle.install.v1 with every dispatch; the node decides. On a
    // node that already holds the bundle (another shared scenario dispatched there first) it is
    // answered without a download: measured on 2026.9.6, 1 install command and 0 bundle GETs.
    assert.equal(wire.bundleInstalls.length, 1, `${alias} should receive worker.bundle.install.v1 once`);
    if (installedNow) assert.ok(wire.bundleDownloads.some((h) => h.status === 200 && h.resBytes > 1_000_000), "the bundle download did not pass the tap");
    else assert.deepEqual(wire.bundleDownloads, [], `${alias} downloaded the bundle again although it was installed`);
    assert.ok(wire.launches.length >= 1, `${alias} never received worker.launch.v1`);
    assert.ok(wire.workerSockets.length >= 1, "the worker's own WebSocket did not pass the tap");
    observe("inventory", wire.inventory.map(({ seq, ok, errorCode, errorDetailsCode, workerHost }) => ({ seq, ok, errorCode, errorDetailsCode, workerHost })));

    const reclaimed = await reclaim(lab, session.key);
    log(`sessions.reclaim: ${reclaimed.state}`);
    assert.equal(reclaimed.state, "reclaimed");

    writeJson(file("evidence.json"), {
      node: { before: summarizeNode(node), installed: summarizeNode(installed), after: summarizeNode(free) },
      workspace: { repo: ws.repo, sha: ws.sha, labUrl: ws.labUrl, gatewayCheckout: ws.gatewayCheckout },
      session: { key: session.key, sessionId: session.sessionId, worktree: session.worktree },
      dispatch: { ms: d.ms, placement: p },
      bundles: { before: bundlesBefore, after: bundles, installedByThisDispatch: bundlesBefore.bundles.length === 0 },
      checkout: co,
      nodeGitRequests: fetched,
      during,
      markerInGatewayWorktree: synced?.exitCode === 0 ? synced.stdout : null,
      turn: { message, marker, text: result.text, runId: result.runId, ms: result.durationMs, proof: proof.evidence },
      reclaimed,
      wire,
    });
  },
});
