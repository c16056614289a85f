// The tap's control API (JSON over HTTP): read what was recorded, add and remove fault rules,
// heal. Kept apart from the proxy port so lab traffic and control traffic never mix.
// Every route, with its query, body and reply, is in wire.ts (TapControlApi):
//
//   GET    /healthz                          {ok, listen, upstream, seq, connections, rules, frozen}
//   GET    /frames?since=&conn=&match=&limit= WebSocket frames with seq > since (match: substring
//                                             of text, method, event, command or replyTo)
//   GET    /http?since=&conn=                 HTTP exchanges
//   GET    /events?since=                     everything (frames, http, connection and rule events)
//   GET    /connections                       every open and recently closed connection
//   POST   /reset                             heal, drop all rules, forget records (seq goes on)
//   POST   /rules                             add a rule (see rules.ts) -> {ok, rule}
//   GET    /rules                             rules with hits, firstFired {seq, t, conn}, lastFired
//   DELETE /rules/<id>                        remove one rule and undo its half-open/freeze
//   DELETE /rules                             heal all: remove every rule, resume held
//                                             connections, deliver delayed frames now, end what a
//                                             close fault left half open

import http from "node:http";
import { RuleError, type RuleBook } from "./rules.ts";
import { nowMs, type Recorder } from "./recorder.ts";
import type { Proxy } from "./proxy.ts";
import type { TapControlApi } from "./wire.ts";

const MAX_BODY = 1024 * 1024;

/** A route answered with another status than 200 (404 for a rule that is not there). */
class ControlError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  let size = 0;
  const parts: Buffer[] = [];
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

const num = (v: string | null) => (v === null || v === "" ? undefined : Number.isFinite(Number(v)) ? Number(v) : undefined);

type Reply<K extends keyof TapControlApi> = TapControlApi[K]["reply"];
interface Call {
  req: http.IncomingMessage;
  query: URLSearchParams;
  /** The ":id" segment, decoded. */
  id: string;
}
/** One handler per route of TapControlApi: a route missing here, or a reply of the wrong shape, does not compile. */
type Handlers = { [K in keyof TapControlApi]: (call: Call) => Reply<K> | Promise<Reply<K>> };

export function createControl({ proxy, recorder, rules, info }: { proxy: Proxy; recorder: Recorder; rules: RuleBook; info: { listen: string; upstream: string; control?: string } }): http.Server {
  const removeAll = () => {
    const removed = rules.clear().map((r) => r.id);
    const healed = proxy.heal();
    recorder.record("rule", { event: "healed", removed, ...healed });
    return { removed, healed };
  };

  const handlers: Handlers = {
    "GET /healthz": () => {
      const open = proxy.connections().filter((c) => c.state !== "closed").length;
      return { ok: true, ...info, seq: recorder.seq, connections: open, rules: rules.list().length, frozen: proxy.frozenBy.size > 0 };
    },
    "GET /frames": ({ query: q }) => {
      const frames = recorder.frames({ since: num(q.get("since")), conn: q.get("conn") || undefined, match: q.get("match") || undefined, limit: num(q.get("limit")) });
      return { frames, seq: recorder.seq };
    },
    "GET /http": ({ query: q }) => ({ http: recorder.http({ since: num(q.get("since")), conn: q.get("conn") || undefined }), seq: recorder.seq }),
    "GET /events": ({ query: q }) => ({ events: recorder.all({ since: num(q.get("since")) }), seq: recorder.seq }),
    "GET /connections": () => ({ connections: proxy.connections() }),
    "POST /reset": () => {
      const { removed, healed } = removeAll();
      recorder.clear();
      return { ok: true, removed, healed, seq: recorder.seq };
    },
    "GET /rules": () => ({ rules: rules.list() }),
    "POST /rules": async ({ req }) => {
      const rule = rules.add(await readJson(req));
      recorder.record("rule", { event: "added", id: rule.id, match: rule.match, action: rule.action, once: rule.once });
      if (rules.immediate(rule)) {
        const t = nowMs();
        rules.fired(rule, { seq: recorder.seq + 1, t, conn: null });
        recorder.record("rule", { t, event: "fired", id: rule.id, action: rule.action.type, conn: null, trigger: "added" });
        proxy.freeze(rule.id);
        rules.acted(rule, nowMs());
      }
      return { ok: true, rule };
    },
    "DELETE /rules": () => ({ ok: true, ...removeAll() }),
    "DELETE /rules/:id": ({ id }) => {
      const rule = rules.remove(id);
      if (!rule) throw new ControlError(404, `no rule "${id}"`);
      const released = proxy.release(id);
      recorder.record("rule", { event: "removed", id, ...released });
      return { ok: true, rule, released };
    },
  };

  const routes = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
    const p = url.pathname.replace(/\/+$/, "") || "/";
    const m = req.method;
    let route = `${m} ${p}`;
    let id = "";
    if (m === "DELETE" && p.startsWith("/rules/")) {
      route = "DELETE /rules/:id";
      id = decodeURIComponent(p.slice("/rules/".length));
    }
    if (!Object.hasOwn(handlers, route)) return send(res, 404, { ok: false, error: `no route ${m} ${p}` });
    try {
      const reply = await handlers[route as keyof Handlers]({ req, query: url.searchParams, id });
      return send(res, route === "POST /rules" ? 201 : 200, reply);
    } catch (e) {
      if (e instanceof ControlError) return send(res, e.status, { ok: false, error: e.message });
      throw e;
    }
  };

  return http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://tap");
    routes(req, res, url).catch((e: Error) => send(res, e instanceof RuleError ? 400 : 500, { ok: false, error: e.message }));
  });
}
