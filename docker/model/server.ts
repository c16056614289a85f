// fleetlab scripted model provider: an OpenAI Responses API server driven by JSON scripts.
//
// Dependency-free (node: builtins only) so the model image needs nothing but a Node binary.
// Run: node server.ts   env MODEL_PORT (8080), MODEL_HOST (0.0.0.0), MODEL_SCRIPTS (/fixtures/model),
//      MODEL_DEFAULT_SCRIPT (see script.ts), MODEL_IDS (comma list for GET /v1/models, default "scripted"),
//      MODEL_MAX_RECORDS (5000).
//
// Speaks: POST /v1/responses (stream:true -> SSE as OpenAI emits it; otherwise one JSON response),
//         GET /v1/models, GET /v1/models/<id>. Anything else under /v1 is answered 404 and recorded,
//         so a scenario can see what the system under test tried to call.
// Modules: script.ts (the script format, matching, templates), request-facts.ts (what a rule
// matches on), responses-stream.ts (the answer, streamed), state.ts (rules, records, holds),
// control.ts (control API), wire.ts (what the control API takes and answers, shared with
// lab/clients/model.ts), io.ts (JSON replies, logs).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { ModelState } from "./state.ts";
import { handleResponses } from "./responses-stream.ts";
import { createControl, health } from "./control.ts";
import { log, readBody, sendJson } from "./io.ts";

const PORT = Number(process.env.MODEL_PORT ?? 8080);
const HOST = process.env.MODEL_HOST ?? "0.0.0.0";
const SCRIPTS_DIR = process.env.MODEL_SCRIPTS ?? "/fixtures/model";
const DEFAULT_SCRIPT = process.env.MODEL_DEFAULT_SCRIPT ?? "";
const MODEL_IDS = (process.env.MODEL_IDS ?? "scripted").split(",").map((s) => s.trim()).filter(Boolean);
const MAX_RECORDS = Number(process.env.MODEL_MAX_RECORDS ?? 5000);

const state = new ModelState({ scriptsDir: SCRIPTS_DIR, defaultScript: DEFAULT_SCRIPT, maxRecords: MAX_RECORDS });
const control = createControl(state);

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  try {
    if (url.pathname === "/healthz") return sendJson(res, 200, health(state));
    if (url.pathname.startsWith("/_control/")) return await control(req, res, url);

    const method = req.method ?? "GET";
    const rawBody = method === "GET" || method === "HEAD" ? "" : await readBody(req);
    const seq = ++state.seq;
    const rec = state.addRecord({
      id: `req-${seq}`,
      seq,
      time: new Date().toISOString(),
      method,
      path: url.pathname,
      model: null,
      stream: false,
      rule: null,
      status: "pending",
      httpStatus: null,
      endedAt: null,
      events: 0,
      output: [],
      bodyBytes: Buffer.byteLength(rawBody),
      body: null,
      rawBody,
      headers: { "user-agent": req.headers["user-agent"] ?? null, "x-client-request-id": (req.headers["x-client-request-id"] as string | undefined) ?? null },
    });
    log(`${rec.id} ${method} ${url.pathname} ${rec.bodyBytes}B`);
    const p = url.pathname.replace(/\/+$/, "");

    if (method === "POST" && p.endsWith("/responses")) return await handleResponses(res, rec, state, MODEL_IDS);

    delete rec.rawBody;
    if (rawBody) {
      try {
        rec.body = JSON.parse(rawBody);
      } catch {
        rec.body = rawBody;
      }
    }
    const finish = (status: number, obj: unknown) => {
      rec.status = status < 400 ? "completed" : "failed";
      rec.httpStatus = status;
      rec.endedAt = new Date().toISOString();
      sendJson(res, status, obj);
    };
    const model = (id: string) => ({ id, object: "model", created: 1700000000, owned_by: "fleetlab" });
    if (method === "GET" && p.endsWith("/models")) return finish(200, { object: "list", data: MODEL_IDS.map(model) });
    const m = /\/models\/([^/]+)$/.exec(p);
    if (method === "GET" && m) {
      const id = decodeURIComponent(m[1]!);
      return MODEL_IDS.includes(id) ? finish(200, model(id)) : finish(404, { error: { message: `model ${id} not found`, type: "invalid_request_error" } });
    }
    return finish(404, { error: { message: `fleetlab model: no route ${method} ${url.pathname}`, type: "invalid_request_error" } });
  } catch (e) {
    log("handler error", e);
    if (!res.headersSent) sendJson(res, 500, { error: { message: String((e as Error)?.message ?? e), type: "server_error" } });
    else res.destroy();
  }
});

// Streams may be held for minutes: no server-side timeouts.
server.requestTimeout = 0;
server.headersTimeout = 0;
server.keepAliveTimeout = 65_000;

state.rules = state.loadScripts();
server.listen(PORT, HOST, () => log(`fleetlab model listening on ${HOST}:${(server.address() as AddressInfo).port}, ${state.rules.length} rules from ${SCRIPTS_DIR}`));

const stop = () => {
  state.releaseHeld();
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
