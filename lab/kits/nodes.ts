// A node host as the gateway sees it (node.list, device and node pairing) and waits on it:
// connected, a worker host with free slots, bundle installed; and what "came back as the same
// node" means after a cut or a restart. What an operator does to a node: remove its pairing,
// send it a command (node.invoke).
import crypto from "node:crypto";
import * as op from "../clients/operator.ts";
import { refusal, type NodeEntry, type Refused } from "../clients/operator.ts";
import type { Lab } from "../topology/lab.ts";
import { waitFor } from "../core/wait.ts";
import { KEEPALIVE_NOTICE_MS } from "./keepalive.ts";
import { installedBundles, type BundleDir } from "./inside-node.ts";

/** The node.list entry of a node host by its lab alias (= its display name). */
export async function nodeByAlias(lab: Lab, alias: string): Promise<NodeEntry> {
  const nodes = await op.listNodes(lab.operator.client);
  const n = nodes.find((x) => x.displayName === alias);
  if (!n) throw new Error(`node ${alias} is missing from node.list (seen: ${nodes.map((x) => x.displayName).join(", ")})`);
  return n;
}

/**
 * Poll node.list until the node's entry satisfies `ok` (default within 30 s); returns that entry.
 * `progress` shows the wait on the lab's progress output (for waits of tens of seconds).
 * `timeoutMs` is the lab's own wait, paced (lab/core/pace.ts), unless `expectation` makes it the
 * fixed bound that is judged (a caller that turns the time-out into "not seen").
 */
export async function waitForNode(lab: Lab, alias: string, what: string, ok: (n: NodeEntry) => boolean, opts: { timeoutMs?: number; signal?: AbortSignal; progress?: boolean | string; expectation?: boolean } = {}): Promise<NodeEntry> {
  let last: NodeEntry | undefined;
  return waitFor(
    `node ${alias}: ${what}`,
    async () => {
      last = await nodeByAlias(lab, alias);
      return ok(last) ? last : undefined;
    },
    { timeoutMs: opts.timeoutMs ?? 30_000, bound: opts.expectation ? "expectation" : "lab", intervalMs: 200, signal: opts.signal, lastState: () => `last node.list entry: ${JSON.stringify(summarizeNode(last))}`, progress: opts.progress },
  );
}

/**
 * Wait (default 60 s) until a node can take worker turns: connected, approved, hosting
 * sessions, with its worker slots declared and all free. Lab.up returns once nodes are paired
 * and connected; with 2026.9.6 the session-host declaration (sessionHost, workerSlots) follows
 * a few seconds later, from the node's runner inventory.
 */
export async function waitForWorkerHost(lab: Lab, alias: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<NodeEntry> {
  return waitForNode(lab, alias, "connected, approved session host with all worker slots free", (n) => n.connected && n.approvalState === "approved" && n.sessionHost === true && slotsFree(n) && n.workerSlots!.total > 0, {
    timeoutMs: opts.timeoutMs ?? 60_000,
    signal: opts.signal,
    progress: `waiting for ${alias} to offer its worker slots again (connected session host, all slots free)`,
  });
}

/** Wait until every node of the lab can take worker turns again (shared-lab hygiene). */
export async function waitAllWorkerHosts(lab: Lab, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<NodeEntry[]> {
  return Promise.all(lab.nodes.map((m) => waitForWorkerHost(lab, m.alias, { timeoutMs: opts.timeoutMs ?? 90_000, signal: opts.signal })));
}

export const slotsFree = (n: NodeEntry): boolean => !!n.workerSlots && n.workerSlots.available === n.workerSlots.total;

/** The node.list fields the worker path is about. */
export function summarizeNode(n: NodeEntry | undefined): unknown {
  if (!n) return undefined;
  return { name: n.displayName, nodeId: n.nodeId, approvalState: n.approvalState, paired: n.paired, connected: n.connected, sessionHost: n.sessionHost, workerSlots: n.workerSlots, workerBundle: n.workerBundle };
}

/**
 * Poll node.list until the node is `connected` (true/false); returns ms waited and the entry.
 * A node that went silent (partition, paused, network cut) shows as disconnected only when the
 * gateway's keepalive drops it, up to 75 s later (lab/kits/keepalive.ts).
 */
export async function waitConnected(lab: Lab, alias: string, connected: boolean, opts: { timeoutMs: number; signal?: AbortSignal; expectation?: boolean }): Promise<{ ms: number; node: NodeEntry }> {
  const t0 = performance.now();
  const progress = connected
    ? `waiting for ${alias} to connect to the gateway again`
    : `waiting for the gateway to notice ${alias} is gone (a silent node: at its keepalive, up to ${KEEPALIVE_NOTICE_MS / 1000} s)`;
  const node = await waitForNode(lab, alias, connected ? "connected" : "disconnected", (n) => n.connected === connected, { ...opts, progress });
  return { ms: Math.round(performance.now() - t0), node };
}

/** node.list reports the node's worker bundle installed (it lags the dispatch that installed it); default within 30 s (`expectation`: see waitForNode). */
export async function waitBundleInstalled(lab: Lab, alias: string, opts: { timeoutMs?: number; signal?: AbortSignal; expectation?: boolean } = {}): Promise<NodeEntry> {
  return waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", opts);
}

export interface NodeView {
  node: unknown;
  nodeId: string;
  approvalState?: string;
  paired: boolean;
  connected: boolean;
  /** Pairing requests waiting for this node (device.pair.list / node.pair.list). */
  pendingDevice: number;
  pendingNode: number;
  deviceApproved: boolean;
  nodeApproved: boolean;
  bundleStatus?: string;
  bundles: Pick<BundleDir, "dir" | "hash" | "inode" | "receiptMtime">[];
}

/**
 * Identity, pairing and installed bundle of one node host, from the gateway and from inside
 * the node. `bundleStatus` is what node.list says now: with 2026.9.6 it is absent after a
 * reconnect until the gateway's next worker.workspace.retain round trip with the node (at
 * once on some reconnects, only at the next worker turn on others), so judge it with
 * bundleKept() after a turn, not right after a reconnect.
 */
export async function nodeView(lab: Lab, alias: string): Promise<NodeView> {
  const n = await nodeByAlias(lab, alias);
  const [dev, nodes, b] = await Promise.all([op.listDevicePairing(lab.operator.client), op.listNodePairing(lab.operator.client), installedBundles(lab, alias)]);
  return {
    node: summarizeNode(n),
    nodeId: n.nodeId,
    approvalState: n.approvalState,
    paired: n.paired,
    connected: n.connected,
    pendingDevice: dev.pending.filter((p) => p.deviceId === n.nodeId || p.displayName === alias).length,
    pendingNode: nodes.pending.filter((p) => p.nodeId === n.nodeId || p.displayName === alias).length,
    deviceApproved: dev.paired.some((p) => p.deviceId === n.nodeId),
    nodeApproved: nodes.paired.some((p) => p.nodeId === n.nodeId),
    bundleStatus: n.workerBundle?.status,
    bundles: b.bundles.map(({ dir, hash, inode, receiptMtime }) => ({ dir, hash, inode, receiptMtime })),
  };
}

/**
 * What "came back as the same node" means, right after a reconnect: same nodeId, approved and
 * paired at both layers, no pairing request, connected, and the installed bundle directory on
 * the node untouched (same path, inode and receipt mtime: not reinstalled).
 */
export function sameNode(before: NodeView, after: NodeView): { holds: boolean; observed: Record<string, unknown> } {
  const observed = {
    sameNodeId: after.nodeId === before.nodeId,
    approvalState: after.approvalState,
    paired: after.paired,
    connected: after.connected,
    pendingDevicePairing: after.pendingDevice,
    pendingNodePairing: after.pendingNode,
    deviceApproved: after.deviceApproved,
    nodeApproved: after.nodeApproved,
    sameBundleDir: JSON.stringify(after.bundles) === JSON.stringify(before.bundles),
  };
  const holds =
    observed.sameNodeId &&
    observed.approvalState === "approved" &&
    observed.paired &&
    observed.connected &&
    observed.pendingDevicePairing === 0 &&
    observed.pendingNodePairing === 0 &&
    observed.deviceApproved &&
    observed.nodeApproved &&
    observed.sameBundleDir;
  return { holds, observed };
}

/** What node.list and the node's disk say of its worker bundle now, after a turn (JSON, for a history). */
export interface BundleSeen {
  status: string | null;
  bundles: NodeView["bundles"];
}

/**
 * The node's worker bundle now: node.list's status (waited for up to its grace) and the bundle
 * directories on its disk. keptBundle judges it against the view before.
 */
export async function bundleSeen(lab: Lab, alias: string): Promise<BundleSeen> {
  // expectation: a time-out is "not installed" in the caller's check: the 30 s grace is fixed, not paced
  const n = await waitBundleInstalled(lab, alias, { expectation: true }).catch(() => nodeByAlias(lab, alias));
  const now = (await installedBundles(lab, alias)).bundles.map(({ dir, hash, inode, receiptMtime }) => ({ dir, hash, inode, receiptMtime }));
  return { status: n.workerBundle?.status ?? null, bundles: now };
}

/** Kept its bundle (a pure check): node.list says installed and it is the same bundle directory as before (not reinstalled). */
export function keptBundle(before: Pick<NodeView, "bundles">, now: BundleSeen): { holds: boolean; observed: { status: string | null; sameBundleDir: boolean } } {
  const observed = { status: now.status, sameBundleDir: JSON.stringify(now.bundles) === JSON.stringify(before.bundles) };
  return { holds: observed.status === "installed" && observed.sameBundleDir, observed };
}

/**
 * After a turn: node.list says the worker bundle is installed (waiting up to its grace) and it is
 * the same bundle directory as before (not reinstalled): bundleSeen judged by keptBundle.
 */
export async function bundleKept(lab: Lab, alias: string, before: NodeView): Promise<{ holds: boolean; observed: { status: string | null; sameBundleDir: boolean } }> {
  return keptBundle(before, await bundleSeen(lab, alias));
}

/** node.pair.remove {nodeId} (answer or refusal as data). */
export async function removeNodePairing(lab: Lab, nodeId: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("node.pair.remove", { nodeId }).catch(refusal);
}

/**
 * An operator's node.invoke of a node's command, e.g. one of its private worker controls
 * (worker.cancel.v1 with a stale ownerEpoch; the only way into a node's command stream the
 * gateway offers from outside): the gateway's answer, or its refusal, as data.
 */
export async function invokeNodeCommand(lab: Lab, nodeId: string, command: string, params: unknown): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("node.invoke", { nodeId, command, params, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 15_000 }).catch(refusal);
}
