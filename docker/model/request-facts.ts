// Reading a Responses request: the facts a script rule can match on and its templates fill in,
// from a stateless (store:false) request body as OpenClaw sends it.

export interface Facts {
  /** Text of the latest user message (internal-context blocks and carrier messages skipped). */
  userText: string;
  /** userText minus leading "[...]" envelopes such as the timestamp. */
  message: string;
  /** Number of user messages in the input. */
  userTurn: number;
  /** Tool round: function_call_output items after the latest user message. */
  round: number;
  /** Output of the latest function_call_output. */
  toolOutput: string;
  /** Name of the function call that output answers. */
  toolName: string;
  /** Function names the request's tools array offers. */
  tools: string[];
}

/** An input item or content part, as far as these facts need it. */
interface Item {
  role?: unknown;
  type?: unknown;
  content?: unknown;
  text?: unknown;
  output?: unknown;
  call_id?: unknown;
  name?: unknown;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: Item | string | null) => (typeof p === "string" ? p : typeof p?.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return contentText(output);
  return output === undefined ? "" : JSON.stringify(output);
}

const INTERNAL_CONTEXT = /<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>[\s\S]*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>/g;
function stripInternalContext(text: string): string {
  return text.replace(INTERNAL_CONTEXT, "").trim();
}

// OpenClaw prefixes user text with envelopes such as "[Sun 2026-11-29 17:41 UTC] " and, when it
// re-sends a turn after a failed model call, "[Queued user message from a previous active turn; ...]".
function stripEnvelopes(text: string): string {
  let prev;
  do {
    prev = text;
    text = text.replace(/^\[[^\]\n]*\]\s*/, "");
  } while (text !== prev);
  return text;
}

/** Facts a rule can match on, from a stateless (store:false) Responses request body. */
export function analyze(body: { input?: unknown; tools?: unknown } | null): Facts {
  const input: (Item | null)[] = typeof body?.input === "string" ? [{ role: "user", content: body.input }] : Array.isArray(body?.input) ? body.input : [];
  let lastUser = -1;
  let userTurn = 0;
  let userText = "";
  input.forEach((item, i) => {
    if (item?.role !== "user" || (item.type !== undefined && item.type !== "message")) return;
    // OpenClaw appends runtime context as an extra user message ("context carrier"); it is not
    // what the user said, so it neither counts as a turn nor resets the tool round.
    const text = stripInternalContext(contentText(item.content));
    if (!text) return;
    lastUser = i;
    userTurn++;
    userText = text;
  });
  const after = input.slice(lastUser + 1);
  const outputs = after.filter((it) => it?.type === "function_call_output");
  const lastOut = outputs.at(-1);
  const calls = input.filter((it) => it?.type === "function_call");
  const lastCall = lastOut ? calls.find((c) => c!.call_id === lastOut.call_id) : undefined;
  const offered: ({ name?: unknown; function?: { name?: unknown } } | null)[] = Array.isArray(body?.tools) ? body.tools : [];
  const tools = offered.map((t) => t?.name ?? t?.function?.name).filter(Boolean) as string[];
  return {
    userText,
    message: stripEnvelopes(userText),
    userTurn,
    round: outputs.length,
    toolOutput: lastOut ? outputText(lastOut.output) : "",
    toolName: (lastCall?.name as string | undefined) ?? "",
    tools,
  };
}
