// Answering POST /v1/responses as OpenAI does: with stream:true an SSE stream
// (response.created, response.in_progress, output items with their deltas, response.completed),
// otherwise one JSON response. The steps come from the first matching script rule; armed control
// holds and failures, and the script's hold, delay, fail and drop steps, act on the way.

import type http from "node:http";
import { analyze } from "./request-facts.ts";
import { render, renderArgs, type FailStep, type RenderContext, type Step, type TextStep, type ToolCallStep } from "./script.ts";
import { rid, type ModelState, type StoredRequest } from "./state.ts";
import { log, sendJson } from "./io.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `s` in n pieces (at least one, even for ""). */
function chunk(s: string, n: number): string[] {
  n = Math.max(1, Math.min(n, s.length || 1));
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(s.slice(i * size, (i + 1) * size));
  return out.filter((c, i) => c.length > 0 || i === 0);
}

/** The parts of a Responses request body this server reads or echoes. */
interface ResponsesBody {
  model?: unknown;
  stream?: unknown;
  input?: unknown;
  tools?: unknown;
  max_output_tokens?: unknown;
  parallel_tool_calls?: unknown;
  previous_response_id?: unknown;
  store?: unknown;
  temperature?: unknown;
  tool_choice?: unknown;
}

type OutputItem = Record<string, unknown> & { id: string; type: string; status: string };

export async function handleResponses(res: http.ServerResponse, rec: StoredRequest, state: ModelState, modelIds: string[]): Promise<void> {
  let body: ResponsesBody;
  try {
    body = JSON.parse(rec.rawBody || "{}");
  } catch {
    rec.status = "failed";
    rec.httpStatus = 400;
    return sendJson(res, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } });
  }
  delete rec.rawBody;
  rec.body = body;
  rec.model = typeof body.model === "string" ? body.model : null;
  rec.stream = body.stream === true;
  const facts = analyze(body);
  Object.assign(rec, { userText: facts.userText, userTurn: facts.userTurn, round: facts.round, toolNames: facts.tools });

  let closed = false;
  res.on("close", () => {
    closed = true;
    if (!res.writableFinished && rec.status !== "completed" && rec.status !== "failed") {
      rec.status = "aborted";
      rec.endedAt = new Date().toISOString();
      const h = state.held.get(rec.id);
      if (h) h.release(true);
      log(`${rec.id} aborted by client`);
    }
  });

  const armedFail = state.takeArmed(state.fails, facts, rec.model);
  if (armedFail) {
    rec.rule = "control:fail";
    rec.status = "failed";
    rec.httpStatus = armedFail.status;
    return sendJson(res, armedFail.status, armedFail.body ?? { error: { message: `fleetlab scripted failure (${armedFail.status})`, type: "server_error", code: "fleetlab_fail" } });
  }
  const picked = state.pickRule(facts, rec.model);
  const armedHold = state.takeArmed(state.holds, facts, rec.model);
  const steps: Step[] = picked?.steps ?? [{ text: "fleetlab: no script rule matched" }];
  rec.rule = picked?.rule.id ?? null;
  const ctx: RenderContext = { facts, groups: picked?.groups ?? [], requestId: rec.id };
  const chunkDelayMs = picked?.rule.chunkDelayMs ?? 0;

  const responseId = rid("resp");
  rec.responseId = responseId;
  const createdAt = Math.floor(Date.now() / 1000);
  const output: OutputItem[] = []; // completed output items, in order
  let seqNo = 0;
  let started = false;
  let deltas = 0;
  let holdDone = !armedHold;

  const baseResponse = (status: string) => ({
    id: responseId,
    object: "response",
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: rec.model ?? modelIds[0],
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

  const emit = (type: string, data: Record<string, unknown>) => {
    if (!rec.stream || closed) return;
    rec.events++;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seqNo++, ...data })}\n\n`);
  };

  const holdHere = async (reason: string): Promise<boolean> => {
    if (closed) return false;
    rec.status = "held";
    rec.heldAt = new Date().toISOString();
    rec.holdReason = reason;
    log(`${rec.id} held (${reason})`);
    const aborted = await new Promise<boolean>((resolve) => state.held.set(rec.id, { record: rec, release: resolve }));
    state.held.delete(rec.id);
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
  const maybeControlHold = async (): Promise<boolean> => {
    if (holdDone || deltas < armedHold!.afterDeltas) return true;
    holdDone = true;
    return holdHere(`control hold after ${deltas} deltas`);
  };

  const pace = async () => {
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
  };

  const textStep = async (step: TextStep): Promise<boolean> => {
    const text = render(step.text, ctx);
    const item = { id: rid("msg"), type: "message", status: "in_progress", role: "assistant", content: [] as unknown[] };
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

  const toolStep = async (step: ToolCallStep): Promise<boolean> => {
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
      const f: FailStep["fail"] = step.fail ?? {};
      const message = f.message ?? "fleetlab scripted failure";
      rec.status = "failed";
      rec.endedAt = new Date().toISOString();
      if (!started || !rec.stream) {
        rec.httpStatus = f.status ?? 500;
        return sendJson(res, rec.httpStatus, f.body ?? { error: { message, type: "server_error", code: f.code ?? "fleetlab_fail" } }, f.headers ?? {});
      }
      rec.httpStatus = 200;
      emit("response.failed", { response: { ...baseResponse("failed"), error: { code: f.code ?? "server_error", message } } });
      res.end();
      return;
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
