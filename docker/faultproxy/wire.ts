// What the tap's control API answers, defined once: the records (WebSocket frames, HTTP
// exchanges, connection and rule events), the connection view, and every route with its body
// and reply. The tap builds these; lab/clients/tap.ts reads them through `import type`.
// The rule format itself is in rules.ts.

import type { ActionType, CloseCode, CloseSide, Dir, RuleAction, RuleMatch, Side, TapRule, TapRuleSpec } from "./rules.ts";

export type { Side };
export type PerDir<T> = Record<Dir, T>;

/** What the tap did with a frame: forwarded, delayed, dropped, replaced by a close, held
 * (half-open / freeze: delivered on heal), or discarded (its connection was closed by a rule);
 * "inject": a frame the tap itself wrote (an inject rule), not one either side sent. */
export type FrameAction = "forward" | "delay" | "drop" | "close" | "hold" | "discard" | "inject";

/** Fields of a gateway JSON frame worth indexing ({type:"req",id,method} / {type:"res",id,ok} /
 * {type:"event",event}), as found in a text frame. */
export interface GatewayFields {
  type?: string;
  method?: string;
  event?: string;
  id?: string;
  ok?: boolean;
  eventSeq?: number;
  errorCode?: string;
  errorDetailsCode?: string;
  /** node.invoke.request payload.command (worker.launch.v1, ...) or node.invoke params.command. */
  command?: string;
  /** The invoke id of node.invoke.request (payload.id) and node.invoke.result (params.id). */
  invokeId?: string;
  /** false: the text starts with "{" but is not JSON. */
  json?: false;
  /** For a res frame: the method of the request it answers (same connection). */
  replyTo?: string;
}

/** One WebSocket frame as the tap saw it. Text and gateway fields sit on the last frame of a
 * message (fragments > 1 when the message came in several frames). */
export interface Frame extends GatewayFields {
  kind: "frame";
  seq: number;
  t: number;
  conn: string;
  path: string | null;
  dir: Dir;
  opcode: number;
  fin: boolean;
  len: number;
  masked: boolean;
  compressed?: boolean;
  fragments?: number;
  messageLen?: number;
  text?: string;
  truncated?: boolean;
  decodeError?: string;
  close?: { code: number; reason: string };
  action: FrameAction;
  rule?: string;
}

export interface HttpExchange {
  kind: "http";
  seq: number;
  t: number;
  conn: string;
  method: string;
  path: string;
  status: number | null;
  /** Body bytes (chunk framing not counted). */
  reqBytes: number;
  resBytes: number;
  durationMs: number;
  upgrade?: string;
  rule?: string;
  /** The connection ended before the response did. */
  incomplete?: boolean;
}

/** Connection events. */
export type ConnEvent = { kind: "conn"; seq: number; t: number; conn: string } & (
  | { event: "open"; remote: string }
  | { event: "upgrade"; path: string | null; remote: string; offeredExtensions: string | null; extensions: string | null }
  | { event: "tunnel"; path: string | null; upgrade: string | null }
  | { event: "parse-error"; dir: Dir; message: string }
  | { event: "error"; side: Side; code: string | null; message: string }
  /** A close rule fired (code: the close code; after: the trigger frame went through first), or a respond rule (code: the HTTP status the tap answered). */
  | { event: "fault"; rule: string; code: CloseCode | number; side: CloseSide; path: string | null; after?: boolean }
  | { event: "close"; remote: string; path: string | null; durationMs: number; frames: PerDir<number>; bytes: PerDir<number> }
);

/** Rule events. A firing's trigger: the seq of the trigger frame, the HTTP request, or "added"
 * (a freeze with an empty match). */
export type RuleEvent = { kind: "rule"; seq: number; t: number } & (
  | { event: "added"; id: string; match: RuleMatch; action: RuleAction; once: boolean }
  | { event: "fired"; id: string; action: ActionType; conn: string | null; trigger: number | "added" | { kind: "http"; method: string; path: string } }
  | ({ event: "removed"; id: string } & Released)
  | ({ event: "healed"; removed: string[] } & Healed)
  /** A notify rule's POST was answered (status) or failed (error). */
  | { event: "notified" | "notify-failed"; id: string; action: "notify"; conn: string | null; trigger: number; status?: number; error?: string }
);

export type TapEvent = ConnEvent | RuleEvent;
export type TapRecord = Frame | HttpExchange | TapEvent;

/** One connection through the tap, open or recently closed. */
export interface TapConnection {
  conn: string;
  remote: string;
  upstreamLocal: string | null;
  state: "open" | "held" | "faulted" | "closed";
  mode: "http" | "ws" | "raw";
  path: string | null;
  deflate: boolean;
  openedAt: number;
  closedAt: number | null;
  halfOpenBy: string[];
  fault: { rule: string; code: CloseCode | number; side: CloseSide; t: number } | null;
  requests: number;
  frames: PerDir<number>;
  bytes: PerDir<number>;
  queued: PerDir<number>;
}

/** What a heal did. */
export interface Healed {
  unfrozen: boolean;
  resumed: number;
  flushedFrames: number;
  ended: number;
}

/** What removing one rule undid. */
export interface Released {
  resumed: number;
  unfrozen: boolean;
}

export interface TapHealth {
  ok: true;
  listen: string;
  upstream: string;
  control?: string;
  seq: number;
  connections: number;
  rules: number;
  frozen: boolean;
}

/** Every route: "METHOD /path" (":id" = one path segment) -> query, body and reply. */
export interface TapControlApi {
  "GET /healthz": { reply: TapHealth };
  /** Frames with seq > since; match: substring of text, method, event, command or replyTo. */
  "GET /frames": { query: { since?: number; conn?: string; match?: string; limit?: number }; reply: { frames: Frame[]; seq: number } };
  "GET /http": { query: { since?: number; conn?: string }; reply: { http: HttpExchange[]; seq: number } };
  /** Everything (frames, http, connection and rule events) in seq order. */
  "GET /events": { query: { since?: number }; reply: { events: TapRecord[]; seq: number } };
  "GET /connections": { reply: { connections: TapConnection[] } };
  /** Heal, drop all rules, forget records (seq goes on). */
  "POST /reset": { reply: { ok: true; removed: string[]; healed: Healed; seq: number } };
  "GET /rules": { reply: { rules: TapRule[] } };
  /** Answered 201. */
  "POST /rules": { body: TapRuleSpec; reply: { ok: true; rule: TapRule } };
  /** Heal all: remove every rule, resume held connections, deliver delayed frames now, end what
   * a close fault left half open. */
  "DELETE /rules": { reply: { ok: true; removed: string[]; healed: Healed } };
  /** Remove one rule and undo its half-open/freeze; 404 when there is none. */
  "DELETE /rules/:id": { reply: { ok: true; rule: TapRule; released: Released } };
}
