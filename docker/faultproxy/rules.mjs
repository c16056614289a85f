// Fault rules: what the tap should do to traffic, decided frame by frame. This module only
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
//     { close: { code, side } }    code 1001|1011: the tap sends a close frame with that code to
//                                  `side` ("node" | "gw" | "both") and ends those sockets;
//                                  1006: aborts those sockets with no close frame. Nothing more is
//                                  forwarded on the connection; a side not named stays open and
//                                  hears nothing (it finds out by its own timeouts, or on heal)
//     { halfOpen: {} }             stop forwarding both ways on that connection, sockets stay
//                                  open; what arrives is recorded and held, delivered on heal
//     { withholdPong: {} }         drop matching pong frames (give `dir` = the side whose pongs
//                                  are withheld); only pong frames are considered
//     { freeze: {} }               halfOpen for every connection, new ones included (a new
//                                  connection still reaches the gateway at TCP level, but no
//                                  byte passes); with an empty match it takes effect when the
//                                  rule is added
//   The action may also be written as { type: "delay", ms: 200 } or "halfOpen".
//   once: the rule is spent after its first firing (it stays listed, active: false).
// Several rules matching one frame: the oldest active rule decides.

import { OPCODE_NAMES } from "./ws-frames.mjs";

export class RuleError extends Error {}

const MATCH_KEYS = new Set(["kind", "dir", "path", "conn", "opcode", "method", "event", "command", "textIncludes"]);
const ACTIONS = new Set(["delay", "drop", "close", "halfOpen", "withholdPong", "freeze"]);

function normalizeAction(a) {
  if (typeof a === "string") a = { [a]: {} };
  if (!a || typeof a !== "object") throw new RuleError("action must be an object such as {\"delay\":{\"ms\":200}}");
  if (typeof a.type === "string") {
    const { type, ...params } = a;
    a = { [type]: params };
  }
  const keys = Object.keys(a);
  if (keys.length !== 1 || !ACTIONS.has(keys[0])) throw new RuleError(`action must have exactly one of ${[...ACTIONS].join(", ")}; got ${JSON.stringify(keys)}`);
  const type = keys[0];
  const p = a[type] === true || a[type] === null ? {} : a[type];
  if (typeof p !== "object") throw new RuleError(`action.${type} must be an object`);
  switch (type) {
    case "delay":
      if (!Number.isFinite(p.ms) || p.ms < 0) throw new RuleError("action.delay.ms must be a number >= 0");
      return { type, ms: p.ms };
    case "drop": {
      const count = p.count ?? 1;
      if (!Number.isInteger(count) || count < 1) throw new RuleError("action.drop.count must be an integer >= 1");
      return { type, count };
    }
    case "close": {
      if (![1001, 1006, 1011].includes(p.code)) throw new RuleError("action.close.code must be 1001, 1006 or 1011");
      const side = p.side ?? "both";
      if (!["node", "gw", "both"].includes(side)) throw new RuleError("action.close.side must be node, gw or both");
      return { type, code: p.code, side };
    }
    default:
      return { type };
  }
}

function normalizeMatch(m) {
  if (m === undefined || m === null) return {};
  if (typeof m !== "object" || Array.isArray(m)) throw new RuleError("match must be an object");
  for (const k of Object.keys(m)) if (!MATCH_KEYS.has(k)) throw new RuleError(`unknown match field "${k}" (known: ${[...MATCH_KEYS].join(", ")})`);
  const out = {};
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || v === null) continue;
    if (k === "opcode") {
      const op = typeof v === "number" ? v : OPCODE_NAMES[v];
      if (op === undefined) throw new RuleError(`match.opcode: unknown opcode ${JSON.stringify(v)}`);
      out.opcode = op;
    } else if (typeof v !== "string") throw new RuleError(`match.${k} must be a string`);
    else out[k] = v;
  }
  if (out.kind && !["ws", "http"].includes(out.kind)) throw new RuleError('match.kind must be "ws" or "http"');
  if (out.dir && !["node->gw", "gw->node"].includes(out.dir)) throw new RuleError('match.dir must be "node->gw" or "gw->node"');
  return out;
}

const pathMatches = (want, path) => (want.endsWith("*") ? (path ?? "").startsWith(want.slice(0, -1)) : path === want);

export class RuleBook {
  #rules = new Map();
  #n = 0;
  /** "conn|dir" -> { rule, remaining }: frames still to drop after a drop{count>1} fired. */
  #drops = new Map();

  /** Validates and adds a rule; returns the stored rule. */
  add(body) {
    if (!body || typeof body !== "object") throw new RuleError("rule must be a JSON object");
    const id = body.id === undefined ? `r${++this.#n}` : String(body.id);
    if (!id) throw new RuleError("rule id must not be empty");
    if (this.#rules.has(id)) throw new RuleError(`rule "${id}" exists; DELETE /rules/${id} first`);
    const match = normalizeMatch(body.match);
    const action = normalizeAction(body.action);
    if (match.kind === "http" && ["drop", "withholdPong"].includes(action.type)) {
      throw new RuleError(`action ${action.type} applies to WebSocket frames only (match.kind "http")`);
    }
    const rule = {
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

  list() {
    return [...this.#rules.values()];
  }

  get(id) {
    return this.#rules.get(id);
  }

  remove(id) {
    const r = this.#rules.get(id);
    if (!r) return undefined;
    this.#rules.delete(id);
    for (const [k, d] of this.#drops) if (d.rule === id) this.#drops.delete(k);
    return r;
  }

  clear() {
    const all = this.list();
    this.#rules.clear();
    this.#drops.clear();
    return all;
  }

  /** Records a firing (trigger seq, time, connection) and spends a once-rule. */
  fired(rule, at) {
    rule.hits++;
    const f = { seq: at.seq, t: at.t, conn: at.conn ?? null };
    rule.firstFired ??= f;
    rule.lastFired = f;
    if (rule.once) rule.active = false;
  }

  /** A freeze with an empty match acts when added; returns true when `rule` is one. */
  immediate(rule) {
    return rule.action.type === "freeze" && Object.keys(rule.match).length === 0;
  }

  #matches(m, x, kind) {
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

  /**
   * Decides what happens to one WebSocket unit (a control frame or a whole message).
   * f: { seq, t, conn, path, dir, opcode, text?, method?, event?, command? }
   * Returns null (forward) or { rule, action }.
   */
  decideFrame(f) {
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

  /** Same for an HTTP request head. h: { seq, t, conn, path, dir, method, text } */
  decideHttp(h) {
    for (const rule of this.#rules.values()) {
      if (!rule.active || !this.#matches(rule.match, h, "http")) continue;
      this.fired(rule, h);
      return { rule, action: rule.action };
    }
    return null;
  }

  /** Forgets per-connection state of a closed connection. */
  forgetConn(conn) {
    for (const k of this.#drops.keys()) if (k.startsWith(`${conn}|`)) this.#drops.delete(k);
  }
}
