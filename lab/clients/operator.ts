// Typed operator calls on top of GatewayClient. Result shapes are parsed with zod (loose:
// fields the lab does not name are kept); a shape that does not parse is an error naming
// the method, because scenarios cannot judge what they cannot read.
import crypto from "node:crypto";
import { z } from "zod";
import { GatewayError, type GatewayClient } from "./gateway.ts";
import { deadline } from "../core/pace.ts";

/** The scopes a lab operator asks for: everything an admin needs for pairing and turns. */
export const OPERATOR_ADMIN_SCOPES = [
  "operator.admin",
  "operator.read",
  "operator.write",
  "operator.pairing",
  "operator.approvals",
] as const;

/**
 * One request whose result must match `schema`; other typed clients (sessions.ts) use it too.
 * `timeoutMs` is paced (lab/core/pace.ts) unless `expectation` keeps it a fixed wall-clock bound.
 */
export async function call<S extends z.ZodType>(client: GatewayClient, method: string, params: unknown, schema: S, timeoutMs?: number, opts: { expectation?: boolean } = {}): Promise<z.infer<S>> {
  const payload = await client.request(method, params, { timeoutMs, expectation: opts.expectation });
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw new GatewayError(method, "BAD_RESPONSE", `result does not match the expected shape: ${z.prettifyError(parsed.error)}`, payload);
  }
  return parsed.data;
}

/** A gateway error, as data: what a repro records instead of a thrown exception. */
export interface Refused {
  ok: false;
  code: string;
  detailsCode?: string;
  message: string;
}

/** A thrown gateway error as data (code, details code, message). */
export function refusal(err: unknown): Refused {
  const e = err as { code?: unknown; details?: { code?: unknown }; gatewayMessage?: unknown; message?: unknown };
  const detailsCode = typeof e.details?.code === "string" ? e.details.code : undefined;
  return { ok: false, code: typeof e.code === "string" ? e.code : "ERROR", ...(detailsCode ? { detailsCode } : {}), message: String(e.gatewayMessage ?? e.message ?? err) };
}

export const isRefused = (r: unknown): r is Refused => !!r && typeof r === "object" && (r as { ok?: unknown }).ok === false && typeof (r as { code?: unknown }).code === "string";

// --- nodes -------------------------------------------------------------------------------

export const NodeEntrySchema = z.looseObject({
  nodeId: z.string().min(1),
  displayName: z.string().optional(),
  approvalState: z.string().optional(),
  paired: z.boolean(),
  connected: z.boolean(),
  sessionHost: z.boolean().optional(),
  workerSlots: z.looseObject({ total: z.number().int(), available: z.number().int() }).optional(),
  workerBundle: z.looseObject({ status: z.string(), version: z.string().optional() }).optional(),
  remoteIp: z.string().optional(),
});
export type NodeEntry = z.infer<typeof NodeEntrySchema>;

export const NodeListResultSchema = z.looseObject({
  ts: z.number(),
  activeNodeId: z.string().optional(),
  nodes: z.array(NodeEntrySchema),
});

export async function listNodes(client: GatewayClient): Promise<NodeEntry[]> {
  return (await call(client, "node.list", {}, NodeListResultSchema)).nodes;
}

// --- device pairing (device.pair.*) ------------------------------------------------------

export const PendingDeviceSchema = z.looseObject({
  requestId: z.string().min(1),
  deviceId: z.string().min(1),
  publicKey: z.string().optional(),
  displayName: z.string().optional(),
  platform: z.string().optional(),
  clientId: z.string().optional(),
  clientMode: z.string().optional(),
  role: z.string().optional(),
  roles: z.array(z.string()).optional(),
  scopes: z.array(z.string()).optional(),
  remoteIp: z.string().optional(),
  ts: z.number().optional(),
});
export type PendingDevice = z.infer<typeof PendingDeviceSchema>;

export const PairedDeviceSchema = z.looseObject({
  deviceId: z.string().min(1),
  displayName: z.string().optional(),
  roles: z.array(z.string()).optional(),
  scopes: z.array(z.string()).optional(),
  connected: z.boolean().optional(),
});
export type PairedDevice = z.infer<typeof PairedDeviceSchema>;

export const DevicePairListSchema = z.looseObject({
  pending: z.array(PendingDeviceSchema),
  paired: z.array(PairedDeviceSchema),
});

export async function listDevicePairing(client: GatewayClient): Promise<z.infer<typeof DevicePairListSchema>> {
  return call(client, "device.pair.list", {}, DevicePairListSchema);
}

export const DevicePairApproveResultSchema = z.looseObject({
  requestId: z.string().optional(),
  device: PairedDeviceSchema.optional(),
});

export async function approveDevice(client: GatewayClient, requestId: string): Promise<z.infer<typeof DevicePairApproveResultSchema>> {
  return call(client, "device.pair.approve", { requestId }, DevicePairApproveResultSchema);
}

// --- node pairing (node.pair.*): approval of a node's declared commands --------------------

export const PendingNodeSchema = z.looseObject({
  requestId: z.string().min(1),
  nodeId: z.string().min(1),
  displayName: z.string().optional(),
  platform: z.string().optional(),
  commands: z.array(z.string()).optional(),
  remoteIp: z.string().optional(),
  ts: z.number().optional(),
});
export type PendingNode = z.infer<typeof PendingNodeSchema>;

export const PairedNodeSchema = z.looseObject({
  nodeId: z.string().min(1),
  displayName: z.string().optional(),
  commands: z.array(z.string()).optional(),
});

export const NodePairListSchema = z.looseObject({
  pending: z.array(PendingNodeSchema),
  paired: z.array(PairedNodeSchema),
});

export async function listNodePairing(client: GatewayClient): Promise<z.infer<typeof NodePairListSchema>> {
  return call(client, "node.pair.list", {}, NodePairListSchema);
}

export const NodePairApproveResultSchema = z.looseObject({
  requestId: z.string().optional(),
  node: PairedNodeSchema.optional(),
});

export async function approveNode(client: GatewayClient, requestId: string): Promise<z.infer<typeof NodePairApproveResultSchema>> {
  return call(client, "node.pair.approve", { requestId }, NodePairApproveResultSchema);
}

// --- agent turns -------------------------------------------------------------------------

export class AgentTurnError extends Error {
  readonly runId: string | undefined;
  readonly result: unknown;
  constructor(
    message: string,
    runId: string | undefined,
    result: unknown,
  ) {
    super(message);
    this.runId = runId;
    this.result = result;
    this.name = "AgentTurnError";
  }
}

export interface AgentTurnOptions {
  /** Session to run in (default: a fresh `agent:main:fleetlab-<uuid>` per turn). */
  sessionKey?: string;
  agentId?: string;
  /**
   * Whole-turn budget (default 120 s): the lab's own, in reference-machine ms, handed to the
   * gateway at the machine's pace (lab/core/pace.ts deadline(): the gateway counts it in wall time).
   */
  timeoutMs?: number;
  /** timeoutMs is the expectation itself ("answered within N s"): handed to the gateway as it is, not paced. */
  expectation?: boolean;
  idempotencyKey?: string;
}

export interface AgentTurnResult {
  text: string;
  runId: string;
  sessionKey: string;
  status: string;
  durationMs: number;
  /** The final `agent` payload as the gateway sent it. */
  raw: unknown;
}

const AgentAcceptedSchema = z.looseObject({ runId: z.string().min(1), status: z.literal("accepted") });
const AgentFinalSchema = z.looseObject({
  runId: z.string().min(1),
  status: z.string(),
  summary: z.string().optional(),
  result: z
    .looseObject({ payloads: z.array(z.looseObject({ text: z.string().optional() })).optional() })
    .optional(),
});

export function newSessionKey(agentId = "main"): string {
  return `agent:${agentId}:fleetlab-${crypto.randomUUID()}`;
}

/**
 * One gateway-local agent turn through the `agent` method: the gateway acknowledges with
 * `{status:"accepted", runId}` and answers again under the same request id when the run
 * ends (`{status:"ok", result:{payloads:[{text}]}}`). Returns the assistant's final text.
 */
export async function agentTurn(client: GatewayClient, message: string, opts: AgentTurnOptions = {}): Promise<AgentTurnResult> {
  // The gateway counts the run's `timeout` in wall time: a lab-side budget is handed to it at the
  // machine's pace; an expectation as it is.
  const timeoutMs = opts.expectation ? (opts.timeoutMs ?? 120_000) : deadline(opts.timeoutMs ?? 120_000);
  const sessionKey = opts.sessionKey ?? newSessionKey(opts.agentId);
  const idempotencyKey = opts.idempotencyKey ?? crypto.randomUUID();
  const t0 = Date.now();
  let acceptedRunId: string | undefined;
  let payload: unknown;
  try {
    payload = await client.request(
      "agent",
      { message, sessionKey, agentId: opts.agentId, idempotencyKey, timeout: Math.ceil(timeoutMs / 1000) },
      {
        expectFinal: true,
        // The gateway enforces `timeout` on the run itself; the socket waits a little longer
        // so the gateway's own verdict, not a local timeout, is what the caller sees.
        timeoutMs: timeoutMs + 5_000,
        // fixed: the gateway counts `timeout` in wall time (already at the pace, or the expectation); the socket only waits 5 s past it
        expectation: true,
        onAccepted: (p) => {
          acceptedRunId = AgentAcceptedSchema.safeParse(p).data?.runId;
        },
      },
    );
  } catch (err) {
    if (err instanceof GatewayError && err.code === "TIMEOUT") {
      throw new AgentTurnError(`agent turn in ${sessionKey} got no final answer within ${timeoutMs + 5_000} ms (run ${acceptedRunId ?? "not accepted"})`, acceptedRunId, undefined);
    }
    throw err;
  }
  const parsed = AgentFinalSchema.safeParse(payload);
  if (!parsed.success) {
    throw new AgentTurnError(`agent returned an unexpected final payload: ${z.prettifyError(parsed.error)}`, acceptedRunId, payload);
  }
  const final = parsed.data;
  const text = (final.result?.payloads ?? [])
    .map((p) => p.text ?? "")
    .filter((t) => t.length > 0)
    .join("\n");
  if (final.status !== "ok") {
    throw new AgentTurnError(`agent run ${final.runId} ended with status ${final.status}${final.summary ? `: ${final.summary}` : ""}`, final.runId, payload);
  }
  if (!text) {
    throw new AgentTurnError(`agent run ${final.runId} finished without assistant text${final.summary ? ` (${final.summary})` : ""}`, final.runId, payload);
  }
  return { text, runId: final.runId, sessionKey, status: final.status, durationMs: Date.now() - t0, raw: payload };
}
