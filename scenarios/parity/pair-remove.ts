// Parity with OpenClaw's qa-lab: runtime/paired-node-worker-lifecycle-wire.e2e.test.ts, "keeps
// local control usable across bundle loss, disconnect, capacity, and role removal", its last step
// ("Revocation fences placement before responding but cannot prove remote extinction"). A session
// is dispatched to the paired in-process node host (placement active, one worker environment
// attached to it); then node.pair.remove {nodeId}. qa-lab asserts:
//   - node.pair.remove answers with the nodeId;
//   - right after it, environments.list shows that environment still `attached` to the same
//     session ids, with tunnelStatus `stopped` (and, in its state database, a teardown that
//     failed: "Worker provider no longer recognizes the lease");
//   - sessions.describe: the placement is `failed` with a recoveryError containing "not connected";
//   - the node can no longer publish its runner inventory, and node.list stops showing it
//     connected (within 30 s);
//   - a gateway-local session's turn still completes.
// What this scenario asserts, across containers (own lab: after the removal node-1 is no longer
// paired; one node host, device pairing by subnet, no MCP), each as its own check against the
// same public RPCs. Before the removal, the steps the rest needs (the body stops at the first that
// falls short): P-pair-remove-baseline-turn (a gateway session's turn answers), P-pair-remove-dispatch
// (the session placed on the node, with its environment and owner epoch), P-pair-remove-attached
// (environments.list shows exactly one session attached to that environment). After it:
// P-pair-remove-answer, P-pair-remove-environment (environments.list read at
// once after the answer), P-pair-remove-placement-failed (sessions.describe at once),
// P-pair-remove-node-disconnected (node.list polled NODE_GONE_S), P-pair-remove-local-turn (a
// gateway session's turn answers with the scripted reply). The state-database row and the node's
// own inventory call are inside the containers' processes and not asserted; what the node's tap
// saw after the removal (worker commands, its control connection closing, inventory updates and
// their answers) is kept as evidence.
// On 2026.9.6 every check holds as qa-lab asserts (runs 20261130-152637-acd8, 20261130-152707-68be):
// recoveryError "Worker reclaim teardown failed: tunnel stop: device worker node is not connected
// with the supervisor dialect; environment destroy: Worker environment cleanup is still pending:
// Worker provider no longer recognizes the lease"; the node is gone from node.list at once.
// environments.list answers carry worker.profileId, which the published schema (2026.9.1) does
// not allow: the lab-wide record F-protocol-drift res environments.list environments[].worker.profileId.
import { normalise, normaliseText } from "../../lab/findings/normalise.ts";
import { listNodePairing, type Refused } from "../../lab/clients/operator.ts";
import type { Placement } from "../../lab/clients/sessions.ts";
import { defineScenario } from "../../lab/scenario.ts";
import { controlEvents, wireSummary, workerCommands } from "../../lab/kits/node-wire.ts";
import { nodeByAlias, removeNodePairing, summarizeNode, waitForWorkerHost } from "../../lab/kits/nodes.ts";
import { scene } from "../../lab/kits/scene.ts";
import { isRefused, openSession } from "../../lab/kits/session.ts";
import { expectedReply, listEnvironments, uniqueName, type Environment } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** How long node.list is watched for the node to stop showing as connected (qa-lab: 30 s). */
const NODE_GONE_S = 30;

/** node.list's view of the node (not listed: not connected, not paired). */
interface NodeSeen {
  listed: boolean;
  connected: boolean;
  paired: boolean;
  approvalState: string | null;
}

/** node.list no longer shows the node connected. */
const nodeGone = (v: NodeSeen) => v.connected !== true;

/** What the body observed (ctx.observe), for the checks below. */
export interface Observed {
  /** The gateway-local baseline turn before the removal: how it ended, whether it answered with the scripted reply to its message, and its error. */
  baselineTurn?: { status: string; expectedReply: boolean; error?: unknown };
  /** The dispatch of the session to the node: the placement's state, and whether it named its environment and carried an owner epoch. */
  dispatch?: { alias: string; state: string; environment: boolean; ownerEpoch: boolean };
  /** environments.list before the removal: whether the placement's environment was listed, and how many sessions it listed attached (null: none said). */
  environmentBefore?: { listed: boolean; attachedSessions: number | null };
  /** node.pair.remove: the node it was asked to remove, and the answer (or the refusal). */
  removal?: { nodeId: string; answer: Record<string, unknown> | Refused };
  /** environments.list right after the removal: the session's worker environment (null: not listed), and the session ids attached to it before. */
  environment?: { attachedBefore: string[]; after: Environment | null };
  /** sessions.describe right after the removal: the placement (null: none). */
  placement?: Placement | null;
  /** node.list's view of the node once it was no longer connected, or at the NODE_GONE_S deadline. */
  nodeAfter?: NodeSeen;
  /** The gateway-local turn after the removal: its message, and how it ended. */
  localTurn?: { message: string; status: string; text?: string; error?: unknown };
}

export default defineScenario<Observed>({
  name: "pair-remove",
  proves: "qa-lab paired-node-worker-lifecycle node.pair.remove: the node's placement turns failed (not connected), its environment stays attached with the tunnel stopped, the node is no longer connected, and gateway-local turns keep working",
  topology: "own",
  spec: { nodes: { count: 1, devicePairing: "subnet" }, mcp: { servers: [] } },
  needs: [{ method: "sessions.dispatch" }, { method: "node.pair.remove" }, { method: "environments.list" }],
  timeoutMs: 240_000,
  checks: [
    {
      id: "P-pair-remove-baseline-turn",
      expectation: "a gateway-local session's turn answers with the scripted reply (before any removal)",
      judge: (h) => h.baselineTurn && { holds: h.baselineTurn.status === "ok" && h.baselineTurn.expectedReply, observed: normalise({ status: h.baselineTurn.status, expectedReply: h.baselineTurn.expectedReply, error: h.baselineTurn.error ?? null }) },
    },
    {
      id: "P-pair-remove-dispatch",
      expectation: "a dispatch to the paired node host gives an active placement with its worker environment and owner epoch",
      judge: (h) => h.dispatch && { holds: h.dispatch.state === "active" && h.dispatch.environment && h.dispatch.ownerEpoch, observed: h.dispatch },
    },
    {
      id: "P-pair-remove-attached",
      expectation: "environments.list shows the placed session's worker environment with exactly that one session attached",
      judge: (h) => h.environmentBefore && { holds: h.environmentBefore.attachedSessions === 1, observed: h.environmentBefore },
    },
    {
      id: "P-pair-remove-answer",
      expectation: "node.pair.remove answers with the removed nodeId",
      judge: (h) => {
        if (!h.removal) return undefined;
        const { nodeId, answer } = h.removal;
        return {
          holds: !isRefused(answer) && answer.nodeId === nodeId,
          observed: normalise(isRefused(answer) ? { refused: `${answer.code}: ${answer.message}` } : { nodeId: answer.nodeId === nodeId ? "<the node>" : (answer.nodeId ?? null) }),
        };
      },
    },
    {
      id: "P-pair-remove-environment",
      expectation: "right after the removal the session's worker environment is still listed attached to the same session, with its tunnel stopped",
      judge: (h) => {
        if (!h.environment) return undefined;
        const { attachedBefore, after } = h.environment;
        const w = after?.worker;
        const sameSessions = JSON.stringify(w?.attachedSessionIds) === JSON.stringify(attachedBefore);
        return {
          holds: w?.state === "attached" && sameSessions && w.tunnelStatus === "stopped",
          observed: normalise(after ? { state: w?.state ?? null, sameSessions, tunnelStatus: w?.tunnelStatus ?? null, error: w?.error ?? null } : { listed: false }),
        };
      },
    },
    {
      id: "P-pair-remove-placement-failed",
      expectation: "right after the removal the placement is failed, its recoveryError saying the node is not connected",
      judge: (h) => {
        if (h.placement === undefined) return undefined;
        const p = h.placement;
        return {
          holds: p?.state === "failed" && /not connected/.test(p.recoveryError ?? ""),
          observed: normalise({ state: p?.state ?? null, recoveryError: p?.recoveryError ? normaliseText(p.recoveryError) : null }),
        };
      },
    },
    {
      id: "P-pair-remove-node-disconnected",
      expectation: `within ${NODE_GONE_S} s of the removal node.list no longer shows the node connected`,
      judge: (h) => h.nodeAfter && { holds: nodeGone(h.nodeAfter), observed: { within_s: NODE_GONE_S, ...h.nodeAfter } },
    },
    {
      id: "P-pair-remove-local-turn",
      expectation: "a gateway-local session's turn still answers after a node's pairing is removed",
      judge: (h) => h.localTurn && { holds: h.localTurn.status === "ok" && h.localTurn.text === expectedReply(h.localTurn.message), observed: normalise({ status: h.localTurn.status, error: h.localTurn.error ?? null }) },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const alias = lab.nodes[0]!.alias;
    const host = await waitForWorkerHost(lab, alias, { signal });
    const nodeId = host.nodeId;
    await scene(ctx, { faults: false, evidence: { node: summarizeNode(host), bounds: { NODE_GONE_S } } }, async ({ evidence }) => {
      // ---- a gateway session that must keep working, and a session placed on the node
      const local = await openSession(lab, { label: "pair-remove-local" });
      const baseMsg = `${uniqueName("tok")} local baseline`;
      const base = await local.turn(baseMsg, 60_000);
      observe("baselineTurn", { status: base.status, expectedReply: base.text === expectedReply(baseMsg), ...(base.error !== undefined ? { error: base.error } : {}) });
      if (!proceed("P-pair-remove-baseline-turn")) return;

      const ws = await publishWorkspace(lab, { repo: uniqueName("pair-remove") });
      const s = await openSession(lab, { workspace: ws, label: "pair-remove-node" });
      const d = await s.dispatch(alias);
      const envId = d.placement.environmentId;
      observe("dispatch", { alias, state: d.placement.state, environment: !!envId, ownerEpoch: typeof d.placement.activeOwnerEpoch === "number" });
      if (!proceed("P-pair-remove-dispatch")) return;
      const envBefore = (await listEnvironments(lab)).find((e) => e.id === envId);
      const attached = envBefore?.worker?.attachedSessionIds;
      observe("environmentBefore", { listed: !!envBefore, attachedSessions: attached?.length ?? null });
      if (!proceed("P-pair-remove-attached")) return;
      log(`session placed on ${alias} (${d.ms} ms): environment ${envId} ${JSON.stringify(envBefore?.worker)}`);

      // ---- remove the node's pairing
      const since = await lab.tap(alias).seq();
      const removedAt = Date.now();
      const removed = await removeNodePairing(lab, nodeId);
      const envAfter = (await listEnvironments(lab)).find((e) => e.id === envId);
      const placement = await s.placement();
      log(`node.pair.remove ${nodeId}: ${JSON.stringify(removed)}; environment: ${JSON.stringify(envAfter?.worker ?? envAfter ?? null)}; placement: ${JSON.stringify({ state: placement?.state, recoveryError: placement?.recoveryError })}`);
      observe("removal", { nodeId, answer: removed });
      observe("environment", { attachedBefore: attached ?? [], after: envAfter ?? null });
      observe("placement", placement ?? null);

      // ---- the node stops showing as connected
      const gone = await pollUntil(
        `${alias} no longer connected in node.list`,
        async () => {
          const n = await nodeByAlias(lab, alias).catch(() => undefined);
          return n ? { listed: true, connected: n.connected, paired: n.paired, approvalState: n.approvalState ?? null } : { listed: false, connected: false, paired: false, approvalState: null };
        },
        nodeGone,
        { deadlineMs: NODE_GONE_S * 1000, from: removedAt, intervalMs: 250, signal },
      );
      log(`node.list after the removal: ${JSON.stringify(gone.last)} (${gone.held ? `after ${gone.ms} ms` : `still connected after ${NODE_GONE_S} s`})`);
      // The view the poll left: the first no longer connected, or the one at its deadline.
      observe("nodeAfter", gone.last);

      // ---- local turns keep working
      const afterMsg = `${uniqueName("tok")} local after removal`;
      const after = await local.turn(afterMsg, 60_000);
      log(`gateway-local turn after the removal: ${after.status} ${JSON.stringify(after.text ?? after.error)} in ${after.ms} ms`);
      observe("localTurn", { message: afterMsg, status: after.status, text: after.text, error: after.error });

      const wire = await wireSummary(lab, alias, since);
      Object.assign(evidence, {
        session: s.key,
        placementBefore: d.placement,
        environmentBefore: envBefore,
        removed,
        environmentAfter: envAfter ?? null,
        placementAfter: placement ?? null,
        nodeAfter: gone,
        nodePairing: await listNodePairing(lab.operator.client).catch((e: Error) => e.message),
        environmentsLater: await listEnvironments(lab).catch((e: Error) => e.message),
        placementLater: (await s.placement()) ?? null,
        tapAfterRemoval: { workerCommands: (await workerCommands(lab, alias, since)).map(({ seq, command }) => ({ seq, command })), inventory: wire.inventory, control: await controlEvents(lab.tap(alias), since) },
        localTurns: { base, after },
      });
    });
  },
});
