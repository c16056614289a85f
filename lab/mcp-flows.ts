// Building blocks for the multi-MCP scenarios (scenarios/mcp-*.ts): start a gateway-local turn
// without waiting for it (so a scenario can act while it is parked or held), record the
// approval/chat/tool events of the operator connection, read what each MCP server and the
// model saw, and write it all as evidence. Nothing here judges; scenarios do.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Lab } from "./topology/lab.ts";
import { GatewayClient, type EventFrame } from "./clients/gateway.ts";
import { loadOrCreateDeviceIdentity } from "./clients/device-identity.ts";
import { OPERATOR_ADMIN_SCOPES, newSessionKey } from "./clients/operator.ts";
import type { McpControl, McpRecord } from "./clients/mcp.ts";
import { isResponsesCall, type ModelRequest } from "./clients/model.ts";
import { STATE } from "./paths.ts";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------- turns ----------

export interface Turn {
  sessionKey: string;
  runId: string;
  message: string;
}

const ChatSendReply = z.looseObject({ runId: z.string().min(1), status: z.string() });

/** chat.send in a (new) gateway-local session; returns at once with the run id. */
export async function sendTurn(client: GatewayClient, message: string, sessionKey = newSessionKey()): Promise<Turn> {
  const reply = ChatSendReply.parse(await client.request("chat.send", { sessionKey, message, idempotencyKey: crypto.randomUUID() }));
  return { sessionKey, runId: reply.runId, message };
}

export const AgentWaitSchema = z.looseObject({
  runId: z.string(),
  /** "ok", "error", or "timeout" (only the wait ended; the run may still go on). */
  status: z.string(),
  error: z.unknown().optional(),
  stopReason: z.string().optional(),
  terminalReply: z.looseObject({ text: z.string().optional() }).optional(),
});
export type AgentWait = z.infer<typeof AgentWaitSchema>;

/** agent.wait: the run's terminal state, or status "timeout" when it has none within timeoutMs. */
export async function waitRun(client: GatewayClient, runId: string, timeoutMs: number): Promise<AgentWait> {
  return AgentWaitSchema.parse(await client.request("agent.wait", { runId, timeoutMs }, { timeoutMs: timeoutMs + 5_000 }));
}

const HistorySchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown(), toolName: z.string().optional(), toolCallId: z.string().optional(), isError: z.boolean().optional() })),
});
export type HistoryMessage = z.infer<typeof HistorySchema>["messages"][number];

export async function chatHistory(client: GatewayClient, sessionKey: string): Promise<HistoryMessage[]> {
  return HistorySchema.parse(await client.request("chat.history", { sessionKey, limit: 50 })).messages;
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p && typeof p === "object" && (p as { type?: unknown }).type === "text" ? String((p as { text?: unknown }).text ?? "") : "")).join("");
}

export interface ToolResult {
  toolName: string;
  toolCallId: string;
  isError: boolean;
  text: string;
}

/** The tool results in a session's history, in order. */
export function toolResults(history: HistoryMessage[]): ToolResult[] {
  return history
    .filter((m) => m.role === "toolResult")
    .map((m) => ({ toolName: m.toolName ?? "", toolCallId: m.toolCallId ?? "", isError: m.isError === true, text: contentText(m.content) }));
}

/**
 * The error message inside a failed MCP tool result. OpenClaw hands the model
 * `{"status":"error","tool":...,"error":"SECURITY NOTICE ... <<<EXTERNAL_UNTRUSTED_CONTENT id=...>>>
 * Source: API\n---\n<message>\n<<<END_EXTERNAL_UNTRUSTED_CONTENT ...>>>"}` with a random id;
 * this returns <message> (or the error string as is when it is not wrapped).
 */
export function toolErrorMessage(text: string): string {
  let error = text;
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === "string") error = parsed.error;
  } catch {
    // not JSON: use the text as is
  }
  const m = /<<<EXTERNAL_UNTRUSTED_CONTENT[^>]*>>>\n(?:Source: [^\n]*\n)?---\n([\s\S]*?)\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/.exec(error);
  return m ? m[1]! : error;
}

// ---------- events ----------

export interface Recorded {
  t: number;
  event: string;
  payload: unknown;
}

/**
 * Records the operator connection's events that matter for MCP flows: every approval event,
 * chat terminal states, agent lifecycle and tool items. Keeps everything else out so the
 * evidence stays readable (the full frame transcript is in lab/transcripts anyway).
 */
export class EventLog {
  readonly events: Recorded[] = [];
  #off: () => void;

  constructor(client: GatewayClient) {
    this.#off = client.on("*", (payload: unknown, frame: EventFrame) => {
      if (EventLog.keep(frame.event, payload)) this.events.push({ t: Date.now(), event: frame.event, payload });
    });
  }

  static keep(event: string, payload: unknown): boolean {
    if (event.includes("approval")) return true;
    const p = (payload ?? {}) as { state?: unknown; stream?: unknown; data?: { kind?: unknown } };
    if (event === "chat") return p.state !== "delta" && p.state !== "status";
    if (event === "agent") return p.stream === "lifecycle" || (p.stream === "item" && p.data?.kind === "tool");
    return false;
  }

  stop(): void {
    this.#off();
  }

  approvals(): Recorded[] {
    return this.events.filter((e) => e.event.includes("approval"));
  }

  /** plugin.approval.requested payloads for one run (or all). */
  approvalRequests(runId?: string): ApprovalRequested[] {
    return this.events
      .filter((e) => e.event === "plugin.approval.requested")
      .map((e) => e.payload as ApprovalRequested)
      .filter((p) => runId === undefined || p.request?.runId === runId);
  }

  /** The terminal chat state of a run ("final", "aborted", "error"), if one was seen. */
  chatOutcome(runId: string): string | undefined {
    const hit = this.events.filter((e) => e.event === "chat" && (e.payload as { runId?: string }).runId === runId).at(-1);
    return (hit?.payload as { state?: string } | undefined)?.state;
  }

  /** End states of the run's tool items: [{name, status}]. */
  toolItems(runId: string): { name: string; status: string }[] {
    return this.events
      .filter((e) => e.event === "agent")
      .map((e) => e.payload as { runId?: string; stream?: string; data?: { kind?: string; phase?: string; name?: string; status?: string } })
      .filter((p) => p.runId === runId && p.stream === "item" && p.data?.kind === "tool" && p.data.phase === "end")
      .map((p) => ({ name: p.data?.name ?? "", status: p.data?.status ?? "" }));
  }
}

export interface ApprovalRequested {
  id: string;
  approvalKind?: string;
  request?: { toolName?: string; runId?: string; sessionKey?: string; toolCallId?: string };
}

/** Waits for plugin.approval.requested of this run (already recorded or still to come). */
export async function waitApproval(log: EventLog, client: GatewayClient, runId: string | undefined, timeoutMs = 30_000): Promise<ApprovalRequested> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = log.approvalRequests(runId)[0];
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no plugin.approval.requested${runId ? ` for run ${runId}` : ""} within ${timeoutMs} ms (approval events seen: ${log.approvals().length})`);
    if (!client.connected) throw new Error("the operator connection closed while waiting for an approval request");
    await sleep(50);
  }
}

const ApprovalGetSchema = z.looseObject({ approval: z.looseObject({ id: z.string(), status: z.string(), reason: z.string().optional(), decision: z.string().optional() }) });
export type ApprovalState = z.infer<typeof ApprovalGetSchema>["approval"];

/** approval.get: the durable approval record (pending, or its terminal state with reason). */
export async function approvalState(client: GatewayClient, id: string): Promise<ApprovalState> {
  return ApprovalGetSchema.parse(await client.request("approval.get", { id })).approval;
}

/** Resolves an approval; returns the gateway's answer or the error code it refused with. */
export async function resolveApproval(client: GatewayClient, id: string, decision: "allow-once" | "deny"): Promise<{ ok: true; payload: unknown } | { ok: false; code: string; detailsCode?: string; message: string }> {
  try {
    const payload = decision === "deny" ? await client.request("approval.resolve", { id, kind: "plugin", decision }) : await client.request("plugin.approval.resolve", { id, decision });
    return { ok: true, payload };
  } catch (err) {
    const e = err as { code?: string; detailsCode?: string; gatewayMessage?: string; message: string };
    return { ok: false, code: e.code ?? "ERROR", detailsCode: e.detailsCode, message: e.gatewayMessage ?? e.message };
  }
}

// ---------- what the servers and the model saw ----------

export const toolCallsIn = (records: McpRecord[], tool?: string): McpRecord[] =>
  records.filter((r) => r.kind === "rpc" && r.rpcMethod === "tools/call" && (tool === undefined || r.tool === tool));

export const cancelsIn = (records: McpRecord[]): McpRecord[] => records.filter((r) => r.kind === "rpc" && r.rpcMethod === "notifications/cancelled");

/** The request id a notifications/cancelled names, and its reason. */
export function cancelParams(r: McpRecord): { requestId: unknown; reason: unknown } {
  const p = (r.params ?? {}) as { requestId?: unknown; reason?: unknown };
  return { requestId: p.requestId, reason: p.reason };
}

/** Requests, holds and effects of each named MCP server, for evidence. */
export async function mcpEvidence(lab: Lab, names: string[] = ["north", "south"]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const n of names) {
    const c: McpControl = lab.mcp(n);
    try {
      out[n] = { requests: await c.requests(), held: await c.held({ all: true }), effects: await c.effects(), sessions: await c.sessions() };
    } catch (err) {
      out[n] = { unreachable: (err as Error).message };
    }
  }
  return out;
}

/** The MCP tools (names with `__`) the gateway offered the model in a request. */
/** MCP tools in a model request: `<server>__<tool>` (gateway-side) or `<server>_<tool>` (node-hosted). */
export function mcpToolsOffered(r: ModelRequest, servers: string[] = []): string[] {
  return (r.toolNames ?? []).filter((t) => t.includes("__") || servers.some((s) => t.startsWith(`${s}_`))).sort();
}

/** Model requests in a compact form: who answered, what came out, the tool outputs sent in. */
export async function modelEvidence(lab: Lab): Promise<unknown[]> {
  const reqs = await lab.model.requests();
  return reqs.map((r) => {
    const input = ((r.body as { input?: unknown[] } | undefined)?.input ?? []) as { type?: string; role?: string }[];
    return {
      id: r.id,
      time: r.time,
      path: r.path,
      rule: r.rule,
      status: r.status,
      round: r.round,
      userText: r.userText,
      mcpTools: isResponsesCall(r) ? mcpToolsOffered(r, lab.spec.mcp.nodeServers.map((m) => m.name)) : [],
      output: r.output,
      toolOutputs: input.filter((i) => i.type === "function_call_output"),
    };
  });
}

/** Writes JSON evidence into the scenario folder. */
export function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

/** Everything a MCP scenario keeps: per server requests, approval events, model requests. */
export async function saveMcpEvidence(lab: Lab, file: (rel: string) => string, log: EventLog, extra: Record<string, unknown> = {}): Promise<void> {
  writeJson(file("mcp-servers.json"), await mcpEvidence(lab));
  writeJson(file("approval-events.json"), log.approvals());
  writeJson(file("events.json"), log.events);
  writeJson(file("model-requests.json"), await modelEvidence(lab).catch((e: Error) => ({ unreachable: e.message })));
  for (const [name, value] of Object.entries(extra)) writeJson(file(`${name}.json`), value);
}

// ---------- gateway restarts ----------

/** Waits until the gateway answers /readyz again (after a restart). */
export async function waitGatewayReady(lab: Lab, timeoutMs = 90_000): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      const r = await fetch(`http://${lab.gateway.ip}:${lab.spec.gateway.port}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (r.ok) return Date.now() - t0;
    } catch {
      // not up yet
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`gateway /readyz did not answer within ${timeoutMs} ms after the restart`);
    await sleep(250);
  }
}

/**
 * A new operator connection with the lab's approved device identity (lab.operator's socket
 * dies with a gateway restart and does not reconnect). Same scopes and approval caps, so
 * plugin approvals are routed to it. The caller closes it and saves its transcript.
 */
export async function connectOperator(lab: Lab, name: string): Promise<GatewayClient> {
  const identity = loadOrCreateDeviceIdentity(path.join(STATE, "operator", "identity.json"));
  return GatewayClient.connect(lab.gatewayUrl, {
    name,
    token: lab.spec.gateway.token,
    identity,
    role: "operator",
    scopes: [...OPERATOR_ADMIN_SCOPES],
    caps: ["approvals", "plugin-approvals"],
    timeoutMs: 60_000,
  });
}

/** Waits until an MCP server's control API answers (after a restart; lab.mcp() follows a moved IP). */
export async function waitMcpHealthy(lab: Lab, name: string, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!(await lab.mcp(name).healthy())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`MCP server ${name} did not answer /healthz within ${timeoutMs} ms`);
    await sleep(200);
  }
}
