// What the MCP servers and the model saw in an MCP flow, read from their control APIs and
// written as evidence (scenarios/mcp-*.ts); waiting for a restarted server; one echo call in a
// session, observed from the model, the server and the session's history (the MCP repros).
// Nothing here judges; scenarios do.
import type { McpControl, McpRecord } from "../clients/mcp.ts";
import { isResponsesCall, type ModelRequest } from "../clients/model.ts";
import type { SavedMcpServers, SavedModelRequest } from "../evidence/records/index.ts";
import { writeJson } from "../evidence/write.ts";
import type { Lab } from "../topology/lab.ts";
import { labStep } from "../definitions/verdict.ts";
import { pollUntil, waitFor } from "../core/wait.ts";
import type { EventLog } from "./events.ts";
import type { Session } from "./session.ts";
import { toolErrorMessage, toolResults } from "./turns.ts";

export const toolCallsIn = (records: McpRecord[], tool?: string): McpRecord[] =>
  records.filter((r) => r.kind === "rpc" && r.rpcMethod === "tools/call" && (tool === undefined || r.tool === tool));

/**
 * tools/call records up to and including `seq`: with `seq` the server's log position read just
 * before an approval was answered, the calls that came before the answer (ordered by the
 * server's own log, not by a clock).
 */
export const toolCallsThrough = (records: McpRecord[], seq: number, tool?: string): McpRecord[] => toolCallsIn(records, tool).filter((r) => r.seq <= seq);

/** What watchForCall saw: the bound it watched for (carry it in the check's observed) and the calls that came. */
export interface CallWatch {
  within_ms: number;
  calls: number;
}

/**
 * Watches a server's log for a tools/call (after `since`) for `withinMs` from `from` (default:
 * now), ended at once by a call. For "nothing reaches the server while the approval is pending",
 * where no event can close the window: the absence is observed over a bound that the caller
 * carries in its check's observed, so the bound is visible and registered with a finding.
 */
export async function watchForCall(server: McpControl, opts: { withinMs: number; from?: number; since?: number; tool?: string; signal?: AbortSignal }): Promise<CallWatch> {
  const seen = await pollUntil("a tools/call reaching the MCP server", async () => toolCallsIn(await server.requests({ since: opts.since }), opts.tool).length, (n) => n > 0, {
    deadlineMs: opts.withinMs,
    from: opts.from,
    intervalMs: 100,
    signal: opts.signal,
  });
  return { within_ms: opts.withinMs, calls: seen.last };
}

export const cancelsIn = (records: McpRecord[]): McpRecord[] => records.filter((r) => r.kind === "rpc" && r.rpcMethod === "notifications/cancelled");

/** The request id a notifications/cancelled names, and its reason. */
export function cancelParams(r: McpRecord): { requestId: unknown; reason: unknown } {
  const p = (r.params ?? {}) as { requestId?: unknown; reason?: unknown };
  return { requestId: p.requestId, reason: p.reason };
}

/** What one call of a server's tool showed: the run's end, how many tools/call reached the server, the call's result (its error message for an error). */
export interface CallObserved {
  run: string;
  serverCalls: number;
  resultIsError: boolean | null;
  result: string | null;
}

/** One call before the one that worked: what it showed, its result kept as its answer. */
export type CallBefore = Omit<CallObserved, "result"> & { text: string; answer: string | null };

/**
 * The calls made before the one that worked (every call when none did), each with its answer:
 * retried calls are judged too, not hidden behind the success that ended the retries.
 */
export function callsBefore(attempts: { text: string; observed: CallObserved }[], works: boolean): CallBefore[] {
  return (works ? attempts.slice(0, -1) : attempts).map((a) => ({ text: a.text, run: a.observed.run, serverCalls: a.observed.serverCalls, resultIsError: a.observed.resultIsError, answer: a.observed.result }));
}

/** A call refused cleanly: its turn ended "ok" with an error result, and no call reached the server. */
export const refusedCleanly = (c: Pick<CallBefore, "run" | "serverCalls" | "resultIsError">): boolean => c.run === "ok" && c.resultIsError === true && c.serverCalls === 0;

/** Waits (default 30 s) until an MCP server's control API answers (after a restart; lab.mcp() follows a moved IP). */
export async function waitMcpHealthy(lab: Lab, name: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
  await waitFor(`MCP server ${name} to answer /healthz`, () => lab.mcp(name).healthy(), { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 200, signal: opts.signal });
}

/** MCP tools in a model request: `<server>__<tool>` (gateway-side) or `<server>_<tool>` (node-hosted). */
export function mcpToolsOffered(r: ModelRequest, servers: string[] = []): string[] {
  return (r.toolNames ?? []).filter((t) => t.includes("__") || servers.some((s) => t.startsWith(`${s}_`))).sort();
}

/** Requests, holds and effects of each named MCP server, for evidence. */
export async function mcpEvidence(lab: Lab, names: string[] = ["north", "south"]): Promise<SavedMcpServers> {
  const out: SavedMcpServers = {};
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
export async function modelEvidence(lab: Lab): Promise<SavedModelRequest[]> {
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

/** What one echo call showed: the run's status, whether the model was offered the tool, how often the server saw the call (`<server>Calls`), the call's result. */
export type EchoObserved<S extends string> = { run: string; offered: boolean; resultIsError: boolean | null; result: string | null } & { [K in `${S}Calls`]: number };

export interface EchoAttempt<S extends string> {
  text: string;
  /** When the turn was sent (epoch ms). */
  at: number;
  end: { status: string; text?: string; ms: number };
  observed: EchoObserved<S>;
}

/**
 * One turn in session `s` calling `<server>__example_echo {text}`: whether the model was offered
 * the tool, how many of the server's tools/call records since `since` carry this text, and this
 * turn's tool result (the one it added to the session's history; none if it made no call).
 * `history` is how many history messages are read to find it (4 per turn).
 */
export async function echoAttempt<S extends string>(lab: Lab, s: Session, server: S, text: string, since: number, opts: { timeoutMs: number; history: number }): Promise<EchoAttempt<S>> {
  const tool = `${server}__example_echo`;
  const before = toolResults(await s.history(opts.history).catch(() => [])).length; // none yet before a session's first turn
  const at = Date.now();
  const end = await s.turn(`fleetlab-call ${tool} {"text":"${text}"}`, opts.timeoutMs);
  const reqs = (await labStep("read the model's requests", () => lab.model.requests())).filter((r) => isResponsesCall(r) && (r.userText ?? "").includes(`"text":"${text}"`));
  const offered = reqs.length > 0 && mcpToolsOffered(reqs[0]!).includes(tool);
  const calls = toolCallsIn(await labStep(`read ${server}'s records`, () => lab.mcp(server).requests({ since })), "example_echo").filter((r) => (r.args as { text?: unknown } | undefined)?.text === text).length;
  const results = toolResults(await s.history(opts.history));
  const mine = results.length > before ? results.at(-1) : undefined;
  const observed = { run: end.status, offered, [`${server}Calls`]: calls, resultIsError: mine ? mine.isError : null, result: mine ? (mine.isError ? toolErrorMessage(mine.text) : mine.text) : null } as EchoObserved<S>;
  return { text, at, end: { status: end.status, text: end.text, ms: end.ms }, observed };
}
