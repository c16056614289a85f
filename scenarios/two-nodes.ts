import type { SessionsCreateResult } from "../lab/clients/sessions.ts";
import { defineScenario } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout } from "../lab/kits/inside-node.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, turnSeen, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, reclaim, uniqueName, workerTurn, type DispatchSeen } from "../lab/kits/workers.ts";
import { gitRequestsFrom, publishWorkspace } from "../lab/kits/workspace.ts";
import { packageVersion } from "../lab/definitions/build.ts";

// One session per node host of the lab (node-1 and node-2 in the standard lab; every node
// with NODES=N), dispatched at once, each to its own node: every node installs its own copy
// of the same worker bundle, fetches the repo itself, and every turn answers.
// Premise (proven, else unknown): P-two-nodes-hosts: the lab has at least two node hosts (with
// one there is nothing to dispatch "at once, each to its own node"; the lab's shape, not OpenClaw).
// The body drives and observes (ctx.observe); the checks below judge what it observed, and the
// body stops at the dispatch, its placement and each turn when they do not hold (ctx.proceed).

/** What one node showed after its dispatch: node.list's bundle version, the placement's bundle and environment, the bundle directories on the node, its checkout and its git requests. */
type NodeSeen = {
  alias: string;
  /** node.list's workerBundle.version once it said installed. */
  version: string | null;
  placement: { workerBundleHash: string | null; environmentId: string | null };
  /** Every bundle directory on the node: its name (the hash) and its receipt's bundleHash. */
  bundles: { hash: string; receiptHash: string | null }[];
  /** HEAD of the worker's checkout on the node. */
  head: string;
  /** The git HTTP requests the git container saw from the node for the published repo. */
  gitRequests: { method: string; path: string; status: number }[];
};

export type Observed = {
  /** The lab's node hosts (aliases): the premise reads how many there are. */
  hosts?: string[];
  /** Each node host's nodeId once it was a worker host. */
  workerHosts?: { alias: string; nodeId: string }[];
  /** The published workspace and the bundle version the build installs. */
  expected?: { repo: string; sha: string; bundleVersion: string };
  /** The dispatches, at once, one to each node (the rest needs each placed on its node: the body stops there otherwise). */
  dispatch?: DispatchSeen[];
  /** What each node showed after its dispatch, in node order (grown node by node). */
  perNode?: NodeSeen[];
  /** Each node's turn: what the proof that it ran on the node read (grown turn by turn). */
  turns?: TurnSeen[];
  /** Each session's placement state after reclaim (grown session by session). */
  reclaims?: { alias: string; state: string }[];
};

export default defineScenario<Observed>({
  name: "two-nodes",
  proves: "sessions dispatched at once to each node host are placed there, each node installs its own copy of the bundle and fetches the repo itself, and every turn answers from its own node (a node-only file read, the launch on its tap)",
  topology: "shared",
  timeoutMs: 300_000,
  premises: [
    {
      id: "P-two-nodes-hosts",
      what: "the lab has at least two node hosts, so the sessions can be dispatched at once each to its own node",
      judge: (h) => h.hosts && { met: h.hosts.length >= 2, observed: { nodeHosts: h.hosts.length } },
    },
  ],
  checks: [
    dispatchedCheck<Observed>("R-two-nodes-dispatch", (h) => h.dispatch),
    {
      id: "R-two-nodes-placed",
      expectation: "a session dispatched to a node host is placed on that node (the active placement's runner.deviceId is its nodeId)",
      // Only the active placements: one that is not active is R-two-nodes-dispatch's to judge.
      judge: (h) => {
        const active = h.dispatch?.filter((d) => d.state === "active") ?? [];
        if (!active.length || !h.workerHosts) return undefined;
        const placed = active.map((d) => ({ alias: d.alias, onItsNode: d.deviceId !== undefined && d.deviceId === h.workerHosts!.find((w) => w.alias === d.alias)?.nodeId }));
        return { holds: placed.every((p) => p.onItsNode), observed: placed };
      },
    },
    {
      id: "R-two-nodes-bundle",
      expectation: "each node installs its own copy of its placement's worker bundle: node.list reports the build's bundle version installed, and the node holds exactly one bundle directory, named by placement.workerBundleHash, whose receipt names the same hash",
      judge: (h) => {
        if (!h.perNode?.length || !h.expected) return undefined;
        const nodes = h.perNode.map((n) => {
          const hash = n.placement.workerBundleHash;
          return { alias: n.alias, versionIsBuild: n.version === h.expected!.bundleVersion, bundleDirs: n.bundles.length, dirIsPlacementHash: n.bundles[0]?.hash === hash, receiptIsPlacementHash: !!n.bundles[0] && n.bundles[0].receiptHash === hash };
        });
        return { holds: nodes.every((n) => n.versionIsBuild && n.bundleDirs === 1 && n.dirIsPlacementHash && n.receiptIsPlacementHash), observed: nodes };
      },
    },
    {
      id: "R-two-nodes-placements",
      expectation: "one gateway gives every node's placement the same worker bundle hash, and each placement its own worker environment",
      judge: (h) => {
        if (!h.perNode?.length || !h.hosts) return undefined;
        const bundleHashes = new Set(h.perNode.map((n) => n.placement.workerBundleHash)).size;
        const environments = new Set(h.perNode.map((n) => n.placement.environmentId)).size;
        return { holds: bundleHashes === 1 && environments === h.hosts.length, observed: { placements: h.perNode.length, bundleHashes, environments } };
      },
    },
    {
      id: "R-two-nodes-checkout",
      expectation: "each node fetches the published repo itself (smart HTTP git-upload-pack) and its worker checkout is at the published commit",
      judge: (h) => {
        if (!h.perNode?.length || !h.expected) return undefined;
        const { repo, sha } = h.expected;
        const nodes = h.perNode.map((n) => ({ alias: n.alias, atPublishedCommit: n.head === sha, fetchedItself: n.gitRequests.some((e) => e.path === `/smart/${repo}.git/git-upload-pack`) }));
        return { holds: nodes.every((n) => n.atPublishedCommit && n.fetchedItself), observed: nodes };
      },
    },
    {
      id: "R-two-nodes-turns",
      expectation: "every node's turn answers from its own node (it reads a node-only file; worker.launch.v1 on that node's tap)",
      judge: (h) => {
        if (!h.turns?.length) return undefined;
        const each = h.turns.map((t) => ({ alias: t.alias, ...turnOnNode(t) }));
        return { holds: each.every((t) => t.holds), observed: each.map((t) => ({ alias: t.alias, ...t.observed })) };
      },
    },
    {
      id: "R-two-nodes-reclaim",
      expectation: "reclaiming each session after its turn frees its placement (state reclaimed)",
      judge: (h) => h.reclaims?.length ? { holds: h.reclaims.every((r) => r.state === "reclaimed"), observed: h.reclaims } : undefined,
    },
  ],
  async run({ lab, log, file, observe, proceed, signal }) {
    const aliases = lab.nodes.map((m) => m.alias);
    observe("hosts", aliases);
    if (!proceed("P-two-nodes-hosts")) return;
    const nodes = await Promise.all(aliases.map((a) => waitForWorkerHost(lab, a, { signal })));
    observe("workerHosts", aliases.map((alias, i) => ({ alias, nodeId: nodes[i]!.nodeId })));

    const gitSince = (await lab.git.log()).at(-1)?.seq ?? 0;
    const ws = await publishWorkspace(lab, { repo: uniqueName("two-nodes"), protocol: "smart" });
    log(`published ${ws.repo} at ${ws.sha}`);
    observe("expected", { repo: ws.repo, sha: ws.sha, bundleVersion: packageVersion(lab.spec.openclawVersion) });
    // Worktrees of one gateway checkout are created one at a time (git locks the repo).
    const sessions: SessionsCreateResult[] = [];
    for (const a of aliases) sessions.push(await createWorkerSession(lab, ws, { label: `two-nodes ${a} ${ws.repo}` }));

    const t0 = performance.now();
    const dispatched = await Promise.all(aliases.map((a, i) => dispatchTo(lab, sessions[i]!.key, a)));
    log(`${aliases.length} dispatches at once: ${dispatched.map((d, i) => `${aliases[i]} ${d.placement.state} ${d.ms} ms`).join(", ")}; all in ${Math.round(performance.now() - t0)} ms`);
    observe("dispatch", dispatched.map((d, i) => dispatchSeen(aliases[i]!, d)));
    if (!proceed("R-two-nodes-dispatch")) return;
    if (!proceed("R-two-nodes-placed")) return;

    const perNode = [];
    const seen: NodeSeen[] = [];
    for (const [i, alias] of aliases.entries()) {
      const p = dispatched[i]!.placement;
      const entry = await waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", { signal });
      const bundles = await installedBundles(lab, alias);
      const co = await workerCheckout(lab, alias, p, ws);
      const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
      seen.push({
        alias,
        version: entry.workerBundle?.version ?? null,
        placement: { workerBundleHash: p.workerBundleHash ?? null, environmentId: p.environmentId ?? null },
        bundles: bundles.bundles.map((b) => ({ hash: b.hash, receiptHash: b.receipt?.bundleHash ?? null })),
        head: co.head,
        gitRequests: fetched,
      });
      observe("perNode", seen);
      perNode.push({ alias, nodeId: nodes[i]!.nodeId, session: sessions[i]!.key, dispatchMs: dispatched[i]!.ms, placement: p, bundle: bundles.bundles[0], checkout: co, gitRequests: fetched });
    }

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
    const turnsSeen: TurnSeen[] = [];
    for (const t of turns) {
      log(`turn on ${t.alias}: ${JSON.stringify(t.text)} in ${t.ms} ms`);
      const o = { alias: t.alias, marker: t.marker, reply: t.text };
      const proof = await proveTurnOnNode(lab, { ...o, tapSince: t.since });
      turnsSeen.push(turnSeen(o, proof));
      proofs.push(proof.evidence);
      observe("turns", turnsSeen);
      if (!proceed("R-two-nodes-turns")) return;
    }

    const after = await Promise.all(aliases.map((a) => waitForNode(lab, a, "worker slots back to full", slotsFree, { signal })));
    const reclaims: { alias: string; state: string }[] = [];
    for (const x of perNode) {
      reclaims.push({ alias: x.alias, state: (await reclaim(lab, x.session)).state });
      observe("reclaims", reclaims);
    }
    writeJson(file("evidence.json"), { workspace: { repo: ws.repo, sha: ws.sha }, perNode, turns: turns.map(({ marker: _, ...t }) => t), proofs, nodesAfter: after.map(summarizeNode) });
  },
});
