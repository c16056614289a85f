import { isDeepStrictEqual } from "node:util";
import { defineScenario } from "../lab/scenario.ts";
import type { Placement } from "../lab/clients/sessions.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { installedBundles, workerCheckout, workerProcesses, type WorkerProcess } from "../lab/kits/inside-node.ts";
import { wireSummary, type InventoryUpdate } from "../lab/kits/node-wire.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, turnSeen, type TurnSeen } from "../lab/kits/proof.ts";
import { slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, placementOf, reclaim, startHeldTurn, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
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
// The body drives and observes (ctx.observe); the checks and the premise below judge what it
// observed. Everything after the dispatch inspects the session's placement on the node, so the
// body stops at R-pair-dispatch (no active placement) and at R-pair-placement (not the node's
// available device, no sha256 bundle hash, or sessions.describe does not show it); every other
// check judges what the body observed and the body goes on to the reclaim.

/** The runner inventory updates (node.runnerInventory.update) the node's tap saw during the scenario, each with the gateway's answer (ok absent: none). */
type Inventory = (Pick<InventoryUpdate, "seq" | "errorCode" | "errorDetailsCode" | "workerHost"> & { ok?: boolean })[];
type Runner = NonNullable<Placement["runner"]>;
/** A worker bundle directory on the node (lab/kits/inside-node.ts installedBundles), with the two receipt fields the check reads. */
type BundleDirSeen = { dir: string; hash: string; receipt: { bundleHash: string | null; openclawVersion: string | null } | null; files: string[] };
export type Observed = {
  /** The dispatch of the session to the node (the rest needs an active placement: the body stops there otherwise). */
  dispatch?: DispatchSeen;
  /** What the active placement names (provider, runner, bundle hash) beside the node's nodeId (node.list), and sessions.describe's placement right after (null: none). */
  placement?: { nodeId: string; providerId: string | null; runner: Runner | null; workerBundleHash: string | null; described: { state: string; runner: Runner | null } | null };
  /** node.list's workerBundle.version once it says installed, and the gateway's package version. */
  nodeBundle?: { version: string | null; packageVersion: string };
  /** The bundle directories on the node's disk after the install, the placement's bundle hash, the package version and the bootstrap receipts found outside the bundle directories. */
  bundles?: { placementHash: string | null; packageVersion: string; dirs: BundleDirSeen[]; strayReceipts: string[] };
  /** The worker's checkout on the node against the published repository, and the node's own git requests to the lab's git server. */
  checkout?: { repo: string; sha: string; labUrl: string; head: string; origin: string; published: Record<string, string>; contents: Record<string, string | null>; nodeGitRequests: { method: string; path: string; status: number }[] };
  /** While the turn was held at its first model call (one worker slot in use): node.list's slots and the worker processes on the node. */
  during?: { slots: { total: number; available: number } | null; workers: WorkerProcess[] };
  /** The proof the turn ran on the node (proveTurnOnNode), as turnOnNode judges it. */
  turn?: TurnSeen;
  /** The model calls of the turn (those that carry its marker), in order: round and status. */
  rounds?: { round: number | null; status: string }[];
  /** The worker processes on the node once node.list shows its worker slots full again. */
  after?: { workers: WorkerProcess[] };
  /** The worker path on the node's tap over the scenario: how many bundle dirs the node held before, install commands, bundle downloads, launches, worker sockets. */
  wire?: { bundlesBefore: number; bundleInstalls: number; bundleDownloads: { status: number | null; resBytes: number }[]; launches: number; workerSockets: number };
  inventory?: Inventory;
  /** sessions.reclaim's placement state. */
  reclaim?: { state: string };
};

const SHA256 = /^[a-f0-9]{64}$/;

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
    dispatchedCheck<Observed>("R-pair-dispatch", (h) => h.dispatch),
    {
      id: "R-pair-placement",
      expectation: "the active placement is the node's paired device (provider device, runner the node's nodeId, available), names its worker bundle by a sha256, and sessions.describe shows the same active placement",
      judge: (h) => {
        const pl = h.placement;
        if (!pl) return undefined;
        const onNode = isDeepStrictEqual(pl.runner, { kind: "device", deviceId: pl.nodeId, status: "available" });
        const sameRunner = !!pl.described && isDeepStrictEqual(pl.described.runner, pl.runner);
        const observed = {
          providerId: pl.providerId,
          runner: onNode ? "the node" : pl.runner && { kind: pl.runner.kind, status: pl.runner.status, deviceIsNode: pl.runner.deviceId === pl.nodeId, keys: Object.keys(pl.runner).sort() },
          bundleHash: SHA256.test(pl.workerBundleHash ?? "") ? "sha256" : pl.workerBundleHash === null ? "none" : "malformed",
          described: pl.described && { state: pl.described.state, sameRunner },
        };
        return { holds: observed.providerId === "device" && onNode && observed.bundleHash === "sha256" && pl.described?.state === "active" && sameRunner, observed };
      },
    },
    {
      id: "R-pair-node-bundle",
      expectation: "once node.list reports the node's worker bundle installed, its version is the gateway's own package version",
      judge: (h) => {
        const b = h.nodeBundle;
        if (!b) return undefined;
        const matchesPackage = b.version === b.packageVersion;
        return { holds: matchesPackage, observed: { matchesPackage, ...(matchesPackage ? {} : { version: b.version }) } };
      },
    },
    {
      id: "R-pair-bundle-dir",
      expectation: "the node holds exactly one worker bundle directory, named by the placement's bundle hash, with a bootstrap receipt naming that hash and the package version, and worker.mjs; no bootstrap receipt lies outside node-host/*/bundles/",
      judge: (h) => {
        const b = h.bundles;
        if (!b) return undefined;
        const one = b.dirs.length === 1 ? b.dirs[0] : undefined;
        const parts = one && {
          namedByPlacement: one.hash === b.placementHash,
          receiptBundleHash: (one.receipt?.bundleHash ?? null) === b.placementHash,
          receiptVersion: (one.receipt?.openclawVersion ?? null) === b.packageVersion,
          workerMjs: one.files.includes("worker.mjs"),
        };
        const observed = { dirs: b.dirs.length, ...parts, strayReceipts: b.strayReceipts.length };
        return { holds: !!parts && Object.values(parts).every(Boolean) && b.strayReceipts.length === 0, observed };
      },
    },
    {
      id: "R-pair-checkout",
      expectation: "the node fetched the published repository itself over smart HTTP (git-upload-pack, 200), and the worker's checkout on it sits at the published commit, with the lab's URL as origin and every published file's content",
      judge: (h) => {
        const c = h.checkout;
        if (!c) return undefined;
        const observed = {
          atPublishedCommit: c.head === c.sha,
          originIsLab: c.origin === c.labUrl,
          filesDiffering: Object.entries(c.published)
            .filter(([rel, text]) => c.contents[rel] !== text)
            .map(([rel]) => rel)
            .sort(),
          fetchedOverSmartHttp: c.nodeGitRequests.some((e) => e.path === `/smart/${c.repo}.git/git-upload-pack` && e.status === 200),
        };
        return { holds: observed.atPublishedCommit && observed.originIsLab && observed.filesDiffering.length === 0 && observed.fetchedOverSmartHttp, observed };
      },
    },
    {
      id: "R-pair-worker-during",
      expectation: "during the turn exactly one worker process runs on the node, from the installed bundle's worker.mjs",
      judge: (h) => {
        const d = h.during;
        const b = h.bundles;
        if (!d || !b) return undefined;
        // The installed bundle: R-pair-bundle-dir requires it to be the only directory.
        const fromInstalledBundle = d.workers.length === 1 ? b.dirs.some((x) => d.workers[0]!.args.includes(`${x.dir}/worker.mjs`)) : undefined;
        return { holds: fromInstalledBundle === true, observed: { workers: d.workers.length, ...(fromInstalledBundle !== undefined ? { fromInstalledBundle } : {}) } };
      },
    },
    {
      id: "R-pair-turn",
      expectation: "the worker turn runs on the node: its reply carries the node-only marker the worker read in the node's checkout, and the node's tap saw worker.launch.v1 for the placement",
      judge: (h) => h.turn && turnOnNode(h.turn),
    },
    {
      id: "R-pair-model-rounds",
      expectation: "the turn makes two model calls, both completed: round 0 calls read, round 1 answers with its result",
      judge: (h) =>
        h.rounds && {
          holds: isDeepStrictEqual(h.rounds, [
            { round: 0, status: "completed" },
            { round: 1, status: "completed" },
          ]),
          observed: h.rounds,
        },
    },
    {
      id: "R-pair-worker-gone",
      expectation: "once the node's worker slots are full again, no worker process is left running on it",
      judge: (h) => h.after && { holds: h.after.workers.length === 0, observed: { workers: h.after.workers.length } },
    },
    {
      id: "R-pair-wire",
      expectation:
        "the node's tap shows the worker path: one worker.bundle.install.v1; the bundle downloaded (200, over 1 MB) when the node held none before, and not downloaded again when it did; at least one worker.launch.v1; the worker's own WebSocket",
      judge: (h) => {
        const w = h.wire;
        if (!w) return undefined;
        const firstInstall = w.bundlesBefore === 0;
        const fullDownloads = w.bundleDownloads.filter((d) => d.status === 200 && d.resBytes > 1_000_000).length;
        const observed = { firstInstall, bundleInstalls: w.bundleInstalls, bundleDownloads: w.bundleDownloads.length, fullDownloads, launches: w.launches, workerSockets: w.workerSockets };
        const downloads = firstInstall ? fullDownloads > 0 : w.bundleDownloads.length === 0;
        return { holds: w.bundleInstalls === 1 && downloads && w.launches >= 1 && w.workerSockets >= 1, observed };
      },
    },
    {
      id: "F-runner-inventory-rejected",
      expectation: "the gateway accepts every runner inventory (node.runnerInventory.update) an approved node host publishes",
      judge: (h) => {
        if (!h.inventory) return undefined;
        const rejected = h.inventory.filter((i) => i.ok === false).map((i) => ({ errorCode: i.errorCode, errorDetailsCode: i.errorDetailsCode, workerHostKeys: Object.keys((i.workerHost as object) ?? {}).sort() }));
        return { holds: rejected.length === 0, observed: rejected };
      },
    },
    {
      id: "R-pair-reclaim",
      expectation: "sessions.reclaim after the turn frees the placement (state reclaimed)",
      judge: (h) => h.reclaim && { holds: h.reclaim.state === "reclaimed", observed: { state: h.reclaim.state } },
    },
  ],
  timeoutMs: 240_000,
  async run({ lab, log, file, observe, proceed, signal }) {
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
    observe("dispatch", dispatchSeen(alias, d));
    if (!proceed("R-pair-dispatch")) return;
    const described = await placementOf(lab, session.key);
    observe("placement", {
      nodeId: node.nodeId,
      providerId: p.providerId ?? null,
      runner: p.runner ?? null,
      workerBundleHash: p.workerBundleHash ?? null,
      described: described ? { state: described.state, runner: described.runner ?? null } : null,
    });
    if (!proceed("R-pair-placement")) return;

    // The bundle: node.list reports it installed, and the node holds exactly one bundle dir.
    const installed = await waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", { signal });
    const version = packageVersion(lab.spec.openclawVersion);
    observe("nodeBundle", { version: installed.workerBundle?.version ?? null, packageVersion: version });
    const bundles = await installedBundles(lab, alias);
    log(`bundle dirs on ${alias}: ${bundles.bundles.map((b) => b.dir).join(", ")} (before dispatch: ${bundlesBefore.bundles.length})`);
    observe("bundles", {
      placementHash: p.workerBundleHash ?? null,
      packageVersion: version,
      dirs: bundles.bundles.map((b) => ({ dir: b.dir, hash: b.hash, receipt: b.receipt ? { bundleHash: b.receipt.bundleHash ?? null, openclawVersion: b.receipt.openclawVersion ?? null } : null, files: b.files })),
      strayReceipts: bundles.strayReceipts,
    });

    // The checkout: the node fetched the repo itself and sits at the published commit.
    const co = await workerCheckout(lab, alias, p, ws);
    log(`worker checkout on ${alias}: HEAD ${co.head}, origin ${co.origin}, files ${co.files.join(", ")}`);
    const fetched = await gitRequestsFrom(lab, alias, ws.repo, gitSince);
    observe("checkout", { repo: ws.repo, sha: ws.sha, labUrl: ws.labUrl, head: co.head, origin: co.origin, published: ws.files, contents: co.contents, nodeGitRequests: fetched });

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
      observe("during", { slots: busy.workerSlots ?? null, workers });
    } finally {
      await lab.model.release(held.held.id).catch(() => {});
    }
    const result = await held.turn;
    log(`worker turn: ${JSON.stringify(result.text)} in ${result.durationMs} ms (incl. the hold)`);
    const proved = { alias, marker, reply: result.text, tapSince: turnSince };
    const proof = await proveTurnOnNode(lab, proved);
    observe("turn", turnSeen(proved, proof));
    const toolRound = (await lab.model.requests()).filter((r) => (r.userText ?? "").includes(token));
    observe("rounds", toolRound.map((r) => ({ round: r.round ?? null, status: r.status })));

    const free = await waitForNode(lab, alias, "worker slots back to full", slotsFree, { signal });
    const workersAfter = await workerProcesses(lab, alias);
    observe("after", { workers: workersAfter });
    log(`after the turn: slots ${JSON.stringify(free.workerSlots)}`);
    // Not judged (the node wrote it outside the worker): does the gateway worktree get it back?
    const synced = session.worktree ? await lab.exec(lab.spec.gateway.alias, ["cat", `${session.worktree.path}/${marker.path}`]) : undefined;
    log(`node-only file in the gateway worktree after the turn: ${synced?.exitCode === 0 ? JSON.stringify(synced.stdout.trim()) : "absent"}`);

    // The wire between node-1 and the gateway, as its tap recorded it.
    const wire = await wireSummary(lab, alias, tapSince);
    log(`tap: ${wire.bundleInstalls.length} worker.bundle.install.v1, ${wire.launches.length} worker.launch.v1, bundle GETs ${JSON.stringify(wire.bundleDownloads.map((h) => [h.status, h.resBytes]))}, worker sockets ${wire.workerSockets.length}, inventory updates ${JSON.stringify(wire.inventory.map((i) => i.ok))}`);
    // The gateway sends worker.bundle.install.v1 with every dispatch; the node decides. On a
    // node that already holds the bundle (another shared scenario dispatched there first) it is
    // answered without a download: measured on 2026.9.6, 1 install command and 0 bundle GETs.
    // R-pair-wire judges it: one install command; a download on a fresh node, none on one that held the bundle.
    observe("wire", {
      bundlesBefore: bundlesBefore.bundles.length,
      bundleInstalls: wire.bundleInstalls.length,
      bundleDownloads: wire.bundleDownloads.map((h) => ({ status: h.status, resBytes: h.resBytes })),
      launches: wire.launches.length,
      workerSockets: wire.workerSockets.length,
    });
    observe("inventory", wire.inventory.map(({ seq, ok, errorCode, errorDetailsCode, workerHost }) => ({ seq, ok, errorCode, errorDetailsCode, workerHost })));

    const reclaimed = await reclaim(lab, session.key);
    log(`sessions.reclaim: ${reclaimed.state}`);
    observe("reclaim", { state: reclaimed.state });

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
