import assert from "node:assert/strict";
import { defineScenario } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout, type BundleDir } from "../lab/kits/inside-node.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { assertTurnOnNode, plantNodeMarker } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchTo, reclaim, uniqueName, workerTurn } from "../lab/kits/workers.ts";
import { gitRequestsFrom, publishWorkspace } from "../lab/kits/workspace.ts";

// Two sessions dispatched one after the other to the same node: the second finds the worker
// bundle the first installed (or that was already there) and installs nothing new: still
// exactly one bundle directory, the same directory (inode) with the same receipt (mtime).
// The repo is served over dumb HTTP, and the node fetches it that way itself.
export default defineScenario({
  name: "bundle-reuse",
  proves: "a second dispatch to the same node reuses its installed worker bundle (same single bundle dir, same receipt); a dumb-HTTP repo is fetched by the node and both turns answer from the node",
  topology: "shared",
  timeoutMs: 240_000,
  async run({ lab, log, file, signal }) {
    const alias = lab.nodes[0]!.alias;
    const node = await waitForWorkerHost(lab, alias, { signal });
    const bundlesBefore = await installedBundles(lab, alias);
    log(`${alias} before: ${JSON.stringify(summarizeNode(node))}; bundle dirs: ${bundlesBefore.bundles.length}`);

    const gitSince = (await lab.git.log()).at(-1)?.seq ?? 0;
    const ws = await publishWorkspace(lab, { repo: uniqueName("bundle-reuse"), protocol: "dumb" });
    log(`published ${ws.repo} at ${ws.sha}; gateway checkout from ${ws.labUrl}`);

    const identity = (b: BundleDir) => ({ dir: b.dir, hash: b.hash, inode: b.inode, receiptMtime: b.receiptMtime, receipt: b.receipt, files: b.files });
    const rounds = [];
    for (const round of [1, 2]) {
      const session = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, session.key, alias);
      const p = d.placement;
      log(`dispatch ${round} to ${alias}: ${p.state} in ${d.ms} ms, bundle ${p.workerBundleHash}`);
      assert.equal(p.state, "active");
      assert.equal(p.runner?.deviceId, node.nodeId, `dispatch ${round} was not placed on ${alias}`);
      const bundles = await installedBundles(lab, alias);
      assert.equal(bundles.bundles.length, 1, `dispatch ${round}: expected exactly one bundle directory on ${alias}, found ${bundles.bundles.map((b) => b.dir).join(", ")}`);
      assert.equal(bundles.bundles[0]!.hash, p.workerBundleHash, `dispatch ${round}: bundle directory vs placement.workerBundleHash`);
      assert.deepEqual(bundles.strayReceipts, []);

      const co = await workerCheckout(lab, alias, p, ws);
      assert.equal(co.head, ws.sha, `dispatch ${round}: worker checkout HEAD`);
      assert.equal(co.origin, ws.labUrl, `dispatch ${round}: worker checkout origin is not the dumb-HTTP URL`);

      // The turn reads a file only the node's checkout has: its answer proves it ran there.
      const marker = await plantNodeMarker(lab, alias, p, { note: `bundle reuse round ${round}` });
      const since = await lab.tap(alias).seq();
      const turn = await workerTurn(lab, session.key, marker.message);
      log(`turn ${round}: ${JSON.stringify(turn.text)} in ${turn.durationMs} ms`);
      const proof = await assertTurnOnNode(lab, { alias, marker, reply: turn.text, tapSince: since }, `turn ${round}`);
      rounds.push({ session: session.key, dispatchMs: d.ms, placement: p, bundle: identity(bundles.bundles[0]!), checkout: co, turn: { message: marker.message, text: turn.text, ms: turn.durationMs, proof: proof.evidence } });
    }

    const [first, second] = rounds as [(typeof rounds)[0], (typeof rounds)[0]];
    assert.deepEqual(second.bundle, first.bundle, "the second dispatch changed the installed bundle (reinstalled or replaced)");
    assert.equal(second.placement.workerBundleHash, first.placement.workerBundleHash);
    if (bundlesBefore.bundles.length) assert.deepEqual(identity(bundlesBefore.bundles[0]!), first.bundle, "the first dispatch replaced a bundle that was already installed");

    // The node fetched the repo over dumb HTTP (plain object GETs), never over smart HTTP.
    const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
    assert.ok(fetched.some((e) => e.path.startsWith(`/dumb/${ws.repo}.git/objects/`) && e.status === 200), `${alias} fetched no objects over dumb HTTP: ${JSON.stringify(fetched)}`);
    assert.ok(!fetched.some((e) => e.path.startsWith(`/smart/`)), `${alias} used smart HTTP for a dumb-HTTP origin`);

    const after = await waitForNode(lab, alias, "worker slots back to full", slotsFree, { signal });
    assert.equal(after.workerBundle?.status, "installed");
    for (const r of rounds) assert.equal((await reclaim(lab, r.session)).state, "reclaimed");
    log(`dispatch times: first ${first.dispatchMs} ms, second ${second.dispatchMs} ms; bundle dirs before the scenario: ${bundlesBefore.bundles.length}`);

    writeJson(file("evidence.json"), { workspace: { repo: ws.repo, sha: ws.sha, labUrl: ws.labUrl }, bundlesBefore, rounds, nodeGitRequests: fetched, nodeAfter: summarizeNode(after) });
  },
});
