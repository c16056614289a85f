// fleetlab scripted model provider: an OpenAI Responses API server driven by JSON scripts.
//
// Dependency-free (node: builtins only) so the model image needs nothing but a Node binary.
// Run: node server.mjs   env MODEL_PORT (8080), MODEL_HOST (0.0.0.0), MODEL_SCRIPTS (/fixtures/model),
//      MODEL_DEFAULT_SCRIPT (see Scripts), MODEL_IDS (comma list for GET /v1/models, default "scripted").
//
// Speaks: POST /v1/responses (stream:true -> SSE as OpenAI emits it; otherwise one JSON response),
//         GET /v1/models, GET /v1/models/<id>. Anything else under /v1 is answered 404 and recorded,
//         so a scenario can see what the system under test tried to call.
//
// Scripts: each *.json in MODEL_SCRIPTS holds {"rules":[...]} or a bare array. At start and on reset
// the rules of MODEL_DEFAULT_SCRIPT (a file name without .json) are loaded, or of every file by name
// when it is unset; POST /_control/script {script: "name"} loads another file at run time.
// For each /v1/responses request the first matching rule answers. A rule:
//   { "id": "name",
//     "match": {                    all given conditions must hold; omit for "any request"
//       "contains": "text" | ["a","b"],  substring(s) of the latest user message text (OpenClaw's
//                                   internal-context blocks and carrier messages are skipped)
//       "regex": "pattern", "flags": "i", regex on the same text; groups feed {{match.N}} templates
//       "round": 0,                 tool round = function_call_output items after the latest user message
//       "hasToolOutput": true,      round > 0
//       "userTurn": 1,              number of user messages in the input
//       "model": "scripted",        request body model
//       "tool": "read" },           the request's tools array offers this function name
//     "times": 2,                   optional: the rule is spent after answering N requests
//     "chunkDelayMs": 0,            optional pause between SSE deltas
//     "reply": [steps...],          answer for every round, or
//     "rounds": [[steps...], ...] } answer for round i (the last entry repeats)
// Steps, emitted in order (a response may mix them):
//   { "text": "hello {{firstWords}}", "chunks": 3, "holdAfter": 2 }  assistant message, streamed in
//                                   N deltas; holdAfter: hold after that many deltas
//   { "toolCall": { "name": "read", "arguments": {"path":"a"} }, "chunks": 2 }  function_call item
//   { "hold": true }                stop sending (headers sent) until POST /_control/release
//   { "delayMs": 500 }              pause (before the first byte if it is the first step)
//   { "fail": { "status": 500, "body": {...}, "message": "..." } }  first step: HTTP error reply;
//                                   after streaming started: a response.failed event, then end
//   { "drop": true }                destroy the connection without a terminal event
// Templates in text and argument strings: {{userText}} {{message}} (userText minus OpenClaw's
// leading "[...]" envelopes such as the timestamp) {{firstWords}} (of message) {{toolOutput}} (latest
// function_call_output, max 200 chars) {{toolName}} {{round}} {{requestId}} {{match.N}} {{match.name}}.
//
// Control API (JSON):
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
// A control "match" has the rule match keys, or is a plain string (= contains).
// Request status: pending | streaming | held | completed | failed | aborted (client went away first).

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";

const PORT = Number(process.env.MODEL_PORT ?? 8080);
const HOST = process.env.MODEL_HOST ?? "0.0.0.0";
const SCRIPTS_DIR = process.env.MODEL_SCRIPTS ?? "/fixtures/model";
const DEFAULT_SCRIPT = process.env.MODEL_DEFAULT_SCRIPT ?? "";
const MODEL_IDS = (process.env.MODEL_IDS ?? "scripted").split(",").map((s) => s.trim()).filter(Boolean);
const MAX_RECORDS = Number(process.env.MODEL_MAX_RECORDS ?? 5000);

// ---------- state ----------
let rules = [];
let records = [];
let seq = 0;
let holds = []; // armed by /_control/hold: {match, afterDeltas, remaining}
let fails = []; // armed by /_control/fail: {match, status, body, remaining}
const held = new Map(); // request id -> {record, release(aborted:boolean)}
const ruleUses = new Map(); // rule id -> answered count (for "times")

const log = (...a) => console.log(new Date().toISOString(), ...a);

// ---------- scripts ----------
class ScriptError extends Error {}

function validateMatch(m, where) {
  if (m === undefined || m === null) return {};
  if (typeof m === "string") return { contains: m };
  if (typeof m !== "object" || Array.isArray(m)) throw new ScriptError(`${where}: match must be an object or string`);
  const known = ["contains", "regex", "flags", "round", "hasToolOutput", "userTurn", "model", "tool"];
  for (const k of Object.keys(m)) if (!known.includes(k)) throw new ScriptError(`${where}: unknown match key "${k}"`);
  if (m.regex !== undefined) {
    try {
      new RegExp(m.regex, m.flags ?? "");
    } catch (e) {
      throw new ScriptError(`${where}: bad regex: ${e.message}`);
    }
  }
  return m;
}

function validateSteps(steps, where) {
  if (!Array.isArray(steps)) throw new ScriptError(`${where}: steps must be an array`);
  steps.forEach((s, i) => {
    const w = `${where}[${i}]`;
    if (!s || typeof s !== "object") throw new ScriptError(`${w}: step must be an object`);
    const kinds = ["text", "toolCall", "hold", "delayMs", "fail", "drop"].filter((k) => k in s);
    if (kinds.length !== 1) throw new ScriptError(`${w}: step needs exactly one of text|toolCall|hold|delayMs|fail|drop`);
    if ("text" in s && typeof s.text !== "string") throw new ScriptError(`${w}: text must be a string`);
    if ("toolCall" in s && (typeof s.toolCall?.name !== "string" || !s.toolCall.name))
      throw new ScriptError(`${w}: toolCall.name must be a non-empty string`);
    if ("fail" in s && typeof s.fail !== "object") throw new ScriptError(`${w}: fail must be an object`);
  });
  return steps;
}

function validateRule(r, where) {
  if (!r || typeof r !== "object" || Array.isArray(r)) throw new ScriptError(`${where}: rule must be an object`);
  const id = typeof r.id === "string" && r.id ? r.id : where;
  const match = validateMatch(r.match, `${id}.match`);
  if (r.reply === undefined && r.rounds === undefined) throw new ScriptError(`${id}: rule needs reply or rounds`);
  const reply = r.reply === undefined ? undefined : validateSteps(r.reply, `${id}.reply`);
  let rounds;
  if (r.rounds !== undefined) {
    if (!Array.isArray(r.rounds) || r.rounds.length === 0) throw new ScriptError(`${id}: rounds must be a non-empty array`);
    rounds = r.rounds.map((s, i) => validateSteps(s, `${id}.rounds[${i}]`));
  }
  return { ...r, id, match, reply, rounds };
}

function validateRules(list, where) {
  const arr = Array.isArray(list) ? list : list?.rules;
  if (!Array.isArray(arr)) throw new ScriptError(`${where}: expected {"rules":[...]} or an array`);
  return arr.map((r, i) => validateRule(r, `${where}#${i}`));
}

function loadScriptFile(name) {
  if (!/^[\w.-]+$/.test(name)) throw new ScriptError(`bad script name "${name}"`);
  const f = name.endsWith(".json") ? name : `${name}.json`;
  let text;
  try {
    text = fs.readFileSync(path.join(SCRIPTS_DIR, f), "utf8");
  } catch {
    throw new ScriptError(`no script ${f} in ${SCRIPTS_DIR}`);
  }
  try {
    return validateRules(JSON.parse(text), f);
  } catch (e) {
    throw e instanceof ScriptError ? e : new ScriptError(`${f}: ${e.message}`);
  }
}

/** Start-up (and reset) rules: MODEL_DEFAULT_SCRIPT's file if set, else every *.json by name. */
function loadScripts() {
  if (DEFAULT_SCRIPT) return loadScriptFile(DEFAULT_SCRIPT);
  let files = [];
  try {
    files = fs.readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith(".json")).sort();
  } catch (e) {
    log(`no scripts dir ${SCRIPTS_DIR}: ${e.message}`);
  }
  return files.flatMap(loadScriptFile);
}

// ---------- reading a Responses request ----------
function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (typeof p === "string" ? p : typeof p?.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

function outputText(output) {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return contentText(output);
  return output === undefined ? "" : JSON.stringify(output);
}

const INTERNAL_CONTEXT = /<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>[\s\S]*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>/g;
function stripInternalContext(text) {
  return text.replace(INTERNAL_CONTEXT, "").trim();
}

// OpenClaw prefixes user text with envelopes such as "[Sun 2026-11-29 17:41 UTC] " and, when it
// re-sends a turn after a failed model call, "[Queued user message from a previous active turn; ...]".
function stripEnvelopes(text) {
  let prev;
  do {
    prev = text;
    text = text.replace(/^\[[^\]\n]*\]\s*/, "");
  } while (text !== prev);
  return text;
}

/** Facts a rule can match on, from a stateless (store:false) Responses request body. */
function analyze(body) {
  const input = typeof body?.input === "string" ? [{ role: "user", content: body.input }] : Array.isArray(body?.input) ? body.input : [];
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
  const lastCall = lastOut ? calls.find((c) => c.call_id === lastOut.call_id) : undefined;
  const tools = Array.isArray(body?.tools) ? body.tools.map((t) => t?.name ?? t?.function?.name).filter(Boolean) : [];
  return {
    userText,
    message: stripEnvelopes(userText),
    userTurn,
    round: outputs.length,
    toolOutput: lastOut ? outputText(lastOut.output) : "",
    toolName: lastCall?.name ?? "",
    tools,
  };
}

function matches(m, facts, model) {
  if (!m) return { ok: true, groups: [] };
  if (typeof m === "string") m = { contains: m };
  let groups = [];
  if (m.contains !== undefined) {
    const list = Array.isArray(m.contains) ? m.contains : [m.contains];
    if (!list.every((s) => facts.userText.includes(s))) return { ok: false };
  }
  if (m.regex !== undefined) {
    const r = new RegExp(m.regex, m.flags ?? "").exec(facts.userText);
    if (!r) return { ok: false };
    groups = r;
  }
  if (m.round !== undefined && m.round !== facts.round) return { ok: false };
  if (m.hasToolOutput !== undefined && m.hasToolOutput !== facts.round > 0) return { ok: false };
  if (m.userTurn !== undefined && m.userTurn !== facts.userTurn) return { ok: false };
  if (m.model !== undefined && m.model !== model) return { ok: false };
  if (m.tool !== undefined && !facts.tools.includes(m.tool)) return { ok: false };
  return { ok: true, groups };
}

function render(tpl, ctx) {
  return tpl.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key) => {
    if (key.startsWith("match.")) {
      const k = key.slice(6);
      const g = /^\d+$/.test(k) ? ctx.groups?.[Number(k)] : ctx.groups?.groups?.[k];
      return g ?? "";
    }
    switch (key) {
      case "userText":
        return ctx.facts.userText;
      case "message":
        return ctx.facts.message;
      case "firstWords":
        return ctx.facts.message.split(/\s+/).filter(Boolean).slice(0, 8).join(" ");
      case "toolOutput":
        return ctx.facts.toolOutput.replace(/\s+/g, " ").trim().slice(0, 200);
      case "toolName":
        return ctx.facts.toolName;
      case "round":
        return String(ctx.facts.round);
      case "requestId":
        return ctx.requestId;
      default:
        return "";
    }
  });
}

function renderArgs(args, ctx) {
  if (args === undefined) return "{}";
  if (typeof args === "string") return render(args, ctx);
  const walk = (v) =>
    typeof v === "string" ? render(v, ctx) : Array.isArray(v) ? v.map(walk) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)])) : v;
  return JSON.stringify(walk(args));
}

function chunk(s, n) {
  n = Math.max(1, Math.min(n, s.length || 1));
  const size = Math.ceil(s.length / n);
  const out = [];
  for (let i = 0; i < n; i++) out.push(s.slice(i * size, (i + 1) * size));
  return out.filter((c, i) => c.length > 0 || i === 0);
}

// ---------- HTTP helpers ----------
function sendJson(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString("utf8");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rid = (prefix) => `${prefix}_${randomBytes(12).toString("hex")}`;

function addRecord(rec) {
  records.push(rec);
  if (records.length > MAX_RECORDS) records.splice(0, records.length - MAX_RECORDS);
  return rec;
}

function takeArmed(list, facts, model) {
  const i = list.findIndex((a) => a.remaining > 0 && matches(a.match, facts, model).ok);
  if (i < 0) return undefined;
  const a = list[i];
  a.remaining--;
  if (a.remaining <= 0) list.splice(i, 1);
  return a;
}

function pickRule(facts, model) {
  for (const r of rules) {
    if (r.times !== undefined && (ruleUses.get(r.id) ?? 0) >= r.times) continue;
    const m = matches(r.match, facts, model);
    if (!m.ok) continue;
    ruleUses.set(r.id, (ruleUses.get(r.id) ?? 0) + 1);
    const steps = r.rounds ? r.rounds[Math.min(facts.round, r.rounds.length - 1)] : r.reply;
    return { rule: r, steps, groups: m.groups };
  }
  return undefined;
}

// ---------- /v1/responses ----------
async function handleResponses(req, res, rec) {
  let body;
  try {
    body = JSON.parse(rec.rawBody || "{}");
  } catch {
    rec.status = "failed";
    rec.httpStatus = 400;
    return sendJson(res, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } });
  }
  delete rec.rawBody;
  rec.body = body;
  rec.model = body.model ?? null;
  rec.stream = body.stream === true;
  const facts = analyze(body);
  Object.assign(rec, { userText: facts.userText, userTurn: facts.userTurn, round: facts.round, toolNames: facts.tools });

  let closed = false;
  res.on("close", () => {
    closed = true;
    if (!res.writableFinished && rec.status !== "completed" && rec.status !== "failed") {
      rec.status = "aborted";
      rec.endedAt = new Date().toISOString();
      const h = held.get(rec.id);
      if (h) h.release(true);
      log(`${rec.id} aborted by client`);
    }
  });

  const armedFail = takeArmed(fails, facts, rec.model);
  if (armedFail) {
    rec.rule = "control:fail";
    rec.status = "failed";
    rec.httpStatus = armedFail.status;
    return sendJson(res, armedFail.status, armedFail.body ?? { error: { message: `fleetlab scripted failure (${armedFail.status})`, type: "server_error", code: "fleetlab_fail" } });
  }
  const picked = pickRule(facts, rec.model);
  const armedHold = takeArmed(holds, facts, rec.model);
  const steps = picked?.steps ?? [{ text: "fleetlab: no script rule matched" }];
  rec.rule = picked?.rule.id ?? null;
  const ctx = { facts, groups: picked?.groups ?? [], requestId: rec.id };
  const chunkDelayMs = picked?.rule.chunkDelayMs ?? 0;

  const responseId = rid("resp");
  rec.responseId = responseId;
  const createdAt = Math.floor(Date.now() / 1000);
  const output = []; // completed output items, in order
  let seqNo = 0;
  let started = false;
  let deltas = 0;
  let holdDone = !armedHold;

  const baseResponse = (status) => ({
    id: responseId,
    object: "response",
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: rec.model ?? MODEL_IDS[0],
    output: status === "in_progress" ? [] : output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store ?? false,
    temperature: body.temperature ?? 1,
    text: { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: null,
    metadata: {},
  });

  const usage = () => {
    const inTok = Math.max(1, Math.ceil((rec.bodyBytes ?? 0) / 4));
    const outTok = Math.max(1, Math.ceil(JSON.stringify(output).length / 4));
    return { input_tokens: inTok, input_tokens_details: { cached_tokens: 0 }, output_tokens: outTok, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inTok + outTok };
  };

  const emit = (type, data) => {
    if (!rec.stream || closed) return;
    rec.events++;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seqNo++, ...data })}\n\n`);
  };

  const holdHere = async (reason) => {
    if (closed) return false;
    rec.status = "held";
    rec.heldAt = new Date().toISOString();
    rec.holdReason = reason;
    log(`${rec.id} held (${reason})`);
    const aborted = await new Promise((resolve) => held.set(rec.id, { record: rec, release: resolve }));
    held.delete(rec.id);
    if (aborted || closed) return false;
    rec.status = "streaming";
    rec.releasedAt = new Date().toISOString();
    return true;
  };

  const start = () => {
    if (started) return;
    started = true;
    rec.status = "streaming";
    if (rec.stream) {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
      emit("response.created", { response: baseResponse("in_progress") });
      emit("response.in_progress", { response: baseResponse("in_progress") });
    }
  };

  // Called after every delta (and once after start): honours an armed control hold.
  const maybeControlHold = async () => {
    if (holdDone || deltas < armedHold.afterDeltas) return true;
    holdDone = true;
    return holdHere(`control hold after ${deltas} deltas`);
  };

  const pace = async () => {
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
  };

  const textStep = async (step) => {
    const text = render(step.text, ctx);
    const item = { id: rid("msg"), type: "message", status: "in_progress", role: "assistant", content: [] };
    const outputIndex = output.length;
    emit("response.output_item.added", { output_index: outputIndex, item });
    emit("response.content_part.added", { item_id: item.id, output_index: outputIndex, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    const parts = chunk(text, step.chunks ?? 3);
    for (let i = 0; i < parts.length; i++) {
      emit("response.output_text.delta", { item_id: item.id, output_index: outputIndex, content_index: 0, delta: parts[i], logprobs: [] });
      deltas++;
      rec.streamedText = (rec.streamedText ?? "") + parts[i];
      if (step.holdAfter !== undefined && i + 1 === step.holdAfter && !(await holdHere(`step holdAfter ${step.holdAfter}`))) return false;
      if (!(await maybeControlHold())) return false;
      await pace();
      if (closed) return false;
    }
    const part = { type: "output_text", text, annotations: [] };
    emit("response.output_text.done", { item_id: item.id, output_index: outputIndex, content_index: 0, text, logprobs: [] });
    emit("response.content_part.done", { item_id: item.id, output_index: outputIndex, content_index: 0, part });
    const done = { ...item, status: "completed", content: [part] };
    output.push(done);
    emit("response.output_item.done", { output_index: outputIndex, item: done });
    rec.output.push({ type: "text", text });
    return true;
  };

  const toolStep = async (step) => {
    const name = render(step.toolCall.name, ctx);
    const args = renderArgs(step.toolCall.arguments, ctx);
    const item = { id: rid("fc"), type: "function_call", status: "in_progress", arguments: "", call_id: step.toolCall.callId ?? rid("call"), name };
    const outputIndex = output.length;
    emit("response.output_item.added", { output_index: outputIndex, item });
    for (const d of chunk(args, step.chunks ?? 2)) {
      emit("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta: d });
      deltas++;
      if (!(await maybeControlHold())) return false;
      await pace();
      if (closed) return false;
    }
    emit("response.function_call_arguments.done", { item_id: item.id, output_index: outputIndex, name, arguments: args });
    const done = { ...item, status: "completed", arguments: args };
    output.push(done);
    emit("response.output_item.done", { output_index: outputIndex, item: done });
    rec.output.push({ type: "function_call", name, arguments: args, callId: item.call_id });
    return true;
  };

  for (const step of steps) {
    if (closed) return;
    if ("delayMs" in step) {
      await sleep(step.delayMs);
      continue;
    }
    if ("fail" in step) {
      const f = step.fail ?? {};
      const message = f.message ?? "fleetlab scripted failure";
      rec.status = "failed";
      rec.endedAt = new Date().toISOString();
      if (!started || !rec.stream) {
        rec.httpStatus = f.status ?? 500;
        return sendJson(res, rec.httpStatus, f.body ?? { error: { message, type: "server_error", code: f.code ?? "fleetlab_fail" } }, f.headers ?? {});
      }
      rec.httpStatus = 200;
      emit("response.failed", { response: { ...baseResponse("failed"), error: { code: f.code ?? "server_error", message } } });
      return res.end();
    }
    start();
    if (!(await maybeControlHold())) return;
    if ("drop" in step) {
      rec.status = "aborted";
      rec.dropped = true;
      rec.endedAt = new Date().toISOString();
      res.destroy();
      return;
    }
    if ("hold" in step) {
      if (!(await holdHere("script hold"))) return;
      continue;
    }
    const ok = "text" in step ? await textStep(step) : await toolStep(step);
    if (!ok) return;
  }
  start();
  if (!holdDone && !(await holdHere(`control hold before completion (${deltas} deltas)`))) return;
  if (closed) return;
  const final = { ...baseResponse("completed"), usage: usage() };
  rec.status = "completed";
  rec.httpStatus = 200;
  rec.endedAt = new Date().toISOString();
  if (rec.stream) {
    emit("response.completed", { response: final });
    res.end();
  } else {
    sendJson(res, 200, final);
  }
}

// ---------- control API ----------
function publicRecord(r) {
  const { rawBody, ...rest } = r;
  return rest;
}

function releaseHeld(id) {
  const ids = id ? [id] : [...held.keys()];
  const released = [];
  for (const i of ids) {
    const h = held.get(i);
    if (h) {
      h.release(false);
      released.push(i);
    }
  }
  return released;
}

function reset() {
  const fresh = loadScripts(); // first: a broken script file leaves the state untouched
  const released = releaseHeld();
  rules = fresh;
  records = [];
  holds = [];
  fails = [];
  ruleUses.clear();
  return released;
}

async function handleControl(req, res, url) {
  const route = `${req.method} ${url.pathname}`;
  let input = {};
  if (req.method === "POST") {
    const raw = await readBody(req);
    try {
      input = raw ? JSON.parse(raw) : {};
    } catch {
      return sendJson(res, 400, { error: "invalid JSON" });
    }
  }
  try {
    switch (route) {
      case "GET /_control/requests": {
        const since = Number(url.searchParams.get("since") ?? 0);
        return sendJson(res, 200, { requests: records.filter((r) => r.seq > since).map(publicRecord) });
      }
      case "POST /_control/reset":
        return sendJson(res, 200, { ok: true, released: reset(), rules: rules.length });
      case "GET /_control/script":
        return sendJson(res, 200, { rules });
      case "POST /_control/script": {
        const mode = input.mode ?? "prepend";
        const added = typeof input.script === "string" ? loadScriptFile(input.script) : validateRules(input.rules ?? input, "control");
        if (mode === "replace") rules = added;
        else if (mode === "append") rules = [...rules, ...added];
        else if (mode === "prepend") rules = [...added, ...rules];
        else return sendJson(res, 400, { error: `unknown mode ${mode}` });
        for (const r of added) ruleUses.delete(r.id);
        return sendJson(res, 200, { ok: true, rules: rules.map((r) => r.id) });
      }
      case "POST /_control/hold": {
        const a = { id: rid("hold"), match: validateMatch(input.match, "hold"), afterDeltas: input.afterDeltas ?? 1, remaining: input.count ?? 1 };
        holds.push(a);
        return sendJson(res, 200, { ok: true, armed: a });
      }
      case "POST /_control/release":
        return sendJson(res, 200, { ok: true, released: releaseHeld(input.id) });
      case "POST /_control/fail": {
        const a = { id: rid("fail"), match: validateMatch(input.match, "fail"), status: input.status ?? 500, body: input.body, remaining: input.count ?? 1 };
        fails.push(a);
        return sendJson(res, 200, { ok: true, armed: a });
      }
      case "GET /_control/held":
        return sendJson(res, 200, {
          held: [...held.values()].map(({ record: r }) => ({ id: r.id, seq: r.seq, path: r.path, model: r.model, rule: r.rule, heldAt: r.heldAt, reason: r.holdReason, userText: r.userText, round: r.round, streamedText: r.streamedText ?? "" })),
        });
      case "GET /_control/armed":
        return sendJson(res, 200, { holds, fails });
      default:
        return sendJson(res, 404, { error: `no control route ${route}` });
    }
  } catch (e) {
    if (e instanceof ScriptError) return sendJson(res, 400, { error: e.message });
    throw e;
  }
}

// ---------- server ----------
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  try {
    if (url.pathname === "/healthz") return sendJson(res, 200, { ok: true, rules: rules.length, held: held.size, requests: records.length });
    if (url.pathname.startsWith("/_control/")) return await handleControl(req, res, url);

    const rawBody = req.method === "GET" || req.method === "HEAD" ? "" : await readBody(req);
    const rec = addRecord({
      id: `req-${++seq}`,
      seq,
      time: new Date().toISOString(),
      method: req.method,
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
      headers: { "user-agent": req.headers["user-agent"] ?? null, "x-client-request-id": req.headers["x-client-request-id"] ?? null },
    });
    log(`${rec.id} ${req.method} ${url.pathname} ${rec.bodyBytes}B`);
    const p = url.pathname.replace(/\/+$/, "");

    if (req.method === "POST" && p.endsWith("/responses")) return await handleResponses(req, res, rec);

    delete rec.rawBody;
    if (rawBody) {
      try {
        rec.body = JSON.parse(rawBody);
      } catch {
        rec.body = rawBody;
      }
    }
    const finish = (status, obj) => {
      rec.status = status < 400 ? "completed" : "failed";
      rec.httpStatus = status;
      rec.endedAt = new Date().toISOString();
      sendJson(res, status, obj);
    };
    const model = (id) => ({ id, object: "model", created: 1700000000, owned_by: "fleetlab" });
    if (req.method === "GET" && p.endsWith("/models")) return finish(200, { object: "list", data: MODEL_IDS.map(model) });
    const m = /\/models\/([^/]+)$/.exec(p);
    if (req.method === "GET" && m) {
      const id = decodeURIComponent(m[1]);
      return MODEL_IDS.includes(id) ? finish(200, model(id)) : finish(404, { error: { message: `model ${id} not found`, type: "invalid_request_error" } });
    }
    return finish(404, { error: { message: `fleetlab model: no route ${req.method} ${url.pathname}`, type: "invalid_request_error" } });
  } catch (e) {
    log("handler error", e);
    if (!res.headersSent) sendJson(res, 500, { error: { message: String(e?.message ?? e), type: "server_error" } });
    else res.destroy();
  }
});

// Streams may be held for minutes: no server-side timeouts.
server.requestTimeout = 0;
server.headersTimeout = 0;
server.keepAliveTimeout = 65_000;

rules = loadScripts();
server.listen(PORT, HOST, () => log(`fleetlab model listening on ${HOST}:${server.address().port}, ${rules.length} rules from ${SCRIPTS_DIR}`));

const stop = () => {
  releaseHeld();
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
