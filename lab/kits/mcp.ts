// What the MCP servers and the model saw in an MCP flow, read from their control APIs and
// written as evidence (scenarios/mcp-*.ts); waiting for a restarted server. Nothing here
// judges; scenarios do.
import type { McpControl, McpRecord } from "../clients/mcp.ts";
import { isResponsesCall, type ModelRequest } from "../clients/model.ts";
import { writeJson } from "../evidence/write.ts";
import type { Lab } from "../topology/lab.ts";
import { waitFor } from "../wait.ts";
import type { EventLog } from "./events.ts";

export const toolCallsIn = (records: McpRecord[], tool?: string): McpRecord[] =>
  records.filter((r) => r.kind === "rpc" && r.rpcMethod === "tools/call" && (tool === undefined || r.tool === tool));

export const cancelsIn = (records: McpRecord[]): McpRecord[] => records.filter((r) => r.kind === "rpc" && r.rpcMethod === "notifications/cancelled");

/** The request id a notifications/cancelled names, and its reason. */
export function cancelParams(r: McpRecord): { requestId: unknown; reason: unknown } {
  const p = (r.params ?? {}) as { requestId?: unknown; reason?: unknown };
  return { requestId: p.requestId, reason: p.reason };
}

/** Waits (default 30 s) until an MCP server's control API answers (after a restart; lab.mcp() follows a moved IP). */
export async function waitMcpHealthy(lab: Lab, name: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
  await waitFor(`MCP server ${name} to answer /healthz`, () => lab.mcp(name).healthy(), { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 200, signal: opts.signal });
}

/** MCP tools in a model request: `<server>__<tool>` (gateway-side) or `<server>_<tool>` (node-hosted). */
export function mcpToolsOffered(r: ModelRequest, servers: string[] = []): string[] {
  return (r.toolNames ?? []).filter((t) => t.includes("__") || servers.some((s) => t.startsWith(`${s}_`))).sort();
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

/** Everything a MCP scenario keeps: per server requests, approval events, model requests. */
export async function saveMcpEvidence(lab: Lab, file: (rel: string) => string, log: EventLog, extra: Record<string, unknown> = {}): Promise<void> {
  writeJson(file("mcp-servers.json"), await mcpEvidence(lab));
  writeJson(file("approval-events.json"), log.approvals());
  writeJson(file("events.json"), log.events);
  writeJson(file("model-requests.json"), await modelEvidence(lab).catch((e: Error) => ({ unreachable: e.message })));
  for (const [name, value] of Object.entries(extra)) writeJson(file(`${name}.json`), value);
}
