// Gateway-local turns a scenario drives step by step: start one without waiting for it (so
// the scenario can act while it is parked or held), and read the tool results it left in the
// session's history. agent.wait and chat.history themselves are lab/clients/sessions.ts.
import type { GatewayClient } from "../clients/gateway.ts";
import { newSessionKey } from "../clients/operator.ts";
import { messageText, sendChat, type HistoryMessage } from "../clients/sessions.ts";

export interface Turn {
  sessionKey: string;
  runId: string;
  message: string;
}

/** chat.send in a (new) gateway-local session; returns at once with the run id. */
export async function sendTurn(client: GatewayClient, message: string, sessionKey = newSessionKey()): Promise<Turn> {
  const reply = await sendChat(client, sessionKey, message);
  return { sessionKey, runId: reply.runId, message };
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
    .map((m) => ({ toolName: m.toolName ?? "", toolCallId: m.toolCallId ?? "", isError: m.isError === true, text: messageText(m.content) }));
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

/** One turn as a repro reads it: its own tool results and replies from the session's history, and the model requests made for it. */
export interface TurnView {
  runId: string;
  /** Tool results of this run only (history messages tagged with its runId). */
  toolResults: ToolResult[];
  /** This run's assistant texts, in order. */
  replies: string[];
  /** The model requests whose last user message carries `token` (the turn's message, or a marker in it), in order. */
  modelRequests: { id: string; seq: number; status: string; round?: number; toolNames?: string[]; output: unknown[] }[];
}

/**
 * The per-turn view: what one run left in the history and what the model was asked for it. A
 * history message without a run tag is not counted as this run's (another turn's result must not
 * be read as this one's).
 */
export function turnView(runId: string, token: string, history: HistoryMessage[], requests: readonly { id: string; seq: number; status: string; userText?: string; round?: number; toolNames?: string[]; output: unknown[] }[]): TurnView {
  const mine = history.filter((m) => m.__openclaw?.runId === runId);
  return {
    runId,
    toolResults: toolResults(mine),
    replies: mine.filter((m) => m.role === "assistant").map((m) => messageText(m.content)).filter((t) => t.length > 0),
    modelRequests: requests
      .filter((r) => (r.userText ?? "").includes(token))
      .map((r) => ({ id: r.id, seq: r.seq, status: r.status, ...(r.round !== undefined ? { round: r.round } : {}), ...(r.toolNames ? { toolNames: r.toolNames } : {}), output: r.output })),
  };
}
