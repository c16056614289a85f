// The model's control API (JSON): script answers, arm holds and failures, release held streams,
// read back every request. Every route, with its body and reply, is in wire.ts (ModelControlApi):
//
//   GET  /healthz
//   GET  /_control/requests[?since=seq]  every request received (body incl. tools, rule, status)
//   POST /_control/reset     reload scripts, clear records/holds/fails, release held streams
//                            (request seq keeps counting, so ?since= stays meaningful)
//   GET  /_control/script    current rules
//   POST /_control/script    {rules | script: "file", mode: "prepend" (default) | "append" | "replace"}
//   POST /_control/hold      {match, afterDeltas = 1, count = 1}: the next matching response is held
//                            after that many deltas (0 = right after response.created; before
//                            response.completed if it has fewer)
//   POST /_control/release   {id?} release one held request, or all
//   POST /_control/fail      {match, status = 500, count = 1, body?}: answer the next matching
//                            requests with that HTTP error
//   GET  /_control/held      held requests
//   GET  /_control/armed     armed holds and failures
// A control "match" has the rule match keys, or is a plain string (= contains).

import type http from "node:http";
import { ScriptError, loadScriptFile, validateMatch, validateRules } from "./script.ts";
import { rid, type ModelState, type StoredRequest } from "./state.ts";
import type { ModelControlApi, ModelHealth, ModelRequest } from "./wire.ts";
import { readBody, sendJson } from "./io.ts";

type Route = keyof ModelControlApi;
type BodyOf<K extends Route> = ModelControlApi[K] extends { body: infer B } ? Partial<B> : Record<string, never>;
type Reply<K extends Route> = ModelControlApi[K]["reply"];
/** One handler per /_control route: a route missing here, or a reply of the wrong shape, does not compile. */
type Handlers = { [K in Exclude<Route, "GET /healthz">]: (input: BodyOf<K>, url: URL) => Reply<K> };

function publicRecord(r: StoredRequest): ModelRequest {
  const { rawBody, ...rest } = r;
  return rest;
}

export function health(state: ModelState): ModelHealth {
  return { ok: true, rules: state.rules.length, held: state.held.size, requests: state.records.length };
}

export function createControl(state: ModelState): (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> {
  const handlers: Handlers = {
    "GET /_control/requests": (_, url) => {
      const since = Number(url.searchParams.get("since") ?? 0);
      return { requests: state.records.filter((r) => r.seq > since).map(publicRecord) };
    },
    "POST /_control/reset": () => ({ ok: true, released: state.reset(), rules: state.rules.length }),
    "GET /_control/script": () => ({ rules: state.rules }),
    "POST /_control/script": (input) => {
      const { script, rules, mode = "prepend" } = input as { script?: unknown; rules?: unknown; mode?: string };
      const added = typeof script === "string" ? loadScriptFile(state.scriptsDir, script) : validateRules(rules ?? input, "control");
      if (mode === "replace") state.rules = added;
      else if (mode === "append") state.rules = [...state.rules, ...added];
      else if (mode === "prepend") state.rules = [...added, ...state.rules];
      else throw new ScriptError(`unknown mode ${mode}`);
      for (const r of added) state.ruleUses.delete(r.id);
      return { ok: true, rules: state.rules.map((r) => r.id) };
    },
    "POST /_control/hold": (input) => {
      const a = { id: rid("hold"), match: validateMatch(input.match, "hold"), afterDeltas: input.afterDeltas ?? 1, remaining: input.count ?? 1 };
      state.holds.push(a);
      return { ok: true, armed: a };
    },
    "POST /_control/release": (input) => ({ ok: true, released: state.releaseHeld(input.id) }),
    "POST /_control/fail": (input) => {
      const a = { id: rid("fail"), match: validateMatch(input.match, "fail"), status: input.status ?? 500, body: input.body, remaining: input.count ?? 1 };
      state.fails.push(a);
      return { ok: true, armed: a };
    },
    "GET /_control/held": () => ({
      held: [...state.held.values()].map(({ record: r }) => ({ id: r.id, seq: r.seq, path: r.path, model: r.model, rule: r.rule, heldAt: r.heldAt!, reason: r.holdReason!, userText: r.userText!, round: r.round!, streamedText: r.streamedText ?? "" })),
    }),
    "GET /_control/armed": () => ({ holds: state.holds, fails: state.fails }),
  };

  return async (req, res, url) => {
    const route = `${req.method} ${url.pathname}`;
    let input: unknown = {};
    if (req.method === "POST") {
      const raw = await readBody(req);
      try {
        input = raw ? JSON.parse(raw) : {};
      } catch {
        return sendJson(res, 400, { error: "invalid JSON" });
      }
    }
    if (!Object.hasOwn(handlers, route)) return sendJson(res, 404, { error: `no control route ${route}` });
    try {
      // The body is taken as its route's type says; script.ts checks rules and matches by hand.
      const handle = handlers[route as keyof Handlers] as (input: unknown, url: URL) => unknown;
      return sendJson(res, 200, handle(input, url));
    } catch (e) {
      if (e instanceof ScriptError) return sendJson(res, 400, { error: e.message });
      throw e;
    }
  };
}
