// Upstream: PR openclaw/openclaw#137088 "fix(gateway): let operators abandon a worker placement
// whose paired device is offline" (merged 2026-09-03). Regression target. Follows PR #126284
// ("recover offline device placements": Continue on Gateway) and precedes #146012 (abandonment
// with a pending workspace result, open).
//
// What it fixes (its description): a session placed on a paired device whose node went away for
// good could not be recovered by any documented operator action. Continue on Gateway (sessions.move
// to the gateway with abandonSource) failed with "device worker node is not connected with the
// supervisor dialect", left the placement failed with the forced-teardown fence recorded, and then
// refused to run again because the placement was no longer active; environments.destroy with force
// and sessions.dispatch failed likewise. The fix carries an operator-abandon stop reason to the
// tunnel, under which an unreachable device node is tolerated after the placement fence.
//
// What the user should have seen (asserted): R-137088-abandon-offline-device: with the session's
// paired device gone (its node host killed, never back) and the placement active with runner
// offline, sessions.move {target: gateway, abandonSource: true} with the exact source answers ok
// with the placement local, and sessions.describe afterwards shows it local (not failed).
// R-137088-destroy-force: environments.destroy {environmentId, force: true} of the environment
// a second session B holds on the same gone device, while B's placement is still active with its
// runner offline (no abandonment first), answers ok: the PR's "admin last resort", which "failed
// the same way" before the fix, on the path the fix changed (a forced teardown that must now
// tolerate the unreachable device node after the placement fence). A destroy after a successful
// abandonment, as a first version of this repro checked, meets an environment whose placement is
// already local: not that path. B's placement afterwards is observed, not asserted (the PR says
// nothing of it).
//
// How this lab gets there: an own lab with one real node host (node-1). Two worker sessions on a
// published workspace, A and B, are dispatched to node-1 (each placement active, each with its own
// worker environment); node-1's container is SIGKILLed and stays down until the lab's teardown.
// Premise P-137088-runner-offline (from sessions.describe on the wire): both placements are still
// active on node-1's device with runner status offline. A is moved (abandonSource); B's
// environment is destroyed with force.
// Aimed off (AIM_OFF=1): node-1 is not killed: the runner stays available, the premise unmet.
// Not covered: sessions.dispatch after the abandonment, and removing the device's pairing
// (device.pair.remove) before the move.
//
// Outcome on 2026.9.6 (2026-12-02, runs 20261202-031917-5fa7 and 20261202-032310-1137, the last
// with an earlier version of the destroy check): not reproduced. The runner read offline at once
// after the kill; sessions.move {gateway, abandonSource} answered ok {placement: local} in ~0.1 s
// and sessions.describe showed local. environments.destroy {force} answered ok, yet its own answer
// and environments.list 10 s later still show the environment `attached` to the (now local)
// session with tunnelStatus `stopped`, as qa-lab's pair-remove expects when remote extinction
// cannot be proven: observed, not asserted. This form: PASS, run 20261202-032755-5945fae481823609
// (both checks hold; the new lab-wide drift record reads known). With the destroy on its own
// session B, placement still active and runner offline (the path the fix changed): PASS, run
// 20261204-031824-65f9ddc78791c549: environments.destroy {force} answered ok; B's placement afterwards
// `failed` ("Worker result abandoned by forced operator teardown"), its environment still
// `attached` with tunnelStatus `stopped` (observed).
// The body drives and observes (ctx.observe); the checks and the premise below judge what it observed.
import { defineScenario, labStep, type CheckDef, type FindingRecord } from "../../lab/scenario.ts";
import type { Placement } from "../../lab/clients/sessions.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { nodeByAlias, waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { refusal, isRefused, type Refused } from "../../lab/kits/session.ts";
import { createWorkerSession, dispatchTo, listEnvironments, placementOf, uniqueName, type Environment } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";
import { pollUntil } from "../../lab/core/wait.ts";

const NAME = "repro-137088";
/** For the gateway to read the killed node's runner offline. */
const OFFLINE_S = 60;
/** From the move's answer to the placement read local and the environment detached. */
const SETTLE_S = 10;

const EXPECTATION =
  "with a session's paired device gone (runner offline, placement active), sessions.move to the gateway with abandonSource answers ok with the placement local, and sessions.describe shows it local afterwards";
const DESTROY_EXPECTATION =
  "with a session's paired device gone (runner offline, placement active, not abandoned first), environments.destroy {force} of the environment that session holds on the device answers ok (before the fix it failed like the move)";

const findings: FindingRecord[] = [];

export interface Observed {
  /** node-1's nodeId (the device the placements are on; refusals name it). */
  nodeId?: string;
  /** Both sessions' placements (sessions.describe) before the move and the destroy: when both read runner offline, or else at the bound. */
  beforeMove?: { a: Placement | null; b: Placement | null };
  /** sessions.move {gateway, abandonSource}: its answer or refusal, and A's placement when it read local, or else at the bound. */
  move?: { answer: Record<string, unknown> | Refused; placementAfter: Placement | null };
  /** environments.destroy {force} of B's environment: its answer or refusal, the environment when no longer attached or else at the bound (null: not listed), B's placement after. */
  destroy?: { answer: Record<string, unknown> | Refused; environmentAfter: Environment | null; placementAfter: Placement | null };
}

/** A placement still active on a device whose runner reads offline. */
const gone = (p: Placement | null | undefined) => p?.state === "active" && p.runner?.status === "offline";
/** A refusal's code and message, the node's id and per-run noise taken out. */
const refusedAs = (r: Refused, nodeId: string) => ({ code: r.code, message: normaliseText(r.message.replaceAll(nodeId, "<nodeId>")) });

const checks: CheckDef<Observed>[] = [
  {
    id: "R-137088-abandon-offline-device",
    expectation: EXPECTATION,
    judge: (h) => {
      if (h.nodeId === undefined || !h.move) return undefined;
      const nodeId = h.nodeId;
      const moved = h.move.answer;
      const refused = isRefused(moved) ? moved : undefined;
      const movedState = refused ? undefined : ((moved as Record<string, unknown>).placement as { state?: string } | undefined)?.state;
      const p = h.move.placementAfter;
      return {
        holds: !refused && movedState === "local" && p?.state === "local",
        observed: normalise({
          within_s: SETTLE_S,
          move: refused ? refusedAs(refused, nodeId) : { placement: movedState ?? null },
          placementAfter: p ? { state: p.state, ...(p.recoveryError ? { recoveryError: normaliseText(p.recoveryError.replaceAll(nodeId, "<nodeId>")) } : {}) } : null,
        }),
      };
    },
  },
  {
    id: "R-137088-destroy-force",
    expectation: DESTROY_EXPECTATION,
    judge: (h) => {
      if (h.nodeId === undefined || !h.destroy) return undefined;
      const destroyRefused = isRefused(h.destroy.answer) ? h.destroy.answer : undefined;
      const e = h.destroy.environmentAfter;
      return {
        holds: !destroyRefused, // what the environment and the placement show afterwards is observed, not asserted: see the header
        observed: normalise({
          within_s: SETTLE_S,
          destroy: destroyRefused ? refusedAs(destroyRefused, h.nodeId) : "ok",
          environmentAfter: e ? { status: e.status, worker: e.worker ? { state: e.worker.state, tunnelStatus: e.worker.tunnelStatus, attached: e.worker.attachedSessionIds.length } : null } : "not listed",
          placementAfter: h.destroy.placementAfter?.state ?? null,
        }),
      };
    },
  },
];

export default defineScenario<Observed>({
  name: NAME,
  upstream: {
    issue: 137088,
    kind: "pr",
    title: "fix(gateway): let operators abandon a worker placement whose paired device is offline",
    status: "fixed",
    related: [126284, 146012],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/137088",
  },
  proves: "openclaw PR #137088: an operator can abandon a placement whose paired device is gone (Continue on Gateway: sessions.move abandonSource)",
  topology: "own",
  spec: { nodes: { count: 1 }, mcp: { servers: [] } },
  needs: [{ method: "sessions.move" }, { method: "sessions.dispatch" }],
  bug: ["R-137088-abandon-offline-device", "R-137088-destroy-force"],
  findings,
  premises: [
    {
      id: "P-137088-runner-offline",
      what: "before the move and the destroy, sessions.describe shows both sessions' placements active on node-1's device with runner status offline",
      aimOff: "node-1 is not killed: its runner stays available",
      judge: (h) => {
        if (h.nodeId === undefined || !h.beforeMove) return undefined;
        const { a, b } = h.beforeMove;
        return {
          met: gone(a) && gone(b) && a?.runner?.deviceId === h.nodeId && b?.runner?.deviceId === h.nodeId,
          observed: [a, b].map((p) => ({ state: p?.state ?? null, runner: p?.runner?.status ?? null, onNode: p?.runner?.deviceId === h.nodeId })),
        };
      },
    },
  ],
  checks,
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, aimOff, signal } = ctx;
    await nodeScene(ctx, { evidence: { bounds: { OFFLINE_S, SETTLE_S } } }, async ({ alias, evidence, tl }) => {
      // The set-up is the lab's own (a refusal or a timeout here, seen under heavy load, is unknown, not a fail).
      await labStep(`${alias} offering its worker slots`, () => waitForWorkerHost(lab, alias, { signal }));
      const ws = await labStep("publishing the workspace", () => publishWorkspace(lab, { repo: uniqueName(NAME) }));
      const key = (await labStep("creating the worker session", () => createWorkerSession(lab, ws))).key;
      const keyB = (await labStep("creating the second worker session", () => createWorkerSession(lab, ws))).key;
      const d = await labStep(`dispatching the session to ${alias}`, () => dispatchTo(lab, key, alias));
      const dB = await labStep(`dispatching the second session to ${alias}`, () => dispatchTo(lab, keyB, alias));
      const nodeId = (await nodeByAlias(lab, alias)).nodeId;
      observe("nodeId", nodeId);
      log(`dispatched ${key} (A) and ${keyB} (B) to ${alias}: placements ${JSON.stringify(d.placement)} and ${JSON.stringify(dB.placement)}`);
      evidence.dispatched = { a: d.placement, b: dB.placement };

      // ---- the device gone for good: its node host killed, not started again before the teardown
      if (!aimOff) {
        const kill = faults.kill(lab, alias, { timeline: tl, inEffectWhen: async () => !(await nodeByAlias(lab, alias)).connected });
        await kill.inject();
        log(`${alias} SIGKILLed (stays down)`);
      }
      const offline = await pollUntil("the placements' runner offline", async () => ({ a: await placementOf(lab, key), b: await placementOf(lab, keyB) }), (v) => gone(v.a) && gone(v.b), {
        deadlineMs: (aimOff ? 5 : OFFLINE_S) * 1000,
        signal,
      });
      const source = offline.last?.a;
      const sourceB = offline.last?.b;
      log(`before the move and the destroy: placement A ${JSON.stringify(source)}; placement B ${JSON.stringify(sourceB)}`);
      evidence.beforeMove = source ?? null;
      evidence.beforeDestroy = sourceB ?? null;
      observe("beforeMove", { a: source ?? null, b: sourceB ?? null });

      // ---- Continue on Gateway: the exact source, abandoned
      const moved = await lab.operator.client
        .request<Record<string, unknown>>(
          "sessions.move",
          {
            key,
            expected: { generation: source?.generation ?? d.placement.generation, environmentId: source?.environmentId ?? d.placement.environmentId, ownerEpoch: source?.activeOwnerEpoch ?? d.placement.activeOwnerEpoch },
            target: { kind: "gateway" },
            abandonSource: true,
          },
          { timeoutMs: 90_000 },
        )
        .catch(refusal);
      log(`sessions.move {gateway, abandonSource} -> ${JSON.stringify(moved)}`);
      evidence.move = moved;
      const envId = source?.environmentId ?? d.placement.environmentId;
      const after = await pollUntil("the placement local", () => placementOf(lab, key), (v) => v?.state === "local", { deadlineMs: SETTLE_S * 1000, signal });
      const envAfterMove = (await listEnvironments(lab)).find((e) => e.id === envId);
      log(`afterwards: placement ${JSON.stringify(after.last)}; environment ${JSON.stringify(envAfterMove ?? null)}`);
      evidence.afterMove = { placement: after.last, environment: envAfterMove ?? null };
      observe("move", { answer: moved, placementAfter: after.last ?? null });

      // ---- the admin's last resort on B, whose placement is still active on the gone device: environments.destroy {force}
      const envB = sourceB?.environmentId ?? dB.placement.environmentId;
      const destroyed = envB
        ? await lab.operator.client.request<Record<string, unknown>>("environments.destroy", { environmentId: envB, force: true }, { timeoutMs: 90_000 }).catch(refusal)
        : refusal(new Error("no environment id"));
      log(`environments.destroy {force} ${envB} (B's, placement active, runner offline) -> ${JSON.stringify(destroyed)}`);
      const envAfter = await pollUntil(
        "the environment no longer attached to the session",
        async () => (await listEnvironments(lab)).find((e) => e.id === envB),
        (e) => !(e?.worker?.attachedSessionIds ?? []).length,
        { deadlineMs: SETTLE_S * 1000, signal },
      );
      const placementB = await placementOf(lab, keyB);
      log(`B afterwards: environment ${JSON.stringify(envAfter.last ?? "not listed")}; placement ${JSON.stringify(placementB ?? null)}`);
      evidence.destroy = { answer: destroyed, environmentAfter: envAfter.last ?? null, placementAfter: placementB ?? null };
      observe("destroy", { answer: destroyed, environmentAfter: envAfter.last ?? null, placementAfter: placementB ?? null });
    });
  },
});
