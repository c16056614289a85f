// Pairing as an operator does it, for a scripted node (lab/clients/scripted-node.ts) and for
// re-pairing: the device pairing request a first connect leaves (PAIRING_REQUIRED with its
// requestId), device.pair.approve, the node pairing request the gateway creates while the
// approved device connects (its declared commands), node.pair.approve; and the other way,
// device.pair.remove and the refused connect it leads to. Each step is timed and kept, so a
// repro can say which step OpenClaw took how long over, or refused.
import * as op from "../clients/operator.ts";
import { refusal, type NodeEntry, type Refused } from "../clients/operator.ts";
import { GatewayError } from "../clients/gateway.ts";
import type { ScriptedNode } from "../clients/scripted-node.ts";
import type { Lab } from "../topology/lab.ts";
import { waitFor } from "../core/wait.ts";

/** One step of a pairing, as it went. */
export interface PairingStep {
  step: "connect refused" | "device approved" | "connected" | "node pairing approved" | "listed approved";
  ms: number;
  detail?: Record<string, unknown>;
}

export interface Paired {
  nodeId: string;
  steps: PairingStep[];
  /** node.list's entry once the node is connected and approved. */
  entry: NodeEntry;
  ms: number;
}

/**
 * Pair `alias`'s scripted node from scratch and leave it connected: connect (refused:
 * PAIRING_REQUIRED), approve the device request, connect again, approve the node pairing request
 * of its declared commands, and wait until node.list shows it connected and approved. A refusal
 * other than PAIRING_REQUIRED, or a step that does not come within `timeoutMs`, is thrown:
 * pairing is OpenClaw's to get right, so a scenario lets it fail its check or its run.
 */
export async function pairScripted(lab: Lab, alias: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Paired> {
  const node = lab.scripted(alias);
  const url = lab.scriptedUrl(alias);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const t0 = Date.now();
  const steps: PairingStep[] = [];
  const at = () => Date.now() - t0;
  try {
    await node.connect(url);
    steps.push({ step: "connected", ms: at(), detail: { already: "paired" } });
  } catch (err) {
    if (!(err instanceof GatewayError && err.isPairingRequired && err.requestId)) throw err;
    steps.push({ step: "connect refused", ms: at(), detail: { detailsCode: err.detailsCode, reason: err.reason } });
    await op.approveDevice(lab.operator.client, err.requestId);
    steps.push({ step: "device approved", ms: at(), detail: { requestId: err.requestId } });
    await node.connect(url);
    steps.push({ step: "connected", ms: at() });
  }
  const request = await waitFor(
    `${alias}: a node pairing request for its declared commands`,
    async () => (await op.listNodePairing(lab.operator.client)).pending.find((p) => p.nodeId === node.nodeId),
    { timeoutMs, intervalMs: 200, signal: opts.signal },
  ).catch((err: unknown) => {
    // Already approved (a node paired earlier in this lab): nothing pending is fine when node.list says so.
    return listedApproved(lab, node).then((e) => (e ? undefined : Promise.reject(err)));
  });
  if (request) {
    await op.approveNode(lab.operator.client, request.requestId);
    steps.push({ step: "node pairing approved", ms: at(), detail: { requestId: request.requestId, commands: request.commands } });
  }
  const entry = await waitFor(`${alias}: connected and approved in node.list`, () => listedApproved(lab, node), { timeoutMs, intervalMs: 200, signal: opts.signal });
  steps.push({ step: "listed approved", ms: at() });
  return { nodeId: node.nodeId, steps, entry, ms: at() };
}

async function listedApproved(lab: Lab, node: ScriptedNode): Promise<NodeEntry | undefined> {
  const n = (await op.listNodes(lab.operator.client)).find((x) => x.nodeId === node.nodeId);
  return n?.connected && n.approvalState === "approved" ? n : undefined;
}

/** node.list's entry of a node by id (undefined: not listed). */
export async function nodeEntry(lab: Lab, nodeId: string): Promise<NodeEntry | undefined> {
  return (await op.listNodes(lab.operator.client)).find((x) => x.nodeId === nodeId);
}

/** device.pair.remove {deviceId}: the gateway forgets the device (answer or refusal as data). */
export async function removeDevicePairing(lab: Lab, deviceId: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("device.pair.remove", { deviceId }).catch(refusal);
}

/** A connect the gateway refused, as data: its code, details code, reason and requestId. */
export interface RefusedConnect {
  code: string;
  detailsCode?: string;
  reason?: string;
  requestId?: string;
  message: string;
}

/** Try a new connection of the scripted node: undefined when it was admitted, else the refusal. */
export async function tryConnect(lab: Lab, alias: string): Promise<RefusedConnect | undefined> {
  try {
    await lab.scripted(alias).connect(lab.scriptedUrl(alias));
    return undefined;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { code: err.code, detailsCode: err.detailsCode, reason: err.reason, requestId: err.requestId, message: err.gatewayMessage };
  }
}
