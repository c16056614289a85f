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
