import { GatewayError } from "../lab/clients/gateway.ts";
import type { Frame, HttpExchange } from "../lab/clients/tap.ts";
import { faults } from "../lab/faults/index.ts";
import type { Placement } from "../lab/clients/sessions.ts";
import { defineScenario } from "../lab/scenario.ts";
import { STATE_DIR, installedBundles, type BundleDir } from "../lab/kits/inside-node.ts";
import { nodeByAlias, summarizeNode, waitBundleInstalled, waitConnected, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { nodeScene } from "../lab/kits/scene.ts";
import { provenWorkerTurn, turnOnNode, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchedCheck, dispatchSeen, dispatchTo, placementOf, uniqueName, type DispatchSeen } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";
import { packageVersion } from "../lab/definitions/build.ts";

// A fresh node host (no worker bundle yet) is SIGKILLed while it installs the worker bundle
// for its first dispatch: the kill is triggered the moment the node's bundle download
// (GET /__openclaw__/worker-bundle/v1/bundles/<sha256>, ~28 MB) reaches its wire tap. The
// dispatch must fail rather than hang; after the node is started again on its state volume
// the next dispatch must install the bundle cleanly (exactly one complete bundle directory,
// nothing half-written beside it) and a worker turn must complete.
// Premises (proven, else unknown): P-install-loss-fresh: the node had no worker bundle installed
// before the first dispatch (else there is no install to cut short); P-install-loss-kill-in-install:
// the kill landed during the install (the gateway's worker.bundle.install.v1 reached the node's tap
// and the node never answered it).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): the 30 s node.list
// is given to report the reinstalled bundle (a time-out there reads "not installed").
const BUNDLE_GET = "/__openclaw__/worker-bundle/*";

// The body drives and observes (ctx.observe); the checks below judge what it observed.
export type Observed = {
  /** The node's installed bundle directories before the first dispatch (none: it is fresh). */
  fresh?: { bundleDirs: string[] };
  /** Where the install was when the node died: the gateway's worker.bundle.install.v1 on the node's tap, and whether the node answered it. */
  killAt?: { installInvokeSeen: boolean; installAnswered: boolean };
  /** The dispatch the kill cut short (its answer, or its refusal, with how long it took) and the session's placement afterwards (null: none). */
  firstDispatch?: { result: { accepted: string; ms: number } | { code: string; message: string; ms: number }; placement: Placement | null };
  /** After the restart and the next dispatch: the node's bundle directories, the entries of its bundles folders, the placement's bundle hash, the version the receipt must name, node.list's bundle status. */
  reinstall?: { bundles: { bundles: BundleDir[]; strayReceipts: string[] }; entries: string[]; placementHash?: string; openclawVersion: string; status: string | null };
  /** The dispatch after the restart (the reinstall and the turn need an active placement: the body stops there otherwise). */
  redispatch?: DispatchSeen;
  /** The worker turn on the reinstalled node: what the proof that it ran there read. */
  turn?: TurnSeen;
};

export default defineScenario<Observed>({
  name: "loss-during-install",
  proves: "a node killed during its worker bundle install fails that dispatch (no hang); started again, the next dispatch installs exactly one complete bundle and the turn completes on the node",
  topology: "own",
  spec: { nodes: { count: 1, devicePairing: "subnet" }, mcp: { servers: [] } },
  timeoutMs: 300_000,
  premises: [
    {
      id: "P-install-loss-fresh",
      what: "the node had no worker bundle installed before the first dispatch",
      judge: (h) => h.fresh && { met: h.fresh.bundleDirs.length === 0, observed: { bundleDirs: h.fresh.bundleDirs.length } },
    },
    {
      id: "P-install-loss-kill-in-install",
      what: "the kill landed during the bundle install: the gateway's worker.bundle.install.v1 reached the node's tap and the node never answered it",
      judge: (h) => h.killAt && { met: h.killAt.installInvokeSeen && !h.killAt.installAnswered, observed: h.killAt },
    },
  ],
  checks: [
    {
      id: "R-install-loss-dispatch-fails",
      expectation: "a dispatch whose node dies during the bundle install fails with an error (no hang) and its placement ends in a terminal state with a reason",
      judge: (h) => {
        if (!h.firstDispatch) return undefined;
        const { result: r, placement: p } = h.firstDispatch;
        return {
          holds: "code" in r && r.ms < 60_000 && !!p && ["failed", "reclaimed"].includes(p.state) && !!p.terminalReason,
          observed: { dispatch: "code" in r ? { code: r.code } : r, placement: p?.state ?? null, terminalReason: !!p?.terminalReason },
        };
      },
    },
    {
      id: "R-install-loss-clean-reinstall",
      expectation: "after the restart the next dispatch installs the bundle cleanly: exactly one complete bundle directory (receipt, worker.mjs, the placement's hash), nothing half-written beside it, node.list says installed",
      judge: (h) => {
        if (!h.reinstall) return undefined;
        const { bundles, entries, placementHash, openclawVersion, status } = h.reinstall;
        const b = bundles.bundles[0];
        const clean =
          bundles.bundles.length === 1 &&
          entries.length === 1 &&
          b?.hash === placementHash &&
          b?.receipt?.bundleHash === b?.hash &&
          b?.receipt?.openclawVersion === openclawVersion &&
          !!b?.files.includes("worker.mjs") &&
          bundles.strayReceipts.length === 0 &&
          status === "installed";
        return {
          holds: clean,
          observed: { bundleDirs: bundles.bundles.length, bundlesEntries: entries, hashMatches: b?.hash === placementHash, receipt: !!b?.receipt, workerMjs: !!b?.files.includes("worker.mjs"), strayReceipts: bundles.strayReceipts, status },
        };
      },
    },
    dispatchedCheck<Observed>("R-install-loss-redispatch", (h) => h.redispatch),
    { id: "R-install-loss-turn", expectation: "a worker turn on the reinstalled node completes, on the node (it reads a node-only file; worker.launch.v1 on the node's tap)", judge: (h) => h.turn && turnOnNode(h.turn) },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    await nodeScene(ctx, {}, async ({ alias, tap, evidence, tl }) => {
      const tree = async () => (await lab.exec(alias, ["sh", "-c", `cd ${STATE_DIR}/node-host 2>/dev/null && find . -maxdepth 4 -not -path './*/workspaces/*/*' | sort; true`])).stdout.split("\n").filter(Boolean);
      const bundleEntries = async () => (await lab.exec(alias, ["sh", "-c", `for d in ${STATE_DIR}/node-host/*/bundles; do [ -d "$d" ] && ls -1A "$d"; done; true`])).stdout.split("\n").filter(Boolean);
      const host = await waitForWorkerHost(lab, alias, { signal });
      const before = await installedBundles(lab, alias);
      observe("fresh", { bundleDirs: before.bundles.map((b) => b.dir) });
      if (!proceed("P-install-loss-fresh")) return;
      log(`${alias} fresh: ${JSON.stringify(summarizeNode(host))}`);
      const ws = await publishWorkspace(lab, { repo: uniqueName("install-loss") });
      const s = await createWorkerSession(lab, ws);
      const since = await tap.seq();

      // A do-nothing rule on the bundle GET marks the moment the download starts; the kill
      // is triggered by its firing.
      const marker = faults.wire.delay({ lab, node: alias }, 0, { kind: "http", method: "GET", path: BUNDLE_GET }, { once: true, timeline: tl, label: `${alias} bundle GET` });
      await marker.inject();
      const kill = faults.kill(lab, alias, { timeline: tl, inEffectWhen: async () => !(await nodeByAlias(lab, alias)).connected });
      const armed = await faults.injectWhen(
        faults.when.poll("the node's bundle GET reached the tap", async () => (await tap.rule(marker.ruleId))?.firstFired ?? undefined, { intervalMs: 10 }),
        kill,
        { timeoutMs: 90_000 },
      );
      const t0 = performance.now();
      const first = dispatchTo(lab, s.key, alias).then(
        (r) => ({ accepted: r.placement.state, ms: r.ms }),
        (err: unknown) => (err instanceof GatewayError ? { code: err.code, message: err.gatewayMessage, ms: Math.round(performance.now() - t0) } : Promise.reject(err)),
      );
      // Handled at once (awaited below, after the trigger): a rejection while the trigger is awaited must not float.
      first.catch(() => {});
      const trig = await armed.injected;
      await marker.fired(5_000);
      log(`bundle GET at the tap; ${alias} SIGKILLed ${Math.round(trig.reactionMs)} ms later`);
      const firstResult = await first;
      const placementAfter = await placementOf(lab, s.key);
      log(`the dispatch: ${JSON.stringify(firstResult)}; placement: ${JSON.stringify(placementAfter ? { state: placementAfter.state, terminalReason: placementAfter.terminalReason } : null)}`);
      await marker.heal();

      // Where the install was when the node died.
      const events = await tap.events({ since });
      const install = events.find((e): e is Frame => e.kind === "frame" && (e as Frame).command === "worker.bundle.install.v1" && (e as Frame).dir === "gw->node");
      const answered = !!install && events.some((e) => e.kind === "frame" && (e as Frame).dir === "node->gw" && (e as Frame).method === "node.invoke.result" && (e as Frame).invokeId === install.invokeId);
      const download = events.find((e): e is HttpExchange => e.kind === "http" && (e as HttpExchange).path.startsWith(BUNDLE_GET.slice(0, -1)));
      const atKill = { installInvokeSeen: !!install, installAnswered: answered, download: download ? { status: download.status, resBytes: download.resBytes, incomplete: download.incomplete ?? false, durationMs: download.durationMs } : null };
      log(`at the kill: ${JSON.stringify(atKill)}`);
      observe("killAt", { installInvokeSeen: atKill.installInvokeSeen, installAnswered: atKill.installAnswered });
      if (!proceed("P-install-loss-kill-in-install")) return;

      observe("firstDispatch", { result: firstResult, placement: placementAfter ?? null });

      const tStart = Date.now();
      const start = await kill.heal();
      const up = await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal });
      const hostBack = await waitForWorkerHost(lab, alias, { timeoutMs: 60_000, signal });
      const treeAfterRestart = await tree();
      log(`${alias} back ${Date.now() - tStart} ms after the start call: ${JSON.stringify(summarizeNode(hostBack))}; node-host tree: ${JSON.stringify(treeAfterRestart)}`);

      const again = await dispatchTo(lab, s.key, alias);
      log(`dispatch again: ${again.placement.state} in ${again.ms} ms, bundle ${again.placement.workerBundleHash}`);
      observe("redispatch", dispatchSeen(alias, again));
      if (!proceed("R-install-loss-redispatch")) return;
      const bundles = await installedBundles(lab, alias);
      const entries = await bundleEntries();
      // node.list reports the bundle a moment after the dispatch that installed it.
      // expectation: a time-out is "not installed" in R-install-loss-clean-reinstall: the 30 s grace is fixed, not paced
      const node = await waitBundleInstalled(lab, alias, { expectation: true }).catch(() => nodeByAlias(lab, alias));
      observe("reinstall", { bundles, entries, placementHash: again.placement.workerBundleHash, openclawVersion: packageVersion(lab.spec.openclawVersion), status: node.workerBundle?.status ?? null });
      const turn = await provenWorkerTurn(lab, s.key, alias, { note: "after the install loss" });
      log(`turn: ${JSON.stringify({ text: turn.text, error: turn.error, ms: turn.ms, proof: turn.observed })}`);
      observe("turn", turn.seen);
      Object.assign(evidence, {
        session: s.key,
        trigger: trig,
        firstDispatch: firstResult,
        placementAfterKill: placementAfter ?? null,
        atKill,
        start,
        connectedAfterStart: up.node,
        treeAfterRestart,
        dispatchAgain: again,
        bundles,
        bundlesEntries: entries,
        treeAfterReinstall: await tree(),
        turn,
        tap: events.filter((e) => e.kind !== "frame" || !!(e as Frame).command || (e as Frame).method === "node.invoke.result"),
      });
    });
  },
});
