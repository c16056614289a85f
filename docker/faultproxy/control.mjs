// The tap's control API (JSON over HTTP): read what was recorded, add and remove fault rules,
// heal. Kept apart from the proxy port so lab traffic and control traffic never mix.
//
//   GET    /healthz                          {ok, listen, upstream, seq, connections, rules, frozen}
//   GET    /frames?since=&conn=&match=&limit= WebSocket frames with seq > since (match: substring
//                                             of text, method, event, command or replyTo)
//   GET    /http?since=&conn=                 HTTP exchanges
//   GET    /events?since=                     everything (frames, http, connection and rule events)
//   GET    /connections                       every open and recently closed connection
//   POST   /reset                             heal, drop all rules, forget records (seq goes on)
//   POST   /rules                             add a rule (see rules.mjs) -> {ok, rule}
//   GET    /rules                             rules with hits, firstFired {seq, t, conn}, lastFired
//   DELETE /rules/<id>                        remove one rule and undo its half-open/freeze
//   DELETE /rules                             heal all: remove every rule, resume held
//                                             connections, deliver delayed frames now, end what a
//                                             close fault left half open

import http from "node:http";
import { RuleError } from "./rules.mjs";
import { nowMs } from "./recorder.mjs";

const MAX_BODY = 1024 * 1024;

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req) {
  let size = 0;
  const parts = [];
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) throw new RuleError("request body too large");
    parts.push(c);
  }
  const text = Buffer.concat(parts).toString("utf8").trim();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new RuleError("request body is not JSON");
  }
}

const num = (v) => (v === null || v === "" ? undefined : Number.isFinite(Number(v)) ? Number(v) : undefined);

export function createControl({ proxy, recorder, rules, info }) {
  const removeAll = () => {
    const removed = rules.clear().map((r) => r.id);
    const healed = proxy.heal();
    recorder.record("rule", { event: "healed", removed, ...healed });
    return { removed, healed };
  };

  const routes = async (req, res, url) => {
    const p = url.pathname.replace(/\/+$/, "") || "/";
    const q = url.searchParams;
    const m = req.method;
    if (m === "GET" && p === "/healthz") {
      const open = proxy.connections().filter((c) => c.state !== "closed").length;
      return send(res, 200, { ok: true, ...info, seq: recorder.seq, connections: open, rules: rules.list().length, frozen: proxy.frozenBy.size > 0 });
    }
    if (m === "GET" && p === "/frames") {
      const frames = recorder.frames({ since: num(q.get("since")), conn: q.get("conn") || undefined, match: q.get("match") || undefined, limit: num(q.get("limit")) });
      return send(res, 200, { frames, seq: recorder.seq });
    }
    if (m === "GET" && p === "/http") return send(res, 200, { http: recorder.http({ since: num(q.get("since")), conn: q.get("conn") || undefined }), seq: recorder.seq });
    if (m === "GET" && p === "/events") return send(res, 200, { events: recorder.all({ since: num(q.get("since")) }), seq: recorder.seq });
    if (m === "GET" && p === "/connections") return send(res, 200, { connections: proxy.connections() });
    if (m === "POST" && p === "/reset") {
      const { removed, healed } = removeAll();
      recorder.clear();
      return send(res, 200, { ok: true, removed, healed, seq: recorder.seq });
    }
    if (m === "GET" && p === "/rules") return send(res, 200, { rules: rules.list() });
    if (m === "POST" && p === "/rules") {
      const rule = rules.add(await readJson(req));
      recorder.record("rule", { event: "added", id: rule.id, match: rule.match, action: rule.action, once: rule.once });
      if (rules.immediate(rule)) {
        const t = nowMs();
        rules.fired(rule, { seq: recorder.seq + 1, t, conn: null });
        recorder.record("rule", { t, event: "fired", id: rule.id, action: rule.action.type, conn: null, trigger: "added" });
        proxy.freeze(rule.id);
      }
      return send(res, 201, { ok: true, rule });
    }
    if (m === "DELETE" && p === "/rules") return send(res, 200, { ok: true, ...removeAll() });
    if (m === "DELETE" && p.startsWith("/rules/")) {
      const id = decodeURIComponent(p.slice("/rules/".length));
      const rule = rules.remove(id);
      if (!rule) return send(res, 404, { ok: false, error: `no rule "${id}"` });
      const released = proxy.release(id);
      recorder.record("rule", { event: "removed", id, ...released });
      return send(res, 200, { ok: true, rule, released });
    }
    return send(res, 404, { ok: false, error: `no route ${m} ${p}` });
  };

  return http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://tap");
    routes(req, res, url).catch((e) => send(res, e instanceof RuleError ? 400 : 500, { ok: false, error: e.message }));
  });
}
