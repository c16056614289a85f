// Paired-worker sessions: create a session on a published workspace, dispatch it to a node
// host (or let the gateway pick one), run worker turns in it, and hold a turn at its model
// call so a scenario can look at the node while the worker is up; and the gateway's view of
// worker environments (environments.list, where qa-lab reads its state database).
import crypto from "node:crypto";
import { z } from "zod";
import type { AgentTurnOptions, AgentTurnResult } from "../clients/operator.ts";
import { chatTurn, createSession, describeSession, dispatchSession, reclaimSession, type DispatchTarget, type Placement, type SessionsCreateResult, type SessionsDispatchResult } from "../clients/sessions.ts";
import type { HeldRequest } from "../clients/model.ts";
import type { Lab } from "../topology/lab.ts";
import { nodeByAlias } from "./nodes.ts";
import type { PublishedWorkspace } from "./workspace.ts";

/** A short unique name for repos, session keys and message tokens. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(3).toString("hex")}`;
}

/** sessions.create on the gateway checkout with a managed worktree (what dispatch requires). */
export async function createWorkerSession(lab: Lab, ws: PublishedWorkspace, opts: { key?: string; label?: string } = {}): Promise<SessionsCreateResult> {
  return createSession(lab.operator.client, { key: opts.key ?? `agent:main:${uniqueName("fleetlab")}`, label: opts.label, cwd: ws.gatewayCheckout, worktree: true });
}

export interface Dispatched extends SessionsDispatchResult {
  ms: number;
}

/** sessions.dispatch to a node by alias (as `deviceId` = its nodeId), or to `"auto"` (autoDevice). */
export async function dispatchTo(lab: Lab, key: string, to: string | "auto"): Promise<Dispatched> {
  const target: DispatchTarget = to === "auto" ? { autoDevice: true } : { deviceId: (await nodeByAlias(lab, to)).nodeId };
  const t0 = performance.now();
  const r = await dispatchSession(lab.operator.client, key, target);
  return { ...r, ms: Math.round(performance.now() - t0) };
}

/** A session's current placement (sessions.describe), or undefined if it was never placed. */
export async function placementOf(lab: Lab, key: string): Promise<Placement | undefined> {
  return (await describeSession(lab.operator.client, key)).placement;
}

export async function reclaim(lab: Lab, key: string): Promise<Placement> {
  return (await reclaimSession(lab.operator.client, key)).placement;
}

/** One worker turn in a placed session (chat.send + agent.wait). */
export function workerTurn(lab: Lab, key: string, message: string, opts: Omit<AgentTurnOptions, "sessionKey" | "agentId"> = {}): Promise<AgentTurnResult> {
  return chatTurn(lab.operator.client, key, message, { timeoutMs: 120_000, ...opts });
}

/** The default model script's answer to `message`: its first eight words after "fleetlab-ok: ". */
export function expectedReply(message: string): string {
  return `fleetlab-ok: ${message.split(/\s+/).filter(Boolean).slice(0, 8).join(" ")}`;
}

export interface HeldTurn {
  /** The model request the turn is held at (one delta streamed). */
  held: HeldRequest;
  /** Release the model request and wait for the turn's result. */
  finish(): Promise<AgentTurnResult>;
  /** The turn's promise (already guarded against unhandled rejection). */
  turn: Promise<AgentTurnResult>;
}

/**
 * Start a worker turn and hold its model request (matched by `token`, which `message` must
 * contain) so the worker stays up while the scenario looks at the node. Always call
 * finish(), or release the model request, before the scenario ends.
 */
export async function startHeldTurn(lab: Lab, key: string, message: string, token: string, opts: { heldWithinMs?: number; turnTimeoutMs?: number } = {}): Promise<HeldTurn> {
  if (!message.includes(token)) throw new Error(`startHeldTurn: message must contain the token '${token}'`);
  await lab.model.hold({ match: { contains: token }, count: 1 });
  const turn = workerTurn(lab, key, message, { timeoutMs: opts.turnTimeoutMs ?? 180_000 });
  turn.catch(() => {}); // judged by whoever awaits it
  let held: HeldRequest;
  try {
    held = await Promise.race([
      lab.model.waitForHeld(opts.heldWithinMs ?? 60_000, (h) => h.userText.includes(token)),
      turn.then((r) => {
        throw new Error(`the turn ended (${r.status}: ${r.text}) before its model request was held`);
      }),
    ]);
  } catch (err) {
    await lab.model.release().catch(() => {});
    throw err;
  }
  return {
    held,
    turn,
    finish: async () => {
      await lab.model.release(held.id);
      return turn;
    },
  };
}

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
