// What the scripted model's control API takes and answers, defined once: the request records,
// held requests, armed holds and failures, and every route with its body and reply. The server
// builds these; lab/clients/model.ts reads them through `import type`. The script format itself
// (rules, matches, steps) is in script.ts.

import type { LoadedRule, Match, MatchFields, Rule, ScriptMode } from "./script.ts";

/** pending | streaming | held | completed | failed | aborted (the client went away first). */
export type RequestStatus = "pending" | "streaming" | "held" | "completed" | "failed" | "aborted";

/** What a response carried, in order. */
export type Emitted = { type: "text"; text: string } | { type: "function_call"; name: string; arguments: string; callId: string };

/** One HTTP request the model server received (anything but /_control and /healthz). */
export interface ModelRequest {
  id: string;
  seq: number;
  time: string;
  method: string;
  path: string;
  model: string | null;
  stream: boolean;
  /** Id of the rule that answered, "control:fail" for an armed failure, null when none did. */
  rule: string | null;
  status: RequestStatus;
  httpStatus: number | null;
  endedAt: string | null;
  /** SSE events sent. */
  events: number;
  /** What the response carried (text and tool calls), in order. */
  output: Emitted[];
  bodyBytes: number;
  /** The parsed request body, as sent (a Responses request: model, input, tools, ...). */
  body: unknown;
  headers: { "user-agent": string | null; "x-client-request-id": string | null };
  // Facts derived from a /v1/responses body:
  userText?: string;
  userTurn?: number;
  round?: number;
  toolNames?: string[];
  responseId?: string;
  streamedText?: string;
  heldAt?: string;
  releasedAt?: string;
  holdReason?: string;
  /** A script drop step destroyed the connection. */
  dropped?: boolean;
}

/** A request held now (by a hold step, holdAfter, or an armed control hold). */
export interface HeldRequest {
  id: string;
  seq: number;
  path: string;
  model: string | null;
  rule: string | null;
  heldAt: string;
  reason: string;
  userText: string;
  round: number;
  streamedText: string;
}

/** Armed by POST /_control/hold: the next `remaining` matching responses are held after afterDeltas deltas. */
export interface ArmedHold {
  id: string;
  match: MatchFields;
  afterDeltas: number;
  remaining: number;
}

/** Armed by POST /_control/fail: the next `remaining` matching requests are answered with HTTP `status`. */
export interface ArmedFail {
  id: string;
  match: MatchFields;
  status: number;
  body: unknown;
  remaining: number;
}

export interface ModelHealth {
  ok: true;
  rules: number;
  held: number;
  requests: number;
}

/** POST /_control/script: rules, or a script file by name (the server also takes a bare array of rules). */
export type ScriptBody = ({ rules: Rule[] } | { script: string }) & { mode?: ScriptMode };

/** Every route: "METHOD /path" -> query, body and reply. */
export interface ModelControlApi {
  "GET /healthz": { reply: ModelHealth };
  /** Every request received, oldest first; since keeps seq > since. */
  "GET /_control/requests": { query: { since?: number }; reply: { requests: ModelRequest[] } };
  /** Reload the start-up script, clear records/holds/fails, release held streams (request seq
   * keeps counting, so ?since= stays meaningful). */
  "POST /_control/reset": { reply: { ok: true; released: string[]; rules: number } };
  /** The rules in force. */
  "GET /_control/script": { reply: { rules: LoadedRule[] } };
  /** Add rules (mode "prepend" by default); replies the ids of all rules now in force. */
  "POST /_control/script": { body: ScriptBody; reply: { ok: true; rules: string[] } };
  /** The next `count` (1) matching responses are held after `afterDeltas` (1) deltas (0 = right
   * after response.created; before response.completed if it has fewer). */
  "POST /_control/hold": { body: { match?: Match; afterDeltas?: number; count?: number }; reply: { ok: true; armed: ArmedHold } };
  /** Release one held request (by request id), or all. */
  "POST /_control/release": { body: { id?: string }; reply: { ok: true; released: string[] } };
  /** The next `count` (1) matching requests are answered with HTTP `status` (500) and `body`. */
  "POST /_control/fail": { body: { match?: Match; status?: number; count?: number; body?: unknown }; reply: { ok: true; armed: ArmedFail } };
  "GET /_control/held": { reply: { held: HeldRequest[] } };
  "GET /_control/armed": { reply: { holds: ArmedHold[]; fails: ArmedFail[] } };
}
