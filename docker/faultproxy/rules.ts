// Fault rules: what the tap should do to traffic, decided frame by frame. This module defines the
// rule format (TapRuleSpec, as lab/clients/tap.ts sends it; TapRule, as the tap lists it),
// validates rules, matches them and keeps their history (hits, first/last firing); the proxy
// carries out the decisions. A decision is made before the frame is forwarded, so a rule takes
// effect on the very frame that matched it (the trigger frame itself is dropped, delayed, held
// or replaced by the close).
//
// Rule: { id?, match?, action, once? }
//   match (all given fields must hold):
//     kind         "ws" (default): WebSocket frames; "http": HTTP request heads (node -> gateway)
//     dir          "node->gw" | "gw->node"
//     path         request path of the connection (WS) or request (HTTP); exact, or a prefix
//                  when it ends with "*"
//     conn         connection id (e.g. "c3")
//     opcode       "text" | "binary" | "close" | "ping" | "pong" | "continuation" | number
//     method       gateway request frame method (WS); HTTP method (HTTP)
//     event        gateway event frame name
//     command      node.invoke.request payload.command (e.g. "worker.launch.v1")
//     textIncludes substring of the frame's text (WS) / of the request head (HTTP)
//   action (exactly one):
//     { delay: { ms } }            hold the frame ms before forwarding; later frames in that
//                                  direction queue behind it (order is kept)
//     { drop: { count? } }         drop the frame and the next count-1 frames in the same
//                                  direction of that connection (count default 1)
//     { close: { code, side } }    code any close code a peer may send (RFC 6455 7.4 and IANA's
//                                  registry: 1000-1003, 1007-1014, 3000-4999): the tap sends a
//                                  close frame with that code to `side` ("node" | "gw" | "both")
//                                  and ends those sockets; 1006: aborts those sockets with no
//                                  close frame (what the receiver reports as 1006). 1004, 1005
//                                  and 1015 are reserved and refused. Nothing more is forwarded
//                                  on the connection; a side not named stays open and hears
//                                  nothing (it finds out by its own timeouts, or on heal).
//                                  after: true forwards the trigger frame first, then closes: its
//                                  receiver gets the frame, then the close frame and FIN, or
//                                  (1006) FIN with no close frame, behind it on the wire
//     { respond: { status } }      HTTP only (match.kind "http"): the tap answers the request
//                                  itself with that status (e.g. 502, as a proxy in front of a
//                                  gateway that is down would) and closes; the gateway never sees it
//     { notify: { url } }          forward the frame as usual, then POST {rule, seq, t, conn} to
//                                  url (a fault helper on the lab network, e.g. one that kills a
//                                  process from inside its target's namespaces): a trigger that
//                                  acts within milliseconds of the frame passing
//     { halfOpen: {} }             stop forwarding both ways on that connection, sockets stay
//                                  open; what arrives is recorded and held, delivered on heal
//     { withholdPong: {} }         drop matching pong frames (give `dir` = the side whose pongs
//                                  are withheld); only pong frames are considered
//     { freeze: {} }               halfOpen for every connection, new ones included (a new
//                                  connection still reaches the gateway at TCP level, but no
//                                  byte passes); with an empty match it takes effect when the
//                                  rule is added
//     { inject: { to, text, before? } }
//                                  write a frame of the tap's own: one text frame with `text` to
//                                  `to` ("node" | "gw") on the trigger frame's connection, right
//                                  after the trigger frame (before: true, right before it; both in
//                                  the trigger's lane order when they go the same way); the
//                                  trigger frame is forwarded as usual. The written frame is
//                                  recorded with action "inject" (masked toward the gateway, as a
//                                  client's are). Its answer, if any, is forwarded like any frame:
//                                  the other side hears what a real peer would (the gateway answers
//                                  a node.invoke.result it never asked for {ok:true, ignored:true})
//   The action may also be written as { type: "delay", ms: 200 } or "halfOpen".
//   once: the rule is spent after its first firing (it stays listed, active: false).
// Several rules matching one frame: the oldest active rule decides.

import { OPCODE_NAMES, type OpcodeName } from "./ws-frames.ts";

// ---------- the rule format ----------

export type Dir = "node->gw" | "gw->node";
export type { OpcodeName };

export interface TapMatch {
  kind?: "ws" | "http";
  dir?: Dir;
  /** Exact path, or a prefix when it ends with "*". */
  path?: string;
  conn?: string;
  opcode?: OpcodeName | number;
  method?: string;
  event?: string;
  command?: string;
  textIncludes?: string;
}

/** A close code the tap can act with: a sendable one (closeCodeProblem), or 1006 for "abort with no close frame". */
export type CloseCode = number;

/**
 * Why `code` is no close code the tap can act with, or undefined when it is one: 1000-1003 and
 * 1007-1014 (RFC 6455 section 7.4.1 and IANA's WebSocket close code registry: 1012 service
 * restart, 1013 try again later, 1014 bad gateway), 3000-4999 (libraries, applications), and
 * 1006, which is never sent on a wire: the tap aborts the sockets instead, and the receiver
 * reports 1006 itself. 1004, 1005 and 1015 are reserved: no peer may send them.
 */
export function closeCodeProblem(code: unknown): string | undefined {
  if (typeof code !== "number" || !Number.isInteger(code)) return `must be an integer close code (got ${JSON.stringify(code)})`;
  if (code === 1006 || (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) return undefined;
  const reserved = code === 1004 || code === 1005 || code === 1015 ? `${code} is reserved and never sent by a peer; ` : "";
  return `${reserved}${code} is not a close code the tap can act with: use 1000-1003, 1007-1014 or 3000-4999 (a close frame with that code), or 1006 (the sockets aborted, no close frame)`;
}
export type CloseSide = "node" | "gw" | "both";

/** Exactly one action (the tap also takes the shorthands above; the lab writes this form). */
export type TapAction =
  | { delay: { ms: number } }
  | { drop: { count?: number } }
  | { close: { code: CloseCode; side?: CloseSide; after?: boolean } }
  | { respond: { status: number } }
  | { notify: { url: string } }
  | { halfOpen: Record<string, never> }
  | { withholdPong: Record<string, never> }
  | { freeze: Record<string, never> }
  | { inject: { to: Side; text: string; before?: boolean } };

/** The side of a connection a written frame goes to. */
export type Side = "node" | "gw";

/** A rule as POST /rules takes it. */
export interface TapRuleSpec {
  id?: string;
  match?: TapMatch;
  action: TapAction;
  once?: boolean;
}

/** The match as stored: opcode as a number, unset fields left out. */
export type RuleMatch = Omit<TapMatch, "opcode"> & { opcode?: number };

/** The action as stored: its type, with defaults filled in. */
export type RuleAction =
  | { type: "delay"; ms: number }
  | { type: "drop"; count: number }
  | { type: "close"; code: CloseCode; side: CloseSide; after: boolean }
  | { type: "respond"; status: number }
  | { type: "notify"; url: string }
  | { type: "halfOpen" }
  | { type: "withholdPong" }
  | { type: "freeze" }
  | { type: "inject"; to: Side; text: string; before: boolean };
export type ActionType = RuleAction["type"];

/** A firing: seq of the trigger frame (or rule event for HTTP/immediate rules), its time, its
 * connection, and when the tap had carried out the action (acted; same clock as t: the frame
 * held, dropped, the sockets closed, the response written, the notify POST sent). */
export interface Firing {
  seq: number;
  t: number;
  conn: string | null;
  acted?: number;
}

/** A rule as the tap lists it. */
export interface TapRule {
  id: string;
  match: RuleMatch;
  action: RuleAction;
  once: boolean;
  active: boolean;
  createdAt: number;
  hits: number;
  firstFired: Firing | null;
  lastFired: Firing | null;
}

/** What a rule can match on: one WebSocket unit, or one HTTP request head (method, text = the head). */
export interface MatchFacts {
  seq: number;
  t: number;
  conn: string;
  path: string | null;
  dir: Dir;
  opcode?: number;
  text?: string;
  method?: string;
  event?: string;
  command?: string;
}

export interface Decision {
  rule: TapRule;
  action: RuleAction;
}

// ---------- validation ----------

export class RuleError extends Error {}

const MATCH_KEYS = new Set(["kind", "dir", "path", "conn", "opcode", "method", "event", "command", "textIncludes"]);
const ACTIONS = new Set(["delay", "drop", "close", "respond", "notify", "halfOpen", "withholdPong", "freeze", "inject"]);
/** The largest frame text a rule may write (a rule is a control API body). */
export const INJECT_MAX_TEXT = 1024 * 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === "object";

function normalizeAction(input: unknown): RuleAction {
  let a: Json;
  if (typeof input === "string") a = { [input]: {} };
  else if (isObject(input)) a = input;
  else throw new RuleError("action must be an object such as {\"delay\":{\"ms\":200}}");
  if (typeof a.type === "string") {
    const { type, ...params } = a;
    a = { [type as string]: params };
  }
  const keys = Object.keys(a);
  if (keys.length !== 1 || !ACTIONS.has(keys[0]!)) throw new RuleError(`action must have exactly one of ${[...ACTIONS].join(", ")}; got ${JSON.stringify(keys)}`);
  const type = keys[0] as ActionType;
  const p = a[type] === true || a[type] === null ? {} : a[type];
  if (typeof p !== "object") throw new RuleError(`action.${type} must be an object`);
  const params = p as Json;
  switch (type) {
    case "delay": {
      const ms = params.ms as number;
      if (!Number.isFinite(ms) || ms < 0) throw new RuleError("action.delay.ms must be a number >= 0");
      return { type, ms };
    }
    case "drop": {
      const count = (params.count ?? 1) as number;
      if (!Number.isInteger(count) || count < 1) throw new RuleError("action.drop.count must be an integer >= 1");
      return { type, count };
    }
    case "close": {
      const code = params.code as CloseCode;
      const bad = closeCodeProblem(code);
      if (bad) throw new RuleError(`action.close.code: ${bad}`);
      const side = (params.side ?? "both") as CloseSide;
      if (!["node", "gw", "both"].includes(side)) throw new RuleError("action.close.side must be node, gw or both");
      if (params.after !== undefined && typeof params.after !== "boolean") throw new RuleError("action.close.after must be true or false");
      return { type, code, side, after: params.after === true };
    }
    case "notify": {
      const url = params.url;
      if (typeof url !== "string" || !/^http:\/\/[^/\s]+(\/\S*)?$/.test(url)) throw new RuleError("action.notify.url must be an http:// URL (a helper on the lab network)");
      return { type, url };
    }
    case "respond": {
      const status = params.status as number;
      if (!Number.isInteger(status) || status < 200 || status > 599 || status === 101) throw new RuleError("action.respond.status must be an HTTP status from 200 to 599 (not 101)");
      return { type, status };
    }
    case "inject": {
      const { to, text, before } = params;
      if (to !== "node" && to !== "gw") throw new RuleError('action.inject.to must be "node" or "gw" (the side that receives the written frame)');
      if (typeof text !== "string" || text.length === 0) throw new RuleError("action.inject.text must be a non-empty string (the text frame to write)");
      if (Buffer.byteLength(text) > INJECT_MAX_TEXT) throw new RuleError(`action.inject.text is over ${INJECT_MAX_TEXT} bytes`);
      if (before !== undefined && typeof before !== "boolean") throw new RuleError("action.inject.before must be true or false");
      return { type, to, text, before: before === true };
    }
    default:
      return { type: type as "halfOpen" | "withholdPong" | "freeze" };
  }
}

function normalizeMatch(m: unknown): RuleMatch {
  if (m === undefined || m === null) return {};
  if (typeof m !== "object" || Array.isArray(m)) throw new RuleError("match must be an object");
  for (const k of Object.keys(m)) if (!MATCH_KEYS.has(k)) throw new RuleError(`unknown match field "${k}" (known: ${[...MATCH_KEYS].join(", ")})`);
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || v === null) continue;
    if (k === "opcode") {
      const op = typeof v === "number" ? v : OPCODE_NAMES[v as OpcodeName];
      if (op === undefined) throw new RuleError(`match.opcode: unknown opcode ${JSON.stringify(v)}`);
      out.opcode = op;
    } else if (typeof v !== "string") throw new RuleError(`match.${k} must be a string`);
    else out[k] = v;
  }
  const match = out as RuleMatch;
  if (match.kind && !["ws", "http"].includes(match.kind)) throw new RuleError('match.kind must be "ws" or "http"');
  if (match.dir && !["node->gw", "gw->node"].includes(match.dir)) throw new RuleError('match.dir must be "node->gw" or "gw->node"');
  return match;
}

const pathMatches = (want: string, path: string | null) => (want.endsWith("*") ? (path ?? "").startsWith(want.slice(0, -1)) : path === want);

// ---------- the rule book ----------

export class RuleBook {
  #rules = new Map<string, TapRule>();
  #n = 0;
  /** "conn|dir" -> frames still to drop after a drop{count>1} fired. */
  #drops = new Map<string, { rule: string; remaining: number }>();

  /** Validates and adds a rule (a parsed POST /rules body); returns the stored rule. */
  add(body: unknown): TapRule {
    if (!isObject(body)) throw new RuleError("rule must be a JSON object");
    const id = body.id === undefined ? `r${++this.#n}` : String(body.id);
    if (!id) throw new RuleError("rule id must not be empty");
    if (this.#rules.has(id)) throw new RuleError(`rule "${id}" exists; DELETE /rules/${id} first`);
    const match = normalizeMatch(body.match);
    const action = normalizeAction(body.action);
    if (match.kind === "http" && (action.type === "drop" || action.type === "withholdPong" || action.type === "inject")) {
      throw new RuleError(`action ${action.type} applies to WebSocket frames only (match.kind "http")`);
    }
    if (match.kind !== "http" && action.type === "respond") throw new RuleError('action respond applies to HTTP requests only (match.kind "http")');
    if (match.kind === "http" && action.type === "close" && action.after) throw new RuleError('action close.after applies to WebSocket frames only (an HTTP rule decides before the request is forwarded)');
    const rule: TapRule = {
      id,
      match,
      action,
      once: body.once === true,
      active: true,
      createdAt: Date.now(),
      hits: 0,
      firstFired: null,
      lastFired: null,
    };
    this.#rules.set(id, rule);
    return rule;
  }

  list(): TapRule[] {
    return [...this.#rules.values()];
  }

  get(id: string): TapRule | undefined {
    return this.#rules.get(id);
  }

  remove(id: string): TapRule | undefined {
    const r = this.#rules.get(id);
    if (!r) return undefined;
    this.#rules.delete(id);
    for (const [k, d] of this.#drops) if (d.rule === id) this.#drops.delete(k);
    return r;
  }

  clear(): TapRule[] {
    const all = this.list();
    this.#rules.clear();
    this.#drops.clear();
    return all;
  }

  /** Records a firing (trigger seq, time, connection) and spends a once-rule. */
  fired(rule: TapRule, at: { seq: number; t: number; conn?: string | null }): void {
    rule.hits++;
    const f = { seq: at.seq, t: at.t, conn: at.conn ?? null };
    rule.firstFired ??= f;
    rule.lastFired = f;
    if (rule.once) rule.active = false;
  }

  /** The tap carried out the action of `rule`'s latest firing at time t (kept once per firing). */
  acted(rule: TapRule, t: number): void {
    if (rule.lastFired) rule.lastFired.acted ??= t;
  }

  /** A freeze with an empty match acts when added; returns true when `rule` is one. */
  immediate(rule: TapRule): boolean {
    return rule.action.type === "freeze" && Object.keys(rule.match).length === 0;
  }

  #matches(m: RuleMatch, x: MatchFacts, kind: "ws" | "http"): boolean {
    if ((m.kind ?? "ws") !== kind) return false;
    if (m.dir && m.dir !== x.dir) return false;
    if (m.conn && m.conn !== x.conn) return false;
    if (m.path && !pathMatches(m.path, x.path)) return false;
    if (m.opcode !== undefined && m.opcode !== x.opcode) return false;
    if (m.method && m.method !== x.method) return false;
    if (m.event && m.event !== x.event) return false;
    if (m.command && m.command !== x.command) return false;
    if (m.textIncludes && !(typeof x.text === "string" && x.text.includes(m.textIncludes))) return false;
    return true;
  }

  /** Decides what happens to one WebSocket unit (a control frame or a whole message): null = forward. */
  decideFrame(f: MatchFacts): Decision | null {
    const key = `${f.conn}|${f.dir}`;
    const pending = this.#drops.get(key);
    if (pending) {
      if (--pending.remaining <= 0) this.#drops.delete(key);
      const rule = this.#rules.get(pending.rule);
      if (rule) return { rule, action: rule.action };
    }
    for (const rule of this.#rules.values()) {
      if (!rule.active) continue;
      if (rule.action.type === "withholdPong" && f.opcode !== 0xa) continue;
      if (!this.#matches(rule.match, f, "ws")) continue;
      this.fired(rule, f);
      if (rule.action.type === "drop" && rule.action.count > 1) this.#drops.set(key, { rule: rule.id, remaining: rule.action.count - 1 });
      return { rule, action: rule.action };
    }
    return null;
  }

  /** Same for an HTTP request head (method, text = the whole head). */
  decideHttp(h: MatchFacts): Decision | null {
    for (const rule of this.#rules.values()) {
      if (!rule.active || !this.#matches(rule.match, h, "http")) continue;
      this.fired(rule, h);
      return { rule, action: rule.action };
    }
    return null;
  }

  /** Forgets per-connection state of a closed connection. */
  forgetConn(conn: string): void {
    for (const k of this.#drops.keys()) if (k.startsWith(`${conn}|`)) this.#drops.delete(k);
  }
}
