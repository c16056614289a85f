// Typed session-placement calls (sessions.create / dispatch / describe / reclaim) as
// openclaw@2026.9.6 answers them. Shapes follow its protocol schema
// (packages/gateway-protocol/src/schema/session-placement.ts in the package's dist); loose
// objects, so fields the lab does not name are kept for evidence.
import crypto from "node:crypto";
import { z } from "zod";
import type { GatewayClient } from "./gateway.ts";
import { call } from "./operator.ts";

/**
 * A session's placement. `state` is one of local, requested, provisioning, syncing,
 * starting, active, draining, reconciling, reclaimed, failed. An active paired-device
 * placement names the node (`runner.deviceId`, = node.list nodeId), the worker bundle it
 * runs (`workerBundleHash`, the bundle directory's name on the node) and the worker's
 * checkout on the node (`remoteWorkspaceDir`).
 */
export const PlacementSchema = z.looseObject({
  state: z.string(),
  generation: z.number().int(),
  providerId: z.string().optional(),
  profileId: z.string().optional(),
  environmentId: z.string().optional(),
  activeOwnerEpoch: z.number().int().optional(),
  workerBundleHash: z.string().optional(),
  workspaceBaseManifestRef: z.string().optional(),
  remoteWorkspaceDir: z.string().optional(),
  runner: z.looseObject({ kind: z.string(), status: z.string(), deviceId: z.string().optional() }).optional(),
  recoveryError: z.string().optional(),
  terminalReason: z.string().optional(),
});
export type Placement = z.infer<typeof PlacementSchema>;

export const WorktreeSchema = z.looseObject({ id: z.string(), path: z.string(), branch: z.string() });

export const SessionsCreateResultSchema = z.looseObject({
  ok: z.literal(true),
  key: z.string().min(1),
  sessionId: z.string().min(1),
  /** Present when created with `worktree: true`: the managed worktree on the gateway. */
  worktree: WorktreeSchema.optional(),
  entry: z.looseObject({ sessionId: z.string() }).optional(),
});
export type SessionsCreateResult = z.infer<typeof SessionsCreateResultSchema>;

export interface SessionsCreateParams {
  key?: string;
  agentId?: string;
  label?: string;
  /** Gateway directory: with `worktree: true`, the Git checkout the managed worktree is made from. */
  cwd?: string;
  /** sessions.dispatch refuses sessions without a session-owned worktree or repository workspace. */
  worktree?: boolean;
  worktreeName?: string;
  worktreeBaseRef?: string;
}

export async function createSession(client: GatewayClient, params: SessionsCreateParams): Promise<SessionsCreateResult> {
  return call(client, "sessions.create", params, SessionsCreateResultSchema);
}

export const SessionsDispatchResultSchema = z.looseObject({
  ok: z.literal(true),
  key: z.string(),
  sessionId: z.string(),
  placement: PlacementSchema,
});
export type SessionsDispatchResult = z.infer<typeof SessionsDispatchResultSchema>;

/** Exactly one target: a node (`deviceId` = its node.list nodeId) or automatic selection. */
export type DispatchTarget = { deviceId: string } | { autoDevice: true };

/**
 * sessions.dispatch answers only once the placement is active (it includes the worker
 * bundle install on a node that lacks it), so the default wait is generous.
 */
export async function dispatchSession(client: GatewayClient, key: string, target: DispatchTarget, timeoutMs = 120_000): Promise<SessionsDispatchResult> {
  return call(client, "sessions.dispatch", { key, ...target }, SessionsDispatchResultSchema, timeoutMs);
}

export const SessionRowSchema = z.looseObject({
  key: z.string(),
  sessionId: z.string().optional(),
  status: z.string().optional(),
  hasActiveRun: z.boolean().optional(),
  placement: PlacementSchema.optional(),
});
export type SessionRow = z.infer<typeof SessionRowSchema>;

/** One session row (sessions.describe); `placement` is absent for a session never placed. */
export async function describeSession(client: GatewayClient, key: string): Promise<SessionRow> {
  return (await call(client, "sessions.describe", { key }, z.looseObject({ session: SessionRowSchema }))).session;
}

export const SessionsReclaimResultSchema = z.looseObject({ ok: z.literal(true), key: z.string(), sessionId: z.string(), placement: PlacementSchema });

/** Stops a session's placement (drains, reconciles the workspace); the result is `reclaimed` or `local`. */
export async function reclaimSession(client: GatewayClient, key: string, timeoutMs = 120_000): Promise<z.infer<typeof SessionsReclaimResultSchema>> {
  return call(client, "sessions.reclaim", { key }, SessionsReclaimResultSchema, timeoutMs);
}

// --- runs in a session, one step at a time (chatTurn in operator.ts does both at once) ----

export const ChatSendResultSchema = z.looseObject({ runId: z.string().min(1), status: z.string() });

/** chat.send: the gateway admits the turn (`status: "started"`) and answers at once. */
export async function sendChat(client: GatewayClient, sessionKey: string, message: string, idempotencyKey: string = crypto.randomUUID()): Promise<z.infer<typeof ChatSendResultSchema>> {
  return call(client, "chat.send", { sessionKey, message, idempotencyKey }, ChatSendResultSchema);
}

export const AgentWaitResultSchema = z.looseObject({
  runId: z.string().min(1),
  /** "ok", "error", or "timeout" (the wait ended; the run may still be going). */
  status: z.string(),
  error: z.unknown().optional(),
  terminalReply: z.looseObject({ text: z.string().optional() }).optional(),
  endedAt: z.number().optional(),
});
export type AgentWaitResult = z.infer<typeof AgentWaitResultSchema>;

/** agent.wait: the run's end, or `status: "timeout"` when it is still going after `timeoutMs`. */
export async function waitRun(client: GatewayClient, runId: string, timeoutMs: number): Promise<AgentWaitResult> {
  return call(client, "agent.wait", { runId, timeoutMs }, AgentWaitResultSchema, timeoutMs + 5_000);
}

export const ChatHistorySchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown(), customType: z.string().optional() })),
});

export async function chatHistory(client: GatewayClient, sessionKey: string, limit = 50): Promise<z.infer<typeof ChatHistorySchema>["messages"]> {
  return (await call(client, "chat.history", { sessionKey, limit }, ChatHistorySchema)).messages;
}
