// Helpers for the node-loss and reconnect fault scenarios: a per-scenario fault timeline,
// reconnecting the lab's operator after a gateway restart, timing a fault against the
// gateway's keepalive, and what a node looks like to the gateway (identity, pairing, bundle,
// reconnects as the wire tap saw them).
//
// Keepalive of openclaw@2026.9.6 (dist/websocket-keepalive-*.mjs, measured through the tap):
// the gateway pings each node connection every 25 s and drops it at the first 25 s tick
// after a ping has gone unanswered for 25 s. A cut placed just before a ping is noticed
// 25-50 s later; one placed just after a ping 50-75 s later. The node itself notices only
// when no tick arrives for 60 s (tick every 30 s, timeout 2x).
import fs from "node:fs";
import path from "node:path";
import { loadOrCreateDeviceIdentity } from "./clients/device-identity.ts";
import * as op from "./clients/operator.ts";
import { WS_OPCODE, type Frame, type TapControl, type TapRecord } from "./clients/tap.ts";
import { faults, FaultTimeline, timelineOf, type Fault, type TimelineEntry } from "./faults/index.ts";
import { waitGatewayReady } from "./mcp-flows.ts";
import { STATE } from "./paths.ts";
import type { ScenarioContext } from "./scenario.ts";
import type { Lab } from "./topology/lab.ts";
import { installedBundles, nodeByAlias, summarizeNode, waitForNode, waitForWorkerHost, type BundleDir } from "./workers.ts";
import type { NodeEntry } from "./clients/operator.ts";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The gateway's keepalive ping interval per connection (see the header). */
export const KEEPALIVE_MS = 25_000;

// ------------------------------------------------------------------ fault timeline

/**
 * A timeline that writes this scenario's fault steps to `<scenario>/faults.jsonl` as they
 * happen (a run killed mid-fault still leaves them) and also adds them to the run's timeline
 * (the run folder's faults.jsonl, named in run.json).
 */
export class ScenarioTimeline extends FaultTimeline {
  readonly #run: FaultTimeline;
  constructor(ctx: ScenarioContext) {
    const file = ctx.file("faults.jsonl");
    fs.writeFileSync(file, "");
    super(file);
    this.#run = timelineOf(ctx.lab.run);
  }
  override add(e: TimelineEntry): TimelineEntry {
    this.#run.add(e);
    return super.add(e);
  }
}

/** Per fault: how long inject -> in effect and heal -> healed took, and when its trigger fired. */
export interface FaultSummary {
  id: string;
  fault: string;
  target: string;
  injectMs?: number;
  inEffectMs?: number;
  healMs?: number;
  healedMs?: number;
  /** Trigger armed -> met (injectWhen), or inject -> rule fired (wire faults). */
  triggerMs?: number;
  firedMs?: number;
  /** in effect -> heal started: how long the fault was in force. */
  heldMs?: number;
  failed?: string[];
}

export function summarizeFaults(entries: readonly TimelineEntry[]): FaultSummary[] {
  const byId = new Map<string, FaultSummary>();
  const inEffectEnd = new Map<string, number>();
  for (const e of entries) {
    const s = byId.get(e.id) ?? { id: e.id, fault: e.fault, target: e.target };
    byId.set(e.id, s);
    if (e.step === "inject") s.injectMs = e.ms;
    if (e.step === "in-effect") {
      s.inEffectMs = e.ms;
      inEffectEnd.set(e.id, e.t + e.ms);
    }
    if (e.step === "heal") {
      s.healMs = e.ms;
      const end = inEffectEnd.get(e.id);
      if (end !== undefined) s.heldMs = Math.round(e.t - end);
    }
    if (e.step === "healed") s.healedMs = e.ms;
    if (e.step === "trigger") s.triggerMs = e.ms;
    if (e.step === "fired") s.firedMs = e.ms;
    if (e.step === "failed") (s.failed ??= []).push(`${String(e.detail?.during)}: ${e.error}`);
  }
  return [...byId.values()];
}

/**
 * Run a scenario body with its own fault timeline: every fault made with `tl` records there;
 * at the end (pass or throw) whatever fault of this lab is still active is healed, and the
 * timeline summary is logged. Returns the body's result.
 */
export async function withFaults<T>(ctx: ScenarioContext, body: (tl: ScenarioTimeline) => Promise<T>): Promise<T> {
  const tl = new ScenarioTimeline(ctx);
  const mark = ctx.lab.teardown.mark();
  try {
    return await body(tl);
  } finally {
    const left = await ctx.lab.teardown.drain(mark);
    if (left.done.length || left.failed.length) ctx.log(`undone at the end of the scenario: ${JSON.stringify(left)}`);
    for (const s of summarizeFaults(tl.entries)) ctx.log(`fault ${s.id} ${s.fault} ${s.target}: ${JSON.stringify(s)}`);
  }
}

// ------------------------------------------------------------------ operator and gateway

/**
 * After a gateway restart the lab operator's socket is closed and does not reconnect by
 * itself: reconnect the same client (its transcript goes on) with the lab's approved device
 * identity, once /readyz answers. Returns { readyMs, connectMs } (0 when already connected).
 */
export async function reconnectOperator(lab: Lab, timeoutMs = 90_000): Promise<{ readyMs: number; connectMs: number }> {
  const client = lab.operator.client;
  if (client.connected) return { readyMs: 0, connectMs: 0 };
  await client.close().catch(() => {});
  const readyMs = await waitGatewayReady(lab, timeoutMs);
  const t0 = performance.now();
  // The same options LabOperator.connect uses (lab/topology/operator.ts).
  const identity = loadOrCreateDeviceIdentity(path.join(STATE, "operator", "identity.json"));
  await client.connect(lab.gatewayUrl, {
    token: lab.spec.gateway.token,
    identity,
    role: "operator",
    scopes: [...op.OPERATOR_ADMIN_SCOPES],
    caps: ["approvals", "plugin-approvals"],
    timeoutMs,
  });
  return { readyMs, connectMs: Math.round(performance.now() - t0) };
}

/** Wait until every node of the lab can take worker turns again (shared-lab hygiene). */
export async function waitAllWorkerHosts(lab: Lab, timeoutMs = 90_000): Promise<NodeEntry[]> {
  return Promise.all(lab.nodes.map((m) => waitForWorkerHost(lab, m.alias, timeoutMs)));
}

// ------------------------------------------------------------------ the node as the gateway sees it

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

/** node.list reports the node's worker bundle installed (it lags the dispatch that installed it). */
export async function waitBundleInstalled(lab: Lab, alias: string, timeoutMs = 30_000): Promise<NodeEntry> {
  return waitForNode(lab, alias, "worker bundle installed", (n) => n.workerBundle?.status === "installed", timeoutMs);
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

/**
 * After the first worker turn that follows a cut: node.list says the bundle is installed and
 * the bundle directory on the node is still the one from before (not reinstalled).
 */
export async function bundleKept(lab: Lab, alias: string, before: NodeView): Promise<{ holds: boolean; observed: { status: string | null; sameBundleDir: boolean } }> {
  const n = await waitBundleInstalled(lab, alias).catch(() => nodeByAlias(lab, alias));
  const now = (await installedBundles(lab, alias)).bundles.map(({ dir, hash, inode, receiptMtime }) => ({ dir, hash, inode, receiptMtime }));
  const observed = { status: n.workerBundle?.status ?? null, sameBundleDir: JSON.stringify(now) === JSON.stringify(before.bundles) };
  return { holds: observed.status === "installed" && observed.sameBundleDir, observed };
}

// ------------------------------------------------------------------ the node's control connection at the tap

/** The node's open control connection ("/") at its tap. */
export async function controlConn(tap: TapControl): Promise<string> {
  const open = (await tap.connections()).filter((c) => c.path === "/" && c.state === "open");
  if (open.length !== 1) throw new Error(`expected one open control connection at the tap, found ${open.map((c) => c.conn).join(", ") || "none"}`);
  return open[0]!.conn;
}

/**
 * When the gateway's next keepalive ping on the node's control connection will pass the tap
 * (epoch ms): 25 s after the last ping seen, or after the connection opened.
 */
export async function nextKeepalivePing(tap: TapControl, notBefore = Date.now() + 2_000): Promise<{ conn: string; at: number; lastPing: number | null }> {
  const conn = await controlConn(tap);
  const c = (await tap.connections()).find((x) => x.conn === conn)!;
  const pings = (await tap.frames({ conn })).filter((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.ping);
  const last = pings.at(-1)?.t ?? null;
  let at = (last ?? c.openedAt) + KEEPALIVE_MS;
  while (at < notBefore) at += KEEPALIVE_MS;
  return { conn, at, lastPing: last };
}

/**
 * Inject a prepared fault just before the gateway's next keepalive ping to that node, so the
 * ping goes unanswered and the gateway notices the loss as early as it can (25-50 s later).
 */
export async function injectBeforeKeepalive(fault: Fault, tap: TapControl, leadMs = 800): Promise<{ conn: string; pingAt: number; waitedMs: number; injectedAt: number }> {
  await fault.prepare();
  const next = await nextKeepalivePing(tap, Date.now() + leadMs + 500);
  const waitedMs = Math.max(0, Math.round(next.at - leadMs - Date.now()));
  await sleep(waitedMs);
  const injectedAt = Date.now();
  await fault.inject();
  return { conn: next.conn, pingAt: Math.round(next.at), waitedMs, injectedAt };
}

/** The node's next successful connect on "/" after `since` (its reconnection as the tap saw it). */
export async function waitReconnect(tap: TapControl, since: number, timeoutMs = 90_000): Promise<Frame> {
  return tap.waitForFrame((f) => f.path === "/" && f.dir === "gw->node" && f.replyTo === "connect" && f.ok === true, { since, timeoutMs, what: "a successful connect of the node on /" });
}

/** Connection events and control frames (no worker traffic) since `since`, for evidence. */
export async function controlEvents(tap: TapControl, since: number): Promise<TapRecord[]> {
  const all = await tap.events({ since });
  return all.filter((e) => {
    if (e.kind === "frame") {
      const f = e as Frame;
      return f.path === "/" && (f.opcode !== WS_OPCODE.text || f.method === "connect" || f.replyTo === "connect" || f.event === "tick" || !!f.command);
    }
    return true;
  });
}

/** Poll node.list until the node is `connected` (true/false); returns ms waited and the entry. */
export async function waitConnected(lab: Lab, alias: string, connected: boolean, timeoutMs: number): Promise<{ ms: number; node: NodeEntry }> {
  const t0 = performance.now();
  const node = await waitForNode(lab, alias, connected ? "connected" : "disconnected", (n) => n.connected === connected, timeoutMs);
  return { ms: Math.round(performance.now() - t0), node };
}

