// Paired-worker sessions: create a session on a published workspace, dispatch it to a node
// host (or let the gateway pick one), run worker turns in it, and hold a turn at its model
// call so a scenario can look at the node while the worker is up; and the gateway's view of
// worker environments (environments.list, where qa-lab reads its state database).
import crypto from "node:crypto";
import { z } from "zod";
import { GatewayError, type LocalErrorCode } from "../clients/gateway.ts";
import { refusal, type AgentTurnOptions, type AgentTurnResult, type Refused } from "../clients/operator.ts";
import { chatTurn, createSession, describeSession, dispatchSession, reclaimSession, type DispatchTarget, type Placement, type SessionsCreateResult, type SessionsDispatchResult } from "../clients/sessions.ts";
import type { HeldRequest } from "../clients/model.ts";
import type { CheckDef } from "../judge/history.ts";
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

/** What a dispatch gave, as a history keeps it (ctx.observe): which node it aimed at and the placement's state and runner. */
export interface DispatchSeen {
  alias: string;
  state: string;
  deviceId?: string;
}

export function dispatchSeen(alias: string, d: { placement: Placement }): DispatchSeen {
  return { alias, state: d.placement.state, ...(d.placement.runner?.deviceId ? { deviceId: d.placement.runner.deviceId } : {}) };
}

/**
 * A declared check that every dispatch the body made (`read`: the DispatchSeen it observed) gave
 * an active placement: a step the rest of a scenario needs, so the body stops at it with
 * `if (!ctx.proceed(id)) return;` (lab/scenario.ts). Observed: each dispatch's node and state.
 * `onNode`: the nodeId every placement's runner must be as well (observed as `onNode`), with the
 * expectation that says so; nothing to judge until it is known.
 */
export function dispatchedCheck<H>(id: string, read: (h: H) => DispatchSeen[] | DispatchSeen | undefined, opts: { onNode?: (h: H) => string | undefined; expectation?: string } = {}): CheckDef<H> {
  return {
    id,
    expectation: opts.expectation ?? "a dispatch to a paired node host gives an active placement on it",
    judge: (h) => {
      const r = read(h);
      const seen = r === undefined ? [] : Array.isArray(r) ? r : [r];
      if (!seen.length) return undefined;
      if (!opts.onNode) return { holds: seen.every((d) => d.state === "active"), observed: seen.map((d) => ({ alias: d.alias, state: d.state })) };
      const nodeId = opts.onNode(h);
      if (nodeId === undefined) return undefined;
      const placed = seen.map((d) => ({ alias: d.alias, state: d.state, onNode: d.deviceId === nodeId }));
      return { holds: placed.every((d) => d.state === "active" && d.onNode), observed: placed };
    },
  };
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
export async function startHeldTurn(lab: Lab, key: string, message: string, token: string, opts: HeldTurnOptions = {}): Promise<HeldTurn> {
  return (await startHeldTurns(lab, [{ key, message, token }], opts))[0]!;
}

export interface HeldTurnOptions {
  /** How long each turn's model request may take to be held (the lab's wait, paced); default 60 s. */
  heldWithinMs?: number;
  /** Each turn's whole budget (chat.send + agent.wait); default 180 s. */
  turnTimeoutMs?: number;
}

/**
 * Several worker turns sent as one burst, each held at its model call: every hold is armed
 * first, then every chat.send goes out at once (none waits for another), then each turn is
 * waited on until its own model request is held. `token`s must differ, and each `message`
 * contains its token. If any turn ends or is not held in time, every held request is released
 * and the error thrown; otherwise the HeldTurns come back in the order given (finish() each, or
 * release the model, before the scenario ends).
 */
export async function startHeldTurns(lab: Lab, turns: readonly { key: string; message: string; token: string }[], opts: HeldTurnOptions = {}): Promise<HeldTurn[]> {
  for (const t of turns) if (!t.message.includes(t.token)) throw new Error(`startHeldTurn: message must contain the token '${t.token}'`);
  if (new Set(turns.map((t) => t.token)).size !== turns.length) throw new Error("startHeldTurns: each turn needs a token of its own");
  for (const t of turns) await lab.model.hold({ match: { contains: t.token }, count: 1 });
  // The burst: every turn is sent before any is awaited.
  const started = turns.map((t) => {
    const turn = workerTurn(lab, t.key, t.message, { timeoutMs: opts.turnTimeoutMs ?? 180_000 });
    turn.catch(() => {}); // judged by whoever awaits it
    return turn;
  });
  let held: HeldRequest[];
  try {
    held = await Promise.all(
      turns.map((t, i) =>
        Promise.race([
          lab.model.waitForHeld(opts.heldWithinMs ?? 60_000, (h) => h.userText.includes(t.token)),
          started[i]!.then((r) => {
            throw new Error(`the turn ended (${r.status}: ${r.text}) before its model request was held`);
          }),
        ]),
      ),
    );
  } catch (err) {
    await lab.model.release().catch(() => {});
    throw err;
  }
  return held.map((h, i) => ({
    held: h,
    turn: started[i]!,
    finish: async () => {
      await lab.model.release(h.id);
      return started[i]!;
    },
  }));
}

/** What sessions.dispatch answered: the placement, or the gateway's refusal kept as data; `ms` the call's duration. */
export type DispatchOutcome = ({ ok: true; placement: Placement } | Refused) & { ms: number };

/** The client's own codes (no answer from the gateway): the lab's failure, never a refusal. */
const LOCAL_CODES: ReadonlySet<string> = new Set<LocalErrorCode>(["TIMEOUT", "CONNECTION_CLOSED", "NOT_CONNECTED", "HANDSHAKE_FAILED", "BAD_RESPONSE", "PAYLOAD_TOO_LARGE"]);

/**
 * sessions.dispatch of `key` to a node by alias (or `"auto"`), the gateway's refusal kept as
 * data: `{ ok: false, code, detailsCode?, message, ms }` (e.g. INVALID_REQUEST "device worker is
 * at capacity ..."). Anything else (no answer, a node missing from node.list) is thrown: the lab
 * could not ask, which is no refusal.
 */
export async function dispatchOrRefusal(lab: Lab, key: string, to: string | "auto"): Promise<DispatchOutcome> {
  const target: DispatchTarget = to === "auto" ? { autoDevice: true } : { deviceId: (await nodeByAlias(lab, to)).nodeId };
  const t0 = performance.now();
  try {
    const r = await dispatchSession(lab.operator.client, key, target);
    return { ok: true, placement: r.placement, ms: Math.round(performance.now() - t0) };
  } catch (err) {
    if (!(err instanceof GatewayError) || LOCAL_CODES.has(err.code)) throw err;
    return { ...refusal(err), ms: Math.round(performance.now() - t0) };
  }
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
