import assert from "node:assert/strict";
import type { SessionsCreateResult } from "../lab/clients/sessions.ts";
import { defineScenario } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout } from "../lab/kits/inside-node.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { assertTurnOnNode, plantNodeMarker } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchTo, reclaim, uniqueName, workerTurn } from "../lab/kits/workers.ts";
import { gitRequestsFrom, publishWorkspace } from "../lab/kits/workspace.ts";
import { packageVersion } from "../lab/definitions/build.ts";

// One session per node host of the lab (node-1 and node-2 in the standard lab; every node
// with NODES=N), dispatched at once, each to its own node: every node installs its own copy
// of the same worker bundle, fetches the repo itself, and every turn answers.
export default defineScenario({
  name: "two-nodes",
  proves: "sessions dispatched at once to each node host are placed there, each node installs its own copy of the bundle and fetches the repo itself, and every turn answers from its own node (a node-only file read, the launch on its tap)",
  topology: "shared",
  timeoutMs: 300_000,
  async run({ lab, log, file, signal }) {
    const aliases = lab.nodes.map((m) => m.alias);
    assert.ok(aliases.length >= 2, `this scenario needs at least two node hosts (the lab has ${aliases.length})`);
    const nodes = await Promise.all(aliases.map((a) => waitForWorkerHost(lab, a, { signal })));

    const gitSince = (await lab.git.log()).at(-1)?.seq ?? 0;
    const ws = await publishWorkspace(lab, { repo: uniqueName("two-nodes"), protocol: "smart" });
    log(`published ${ws.repo} at ${ws.sha}`);
    // Worktrees of one gateway checkout are created one at a time (git locks the repo).
    const sessions: SessionsCreateResult[] = [];
    for (const a of aliases) sessions.push(await createWorkerSession(lab, ws, { label: `two-nodes ${a} ${ws.repo}` }));

    const t0 = performance.now();
    const dispatched = await Promise.all(aliases.map((a, i) => dispatchTo(lab, sessions[i]!.key, a)));
    log(`${aliases.length} dispatches at once: ${dispatched.map((d, i) => `${aliases[i]} ${d.placement.state} ${d.ms} ms`).join(", ")}; all in ${Math.round(performance.now() - t0)} ms`);

    const perNode = [];
    for (const [i, alias] of aliases.entries()) {
      const p = dispatched[i]!.placement;
      assert.equal(p.state, "active", `${alias}: placement state`);
      assert.equal(p.runner?.deviceId, nodes[i]!.nodeId, `the session for ${alias} was placed on ${p.runner?.deviceId}`);
      const entry = await waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", { signal });
      assert.equal(entry.workerBundle?.version, packageVersion(lab.spec.openclawVersion));
      const bundles = await installedBundles(lab, alias);
      assert.equal(bundles.bundles.length, 1, `${alias}: expected exactly one bundle directory, found ${bundles.bundles.map((b) => b.dir).join(", ")}`);
      assert.equal(bundles.bundles[0]!.hash, p.workerBundleHash, `${alias}: bundle directory vs placement.workerBundleHash`);
      assert.equal(bundles.bundles[0]!.receipt?.bundleHash, p.workerBundleHash);
      const co = await workerCheckout(lab, alias, p, ws);
      assert.equal(co.head, ws.sha, `${alias}: worker checkout HEAD`);
      const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
      assert.ok(fetched.some((e) => e.path === `/smart/${ws.repo}.git/git-upload-pack`), `${alias} did not fetch ${ws.repo} itself: ${JSON.stringify(fetched)}`);
      perNode.push({ alias, nodeId: nodes[i]!.nodeId, session: sessions[i]!.key, dispatchMs: dispatched[i]!.ms, placement: p, bundle: bundles.bundles[0], checkout: co, gitRequests: fetched });
    }
    // Same gateway, same build: one bundle hash everywhere, but a copy on each node.
    assert.equal(new Set(perNode.map((x) => x.placement.workerBundleHash)).size, 1, "nodes got different worker bundles from one gateway");
    assert.equal(new Set(perNode.map((x) => x.placement.environmentId)).size, aliases.length, "two placements share one worker environment");

    // Each turn reads a file only its node's checkout has, and its node's tap must show the launch.
    const turns = await Promise.all(
      perNode.map(async (x) => {
        const marker = await plantNodeMarker(lab, x.alias, x.placement, { note: `turn on ${x.alias}` });
        const since = await lab.tap(x.alias).seq();
        const r = await workerTurn(lab, x.session, marker.message);
        return { alias: x.alias, marker, since, message: marker.message, text: r.text, ms: r.durationMs };
      }),
    );
    const proofs = [];
    for (const t of turns) {
      log(`turn on ${t.alias}: ${JSON.stringify(t.text)} in ${t.ms} ms`);
      proofs.push((await assertTurnOnNode(lab, { alias: t.alias, marker: t.marker, reply: t.text, tapSince: t.since }, `turn on ${t.alias}`)).evidence);
    }

    const after = await Promise.all(aliases.map((a) => waitForNode(lab, a, "worker slots back to full", slotsFree, { signal })));
    for (const x of perNode) assert.equal((await reclaim(lab, x.session)).state, "reclaimed");
    writeJson(file("evidence.json"), { workspace: { repo: ws.repo, sha: ws.sha }, perNode, turns: turns.map(({ marker: _, ...t }) => t), proofs, nodesAfter: after.map(summarizeNode) });
  },
});
