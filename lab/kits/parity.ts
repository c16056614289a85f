// What the parity scenarios native-worker-slot and pair-remove need beyond the session kit: the
// gateway's view of worker environments (environments.list, where qa-lab reads its state
// database), deleting a session and removing a node's pairing as an operator does, the
// worker.launch.v1 frames a node received with the ids qa-lab reads from its in-process node
// (launchId, runId, environmentId, ownerEpoch), and an operator's attempt to send a node one of
// its private worker controls (node.invoke), the only way into a node's command stream the
// gateway offers from outside.
import crypto from "node:crypto";
import { z } from "zod";
import type { Frame } from "../clients/tap.ts";
import type { Lab } from "../topology/lab.ts";
import { refusal, type Refused } from "./session.ts";

/** One entry of environments.list; `worker` is the worker environment's metadata (WorkerEnvironmentMetadata). */
export const EnvironmentSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  status: z.string(),
  workerSlots: z.looseObject({ total: z.number(), available: z.number() }).optional(),
  worker: z.looseObject({ providerId: z.string().optional(), state: z.string(), attachedSessionIds: z.array(z.string()), tunnelStatus: z.string(), error: z.string().optional() }).optional(),
});
export type Environment = z.infer<typeof EnvironmentSchema>;

/** environments.list: nodes (`node:<nodeId>`) and worker environments (by environmentId). */
export async function listEnvironments(lab: Lab): Promise<Environment[]> {
  const r = z.looseObject({ environments: z.array(EnvironmentSchema) }).parse(await lab.operator.client.request("environments.list", {}));
  return r.environments;
}

/** sessions.delete {key} (answer or refusal as data). */
export async function deleteSession(lab: Lab, key: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("sessions.delete", { key }).catch(refusal);
}

/** node.pair.remove {nodeId} (answer or refusal as data). */
export async function removeNodePairing(lab: Lab, nodeId: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("node.pair.remove", { nodeId }).catch(refusal);
}

/** sessions.describe {key} (answer or refusal as data): a deleted session's row, if any. */
export async function describeOrRefusal(lab: Lab, key: string): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("sessions.describe", { key }).catch(refusal);
}

/** A worker.launch.v1 the node received, with the ids of its descriptor. */
export interface Launch {
  seq: number;
  t: number;
  launchId?: string;
  runId?: string;
  environmentId?: string;
  sessionId?: string;
  ownerEpoch?: number;
  placementGeneration?: number;
}

/** worker.launch.v1 frames the gateway sent `alias` since `since` (a tap seq), parsed. */
export async function launchesSince(lab: Lab, alias: string, since = 0): Promise<Launch[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === "worker.launch.v1").map(parseLaunch);
}

export function parseLaunch(f: Frame): Launch {
  const l: Launch = { seq: f.seq, t: f.t };
  try {
    const p = JSON.parse((JSON.parse(f.text ?? "{}") as { payload?: { paramsJSON?: string } }).payload?.paramsJSON ?? "{}") as {
      launchId?: string;
      placementGeneration?: number;
      descriptor?: { admission?: { environmentId?: string; sessionId?: string; ownerEpoch?: number }; assignment?: { runId?: string } };
    };
    Object.assign(l, {
      launchId: p.launchId,
      runId: p.descriptor?.assignment?.runId,
      environmentId: p.descriptor?.admission?.environmentId,
      sessionId: p.descriptor?.admission?.sessionId,
      ownerEpoch: p.descriptor?.admission?.ownerEpoch,
      placementGeneration: p.placementGeneration,
    });
  } catch {
    /* a truncated frame: the ids stay unknown */
  }
  return l;
}

/** Worker commands (`worker.*` node.invoke.request) the gateway sent `alias` since `since`, by name and seq. */
export async function workerCommandsSince(lab: Lab, alias: string, since = 0): Promise<{ seq: number; command: string }[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && (f.command ?? "").startsWith("worker.")).map((f) => ({ seq: f.seq, command: f.command! }));
}

/**
 * An operator's node.invoke of a node's private worker control (e.g. worker.cancel.v1 with a
 * stale ownerEpoch): the gateway's answer, or its refusal, as data.
 */
export async function invokeNodeCommand(lab: Lab, nodeId: string, command: string, params: unknown): Promise<Record<string, unknown> | Refused> {
  return lab.operator.client.request<Record<string, unknown>>("node.invoke", { nodeId, command, params, idempotencyKey: crypto.randomUUID(), timeoutMs: 10_000 }, { timeoutMs: 15_000 }).catch(refusal);
}
