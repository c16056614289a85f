// Typed session calls as openclaw@2026.9.6 answers them: placement (sessions.create /
// dispatch / describe / reclaim) and the runs in a session (chat.send, agent.wait,
// chat.history, and chatTurn doing all three), and a history compared as qa-lab compares it.
// Placement shapes follow its protocol schema (packages/gateway-protocol/src/schema/
// session-placement.ts in the package's dist); all are loose objects, so fields the lab does
// not name are kept for evidence.
import crypto from "node:crypto";
import { z } from "zod";
import type { GatewayClient } from "./gateway.ts";
import { AgentTurnError, call, type AgentTurnOptions, type AgentTurnResult } from "./operator.ts";
import { deadline, PacedBudget } from "../core/pace.ts";

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

// --- runs in a session: chat.send, agent.wait, chat.history (the only schemas of these) ----

export const ChatSendResultSchema = z.looseObject({ runId: z.string().min(1), status: z.string() });

/** What chat.send does with a message that arrives while the session already runs a turn (docs/concepts/queue.md). */
export type QueueMode = "steer" | "followup" | "collect" | "interrupt";

/**
 * chat.send: the gateway admits the turn (`status: "started"`) and answers at once. `queueMode`
 * overrides the session's queue mode for this message only (without it, the stored mode: steer).
 */
export async function sendChat(client: GatewayClient, sessionKey: string, message: string, idempotencyKey: string = crypto.randomUUID(), opts: { queueMode?: QueueMode } = {}): Promise<z.infer<typeof ChatSendResultSchema>> {
  return call(client, "chat.send", { sessionKey, message, idempotencyKey, ...(opts.queueMode ? { queueMode: opts.queueMode } : {}) }, ChatSendResultSchema);
}

export const AgentWaitResultSchema = z.looseObject({
  runId: z.string().min(1),
  /** "ok", "error", or "timeout" (the wait ended; the run may still be going). */
  status: z.string(),
  error: z.unknown().optional(),
  stopReason: z.string().optional(),
  terminalReply: z.looseObject({ text: z.string().optional() }).optional(),
  endedAt: z.number().optional(),
});
export type AgentWaitResult = z.infer<typeof AgentWaitResultSchema>;

/**
 * agent.wait: the run's end, or `status: "timeout"` when it is still going after `timeoutMs`.
 * The gateway counts that bound in wall time: the lab's own wait (the default) hands it
 * `timeoutMs` reference-machine ms at the machine's pace (lab/core/pace.ts deadline()); with
 * `expectation` (the bound is what is judged: "ended within 10 s", a window read for "still
 * running") it is handed as it is.
 */
export async function waitRun(client: GatewayClient, runId: string, timeoutMs: number, opts: { expectation?: boolean } = {}): Promise<AgentWaitResult> {
  return agentWaitWall(client, runId, opts.expectation ? timeoutMs : deadline(timeoutMs));
}

/** agent.wait with a bound in wall ms as the gateway counts it (already at the pace, or the expectation itself). */
export async function agentWaitWall(client: GatewayClient, runId: string, wallMs: number): Promise<AgentWaitResult> {
  // The gateway answers with status "timeout" at its deadline; the socket gets a little
  // longer so that answer, not a local timeout, is what the caller sees.
  // fixed: the gateway counts wallMs itself (already at the pace, or the expectation); the socket only waits 5 s past it
  return call(client, "agent.wait", { runId, timeoutMs: wallMs }, AgentWaitResultSchema, wallMs + 5_000, { expectation: true });
}

export const ChatHistorySchema = z.looseObject({
  messages: z.array(
    z.looseObject({
      role: z.string(),
      content: z.unknown(),
      /** role "custom": what kind of note (e.g. "run-failed-before-reply"). */
      customType: z.string().optional(),
      /** role "toolResult": the tool and call it answers. */
      toolName: z.string().optional(),
      toolCallId: z.string().optional(),
      isError: z.boolean().optional(),
      __openclaw: z.looseObject({ runId: z.string().optional() }).optional(),
    }),
  ),
});
export type HistoryMessage = z.infer<typeof ChatHistorySchema>["messages"][number];

export async function chatHistory(client: GatewayClient, sessionKey: string, limit = 50): Promise<HistoryMessage[]> {
  return (await call(client, "chat.history", { sessionKey, limit }, ChatHistorySchema)).messages;
}

/**
 * Accepted input not (yet) in the transcript, as chat.history lists it beside the messages
 * (`pendingInputs`, 2026.9.x): a followup queued behind a running turn is `queued` until its turn
 * takes it; after a gateway restart, input that never reached the transcript is `interrupted`
 * (docs/concepts/queue.md "Input durability": kept, never run by itself, resent by the client).
 */
export const PendingInputSchema = z.looseObject({ id: z.string(), state: z.string(), runId: z.string().optional(), acceptedAt: z.unknown().optional(), message: z.unknown().optional() });
export type PendingInput = z.infer<typeof PendingInputSchema>;
const ChatPendingSchema = z.looseObject({ pendingInputs: z.looseObject({ items: z.array(PendingInputSchema), total: z.number().optional() }).optional() });

/**
 * The session's pending inputs from chat.history; undefined when its answer carries no
 * pendingInputs field at all (2026.9.4): a version that lists none is not one whose list is empty.
 */
export async function chatPendingInputs(client: GatewayClient, sessionKey: string, limit = 50): Promise<PendingInput[] | undefined> {
  return (await call(client, "chat.history", { sessionKey, limit }, ChatPendingSchema)).pendingInputs?.items;
}

/** Text of a chat.history message: a plain string or the text parts of a content array. */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && typeof part === "object" && (part as { type?: unknown }).type === "text" ? String((part as { text?: unknown }).text ?? "") : ""))
    .join("");
}

// --- history as qa-lab compares it: message by message, by role and text, not by timestamps

/** One line per message: its role, its text, and its tool calls (name and arguments). */
export function historyLines(history: HistoryMessage[]): string[] {
  return history.map((m) => {
    const calls = Array.isArray(m.content)
      ? (m.content as { type?: unknown; name?: unknown; arguments?: unknown }[]).filter((p) => p && p.type === "toolCall").map((p) => ` [toolCall ${String(p.name)} ${JSON.stringify(p.arguments ?? null)}]`)
      : [];
    return `${m.role}: ${messageText(m.content)}${calls.join("")}`;
  });
}

/** Where `after` departs from `before`: the lines after their common prefix on each side. */
export function historyDiff(before: string[], after: string[]): { equal: boolean; removed: string[]; added: string[] } {
  let i = 0;
  while (i < before.length && i < after.length && before[i] === after[i]) i++;
  return { equal: i === before.length && i === after.length, removed: before.slice(i), added: after.slice(i) };
}

/**
 * One turn in a named session through the chat path the Control UI uses:
 * `chat.send {sessionKey, message, idempotencyKey}` -> `{runId, status:"started"}`, then
 * `agent.wait {runId, timeoutMs}` -> `{status:"ok", terminalReply:{text}}`. Use it for
 * sessions placed on a node (sessions.create + sessions.dispatch); falls back to
 * chat.history when the wait result carries no reply text.
 */
export async function chatTurn(client: GatewayClient, sessionKey: string, message: string, opts: Omit<AgentTurnOptions, "sessionKey" | "agentId"> = {}): Promise<AgentTurnResult> {
  // The whole turn's budget: the lab's own, spent at the machine's pace (lab/core/pace.ts), or the expectation (wall time).
  const budget = new PacedBudget(opts.timeoutMs ?? 120_000, !!opts.expectation);
  const t0 = Date.now();
  const sent = await sendChat(client, sessionKey, message, opts.idempotencyKey ?? crypto.randomUUID());
  const left = Math.max(1, budget.leftWallMs());
  const waited = await agentWaitWall(client, sent.runId, left);
  if (waited.status !== "ok") {
    // agent.wait "timeout" only means the wait ended: the run itself may still be going.
    const still = waited.status === "timeout" ? ` after ${left} ms (the run may still be active; chat.abort stops it)` : "";
    throw new AgentTurnError(`chat turn ${sent.runId} in ${sessionKey} ended with status ${waited.status}${still}${waited.error ? `: ${JSON.stringify(waited.error)}` : ""}`, sent.runId, waited);
  }
  let text = waited.terminalReply?.text ?? "";
  if (!text) {
    const history = await chatHistory(client, sessionKey, 20);
    const last = history.filter((m) => m.role === "assistant" && (m.__openclaw?.runId ?? sent.runId) === sent.runId).at(-1);
    text = last ? messageText(last.content) : "";
  }
  if (!text) throw new AgentTurnError(`chat turn ${sent.runId} in ${sessionKey} finished without assistant text`, sent.runId, waited);
  return { text, runId: sent.runId, sessionKey, status: waited.status, durationMs: Date.now() - t0, raw: waited };
}
