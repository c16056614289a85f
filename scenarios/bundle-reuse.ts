import { isDeepStrictEqual } from "node:util";
import { defineScenario } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout, type BundleDir } from "../lab/kits/inside-node.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, turnSeen, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, reclaim, uniqueName, workerTurn, type DispatchSeen } from "../lab/kits/workers.ts";
import { gitRequestsFrom, publishWorkspace } from "../lab/kits/workspace.ts";

// Two sessions dispatched one after the other to the same node: the second finds the worker
// bundle the first installed (or that was already there) and installs nothing new: still
// exactly one bundle directory, the same directory (inode) with the same receipt (mtime).
// The repo is served over dumb HTTP, and the node fetches it that way itself.
// The body drives and observes; its declared checks judge: each dispatch placed on the node
// (R-bundle-reuse-dispatch: the round stops there otherwise), the one bundle directory and its
// reuse (R-bundle-reuse-bundle), the worker checkouts (R-bundle-reuse-checkout), both turns on the
// node (R-bundle-reuse-turns), the dumb-HTTP fetch (R-bundle-reuse-dumb-fetch), node.list's bundle
// status afterwards (R-bundle-reuse-installed) and the reclaims (R-bundle-reuse-reclaim).

/** A bundle directory's identity as the scenario compares it: a reinstall or a replacement changes one of these. */
const IDENTITY = ["dir", "hash", "inode", "receiptMtime", "receipt", "files"] as const;
const identity = (b: BundleDir): BundleDir => ({ dir: b.dir, hash: b.hash, inode: b.inode, receiptMtime: b.receiptMtime, receipt: b.receipt, files: b.files });

/** Which parts of a bundle directory's identity differ between two reads (no directory in one of them: "missing"). */
function bundleChanged(a: BundleDir | undefined, b: BundleDir | undefined): string[] {
  if (!a || !b) return ["missing"];
  return IDENTITY.filter((k) => !isDeepStrictEqual(a[k], b[k]));
}

/** One round after its dispatch: what the placement names and what the node has. */
export interface RoundSeen {
  /** placement.workerBundleHash (null: none named). */
  workerBundleHash: string | null;
  /** Every bundle directory on the node (lab/kits/inside-node.ts installedBundles). */
  bundles: BundleDir[];
  /** Bootstrap receipts anywhere else under the node's home. */
  strayReceipts: string[];
  /** The worker checkout on the node (placement.remoteWorkspaceDir): HEAD and origin URL. */
  checkout: { head: string; origin: string };
}

// The body drives and observes (ctx.observe); the checks below judge what it observed.
export type Observed = {
  /** The node before the first dispatch: its nodeId (each placement's runner must be it) and the bundle directories it already had. */
  node?: { nodeId: string; bundlesBefore: BundleDir[] };
  /** The published workspace: its repo, the commit the checkouts must be at and the dumb-HTTP URL they must come from. */
  workspace?: { repo: string; sha: string; labUrl: string };
  /** Each dispatch so far (grown per round; the round needs an active placement on the node: the body stops there otherwise). */
  dispatches?: DispatchSeen[];
  /** Each round after its dispatch (grown per round). */
  rounds?: RoundSeen[];
  /** Each round's turn: what the proof that it ran on the node read (grown per round). */
  turns?: TurnSeen[];
  /** The node's git HTTP requests for the repo since before it was published. */
  fetched?: { method: string; path: string; status: number }[];
  /** node.list's worker bundle status once the worker slots were back to full (null: none reported). */
  after?: { bundleStatus: string | null };
  /** The placement state each session's reclaim gave (grown per reclaim). */
  reclaims?: string[];
};

export default defineScenario<Observed>({
  name: "bundle-reuse",
  proves: "a second dispatch to the same node reuses its installed worker bundle (same single bundle dir, same receipt); a dumb-HTTP repo is fetched by the node and both turns answer from the node",
  topology: "shared",
  timeoutMs: 240_000,
  checks: [
    dispatchedCheck<Observed>("R-bundle-reuse-dispatch", (h) => h.dispatches, {
      onNode: (h) => h.node?.nodeId,
      expectation: "a dispatch of a session to a paired node host gives an active placement whose runner is that node",
    }),
    {
      id: "R-bundle-reuse-bundle",
      expectation:
        "after each dispatch the node has exactly one worker bundle directory, named by the placement's workerBundleHash, and no bootstrap receipt elsewhere; the second dispatch reuses it (the same directory, inode, receipt, receipt mtime and files; the same workerBundleHash), and the first keeps a bundle that was already installed",
      judge: (h) => {
        if (!h.node || !h.rounds?.length) return undefined;
        const [first, second] = h.rounds as [RoundSeen, RoundSeen | undefined];
        const before = h.node.bundlesBefore[0];
        const rounds = h.rounds.map((r) => ({ bundleDirs: r.bundles.length, namedByPlacement: !!r.bundles[0] && r.bundles[0].hash === r.workerBundleHash, strayReceipts: r.strayReceipts.length }));
        const secondChanged = second ? bundleChanged(first.bundles[0], second.bundles[0]) : null;
        const sameWorkerBundleHash = second ? second.workerBundleHash === first.workerBundleHash : null;
        const preinstalledChanged = before ? bundleChanged(before, first.bundles[0]) : null;
        const holds =
          rounds.every((r) => r.bundleDirs === 1 && r.namedByPlacement && r.strayReceipts === 0) &&
          (secondChanged === null || secondChanged.length === 0) &&
          sameWorkerBundleHash !== false &&
          (preinstalledChanged === null || preinstalledChanged.length === 0);
        return { holds, observed: { rounds, secondChanged, sameWorkerBundleHash, preinstalledChanged } };
      },
    },
    {
      id: "R-bundle-reuse-checkout",
      expectation: "each worker checkout on the node is at the published commit, with the dumb-HTTP URL as its origin",
      judge: (h) => {
        const ws = h.workspace;
        if (!ws || !h.rounds?.length) return undefined;
        const seen = h.rounds.map((r) => ({ atPublishedHead: r.checkout.head === ws.sha, dumbHttpOrigin: r.checkout.origin === ws.labUrl }));
        return { holds: seen.every((c) => c.atPublishedHead && c.dumbHttpOrigin), observed: seen };
      },
    },
    {
      id: "R-bundle-reuse-turns",
      expectation: "each worker turn after a dispatch answers from the node (it reads a node-only file; worker.launch.v1 on the node's tap)",
      judge: (h) => {
        if (!h.turns?.length) return undefined;
        const proofs = h.turns.map(turnOnNode);
        return { holds: proofs.every((p) => p.holds), observed: proofs.map((p) => p.observed) };
      },
    },
    {
      id: "R-bundle-reuse-dumb-fetch",
      expectation: "the node fetches a repo whose origin is a dumb-HTTP URL over dumb HTTP (object GETs answered 200), never over smart HTTP",
      judge: (h) => {
        const ws = h.workspace;
        if (!ws || !h.fetched) return undefined;
        const dumbObjects = h.fetched.some((e) => e.path.startsWith(`/dumb/${ws.repo}.git/objects/`) && e.status === 200);
        const smart = h.fetched.some((e) => e.path.startsWith(`/smart/`));
        return { holds: dumbObjects && !smart, observed: { dumbObjects, smart } };
      },
    },
    {
      id: "R-bundle-reuse-installed",
      expectation: "once the worker slots are back to full, node.list says the node's worker bundle is installed",
      judge: (h) => h.after && { holds: h.after.bundleStatus === "installed", observed: { status: h.after.bundleStatus } },
    },
    {
      id: "R-bundle-reuse-reclaim",
      expectation: "reclaiming each session frees its placement (state reclaimed)",
      judge: (h) => (h.reclaims?.length ? { holds: h.reclaims.every((s) => s === "reclaimed"), observed: h.reclaims } : undefined),
    },
  ],
  async run({ lab, log, file, signal, observe, proceed }) {
    const alias = lab.nodes[0]!.alias;
    const node = await waitForWorkerHost(lab, alias, { signal });
    const bundlesBefore = await installedBundles(lab, alias);
    log(`${alias} before: ${JSON.stringify(summarizeNode(node))}; bundle dirs: ${bundlesBefore.bundles.length}`);
    observe("node", { nodeId: node.nodeId, bundlesBefore: bundlesBefore.bundles.map(identity) });

    const gitSince = (await lab.git.log()).at(-1)?.seq ?? 0;
    const ws = await publishWorkspace(lab, { repo: uniqueName("bundle-reuse"), protocol: "dumb" });
    log(`published ${ws.repo} at ${ws.sha}; gateway checkout from ${ws.labUrl}`);
    observe("workspace", { repo: ws.repo, sha: ws.sha, labUrl: ws.labUrl });

    const rounds = [];
    const dispatches: DispatchSeen[] = [];
    const roundsSeen: RoundSeen[] = [];
    const turns: TurnSeen[] = [];
    for (const round of [1, 2]) {
      const session = await createWorkerSession(lab, ws);
      const d = await dispatchTo(lab, session.key, alias);
      const p = d.placement;
      log(`dispatch ${round} to ${alias}: ${p.state} in ${d.ms} ms, bundle ${p.workerBundleHash}`);
      dispatches.push(dispatchSeen(alias, d));
      observe("dispatches", [...dispatches]);
      if (!proceed("R-bundle-reuse-dispatch")) return;
      const bundles = await installedBundles(lab, alias);
      const co = await workerCheckout(lab, alias, p, ws);
      roundsSeen.push({ workerBundleHash: p.workerBundleHash ?? null, bundles: bundles.bundles.map(identity), strayReceipts: bundles.strayReceipts, checkout: { head: co.head, origin: co.origin } });
      observe("rounds", [...roundsSeen]);

      // The turn reads a file only the node's checkout has: its answer proves it ran there.
      const marker = await plantNodeMarker(lab, alias, p, { note: `bundle reuse round ${round}` });
      const since = await lab.tap(alias).seq();
      const turn = await workerTurn(lab, session.key, marker.message);
      log(`turn ${round}: ${JSON.stringify(turn.text)} in ${turn.durationMs} ms`);
      const o = { alias, marker, reply: turn.text, tapSince: since };
      const proof = await proveTurnOnNode(lab, o);
      turns.push(turnSeen(o, proof));
      observe("turns", [...turns]);
      const bundle = bundles.bundles[0] ? identity(bundles.bundles[0]) : null;
      rounds.push({ session: session.key, dispatchMs: d.ms, placement: p, bundle, checkout: co, turn: { message: marker.message, text: turn.text, ms: turn.durationMs, proof: proof.evidence } });
    }

    const [first, second] = rounds as [(typeof rounds)[0], (typeof rounds)[0]];

    // The node fetched the repo over dumb HTTP (plain object GETs), never over smart HTTP.
    const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
    observe("fetched", fetched);

    const after = await waitForNode(lab, alias, "worker slots back to full", slotsFree, { signal });
    observe("after", { bundleStatus: after.workerBundle?.status ?? null });
    const reclaims: string[] = [];
    for (const r of rounds) {
      reclaims.push((await reclaim(lab, r.session)).state);
      observe("reclaims", [...reclaims]);
    }
    log(`dispatch times: first ${first.dispatchMs} ms, second ${second.dispatchMs} ms; bundle dirs before the scenario: ${bundlesBefore.bundles.length}`);

    writeJson(file("evidence.json"), { workspace: { repo: ws.repo, sha: ws.sha, labUrl: ws.labUrl }, bundlesBefore, rounds, nodeGitRequests: fetched, nodeAfter: summarizeNode(after) });
  },
});
