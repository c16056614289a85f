// The scripted model server, run as a child process on a free loopback port, driven the way
// OpenClaw's openai-responses client and the lab's scenarios drive it.

import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ModelControl, isResponsesCall, toolsOf } from "./model.ts";
import { listeningOnPort, startServerProcess, type ServerProcess } from "../testing/server-process.ts";
import { ModelRequest } from "../evidence/records/index.ts";

const SERVER = fileURLToPath(new URL("../../docker/model/server.ts", import.meta.url));
const SCRIPTS = fileURLToPath(new URL("../../fixtures/model/", import.meta.url));

let server: ServerProcess<number>;
let base: string;
let model: ModelControl;

beforeAll(async () => {
  server = await startServerProcess("model server", SERVER, { MODEL_PORT: "0", MODEL_HOST: "127.0.0.1", MODEL_SCRIPTS: SCRIPTS, MODEL_DEFAULT_SCRIPT: "default" }, listeningOnPort);
  base = `http://127.0.0.1:${server.ready}`;
  model = new ModelControl(base);
});

afterAll(async () => {
  await server?.stop();
});

beforeEach(async () => {
  await model.reset();
});

// What the server recorded in each test is what the at-most-once check reads: the record's schema
// (lab/evidence/records/model.ts) takes all of it.
afterEach(async () => {
  expect((await model.requests()).filter((r) => !ModelRequest.safeParse(r).success)).toEqual([]);
});

type SseEvent = { event: string; data: Record<string, any> };

function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((b) => b.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "";
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null");
      return { event, data };
    });
}

const userMessage = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const TOOLS = [
  { type: "function", name: "read", description: "Read files", parameters: { type: "object", properties: { path: { type: "string" } } } },
  { type: "function", name: "exec", description: "Run shell", parameters: { type: "object", properties: { command: { type: "string" } } } },
];

function post(body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
}

async function stream(input: unknown[], tools: unknown[] = TOOLS): Promise<{ res: Response; events: SseEvent[] }> {
  const res = await post({ model: "scripted", stream: true, store: false, input, tools });
  return { res, events: parseSse(await res.text()) };
}

/** Reads an SSE body until `until` holds for the text so far; returns the reader to go on. */
async function readUntil(res: Response, until: (text: string) => boolean) {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!until(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early: ${text}`);
    text += dec.decode(value, { stream: true });
  }
  return {
    text,
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += dec.decode(value, { stream: true });
      }
    },
  };
}

function expectWellFormed(events: SseEvent[]) {
  for (const [i, e] of events.entries()) {
    expect(e.data.type, `event ${i} names itself`).toBe(e.event);
    expect(e.data.sequence_number, `event ${i} sequence`).toBe(i);
  }
  expect(events[0].event).toBe("response.created");
  expect(events[0].data.response.status).toBe("in_progress");
  const last = events.at(-1)!;
  expect(last.event).toBe("response.completed");
  const usage = last.data.response.usage;
  expect(usage.input_tokens).toBeGreaterThan(0);
  expect(usage.output_tokens).toBeGreaterThan(0);
  expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  // Every item announced by output_item.done is in the terminal output, in order (OpenClaw
  // rejects a completed response that omits a streamed item).
  const done = events.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item);
  expect(last.data.response.output).toEqual(done);
  return last.data.response;
}

describe("scripted model: Responses API streaming", () => {
  it("streams the default reply as OpenAI's event sequence, deltas adding up to the final text", async () => {
    const { res, events } = await stream([
      { type: "message", role: "system", content: [{ type: "input_text", text: "You are a personal assistant" }] },
      userMessage("[Sun 2026-11-29 17:41 UTC] hello from the smoke test"),
      // OpenClaw appends runtime context as a trailing user message; it must not be echoed.
      userMessage("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nActive exec sessions: none\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"),
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const response = expectWellFormed(events);
    const added = events[2].data;
    expect(added.item).toMatchObject({ type: "message", role: "assistant", status: "in_progress" });
    const deltas = events.filter((e) => e.event === "response.output_text.delta");
    for (const d of deltas) expect(d.data).toMatchObject({ item_id: added.item.id, output_index: 0, content_index: 0 });
    const text = deltas.map((d) => d.data.delta).join("");
    expect(text).toBe("fleetlab-ok: hello from the smoke test");
    expect(response.output[0]).toMatchObject({ type: "message", status: "completed", content: [{ type: "output_text", text }] });
    expect(response.status).toBe("completed");
  });

  it("streams a tool call with argument deltas, then continues the turn from the tool output", async () => {
    await model.setScript([
      {
        id: "read-readme",
        match: { contains: "summarize the readme", tool: "read" },
        rounds: [[{ toolCall: { name: "read", arguments: { path: "README.md" } }, chunks: 3 }], [{ text: "fleetlab-ok: the readme says {{toolOutput}}" }]],
      },
    ]);
    const ask = userMessage("please summarize the readme");
    const first = await stream([ask]);
    expect(first.events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const response = expectWellFormed(first.events);
    const added = first.events[2].data.item;
    expect(added).toMatchObject({ type: "function_call", name: "read", arguments: "", status: "in_progress" });
    expect(added.call_id).toMatch(/^call_/);
    const args = first.events.filter((e) => e.event === "response.function_call_arguments.delta").map((e) => e.data.delta).join("");
    expect(JSON.parse(args)).toEqual({ path: "README.md" });
    const call = response.output[0];
    expect(call).toEqual({ ...added, status: "completed", arguments: args });

    // OpenClaw's follow-up: the call and its output appended after the user message.
    const second = await stream([
      ask,
      { type: "function_call", call_id: call.call_id, name: "read", arguments: args },
      { type: "function_call_output", call_id: call.call_id, output: "# Project\nfleetlab lab" },
    ]);
    const final = expectWellFormed(second.events);
    expect(final.output[0].content[0].text).toBe("fleetlab-ok: the readme says # Project fleetlab lab");

    const seen = (await model.requests()).filter(isResponsesCall);
    expect(seen.map((r) => [r.rule, r.round, r.status])).toEqual([
      ["read-readme", 0, "completed"],
      ["read-readme", 1, "completed"],
    ]);
    expect(toolsOf(seen[0]).map((t) => t.name)).toEqual(["read", "exec"]);
    expect(seen[0].output).toEqual([{ type: "function_call", name: "read", arguments: args, callId: call.call_id }]);
  });

  it("drives a tool call from the message itself with the default script (fleetlab-call)", async () => {
    const { events } = await stream([userMessage('[Sun 2026-11-29 17:41 UTC] fleetlab-call exec {"command":"ls"} please')]);
    const item = events.find((e) => e.event === "response.output_item.done")!.data.item;
    expect(item).toMatchObject({ type: "function_call", name: "exec", arguments: '{"command":"ls"}' });
  });

  it("answers non-streaming requests with one JSON response", async () => {
    const res = await post({ model: "scripted", input: "hi there" });
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.json();
    expect(body).toMatchObject({ object: "response", status: "completed", output: [{ type: "message", content: [{ text: "fleetlab-ok: hi there" }] }] });
  });

  it("lists the scripted model and records other calls it does not serve", async () => {
    const list = await (await fetch(`${base}/v1/models`)).json();
    expect(list.data.map((m: { id: string }) => m.id)).toEqual(["scripted"]);
    expect((await fetch(`${base}/v1/chat/completions`, { method: "POST", body: "{}" })).status).toBe(404);
    const seen = await model.requests();
    expect(seen.map((r) => [r.method, r.path, r.httpStatus])).toEqual([
      ["GET", "/v1/models", 200],
      ["POST", "/v1/chat/completions", 404],
    ]);
  });
});

describe("scripted model: control API", () => {
  it("holds a response part-way until released, then completes it", async () => {
    await model.hold({ match: "slow one", afterDeltas: 1 });
    const res = await post({ model: "scripted", stream: true, input: [userMessage("the slow one")] });
    const reading = await readUntil(res, (t) => t.includes("response.output_text.delta"));
    const held = await model.waitForHeld(5_000);
    expect(held).toMatchObject({ path: "/v1/responses", rule: "default" });
    // One of three deltas went out: a non-empty, strict prefix of the scripted reply.
    expect(held.streamedText.length).toBeGreaterThan(0);
    expect("fleetlab-ok: the slow one".startsWith(held.streamedText) && held.streamedText.length < 25).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(reading.text).not.toContain("response.completed"); // nothing more while held
    expect((await model.requests())[0].status).toBe("held");

    expect(await model.release()).toEqual([held.id]);
    const events = parseSse(await reading.rest());
    expectWellFormed(events);
    const record = await model.waitForRequest((r) => r.id === held.id && r.status === "completed", 5_000);
    expect(record.releasedAt).toBeDefined();
    expect(await model.held()).toEqual([]);
  });

  it("a later request is not held once the armed hold is used up", async () => {
    await model.hold({ afterDeltas: 0 });
    const first = post({ model: "scripted", stream: true, input: "one" });
    await model.waitForHeld(5_000);
    const second = await stream([userMessage("two")]);
    expectWellFormed(second.events);
    await model.release();
    expectWellFormed(parseSse(await (await first).text()));
  });

  it("records a held request whose client goes away as aborted", async () => {
    await model.hold({ match: { contains: "abandon" }, afterDeltas: 2 });
    const ac = new AbortController();
    const res = await post({ model: "scripted", stream: true, input: [userMessage("abandon me")] }, ac.signal);
    const reading = readUntil(res, () => false).catch(() => undefined);
    const held = await model.waitForHeld(5_000);
    ac.abort();
    await reading;
    const record = await model.waitForRequest((r) => r.id === held.id && r.status === "aborted", 5_000);
    // Two of three deltas went out before the client left.
    expect(record.streamedText).toBe("fleetlab-ok: abandon me".slice(0, 16));
    expect(await model.held()).toEqual([]);
  });

  it("a script hold step stops the stream after partial deltas (node-loss style)", async () => {
    await model.setScript([{ id: "stall", match: "stall", reply: [{ text: "partial answer that never ends", chunks: 4, holdAfter: 2 }] }]);
    const res = await post({ model: "scripted", stream: true, input: "stall here" });
    const reading = await readUntil(res, (t) => (t.match(/output_text\.delta/g) ?? []).length >= 4); // event: + data: lines
    const held = await model.waitForHeld(5_000);
    expect(held.reason).toMatch(/holdAfter/);
    expect(reading.text).not.toContain("response.output_text.done");
    await model.release(held.id);
    expectWellFormed(parseSse(await reading.rest()));
  });

  it("fails the next matching requests with the given HTTP status, then answers again", async () => {
    await model.fail({ match: "flaky", status: 503, count: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await post({ model: "scripted", stream: true, input: "flaky call" })).status);
    expect(statuses).toEqual([503, 503, 200]);
    const failed = await post({ model: "scripted", stream: true, input: "unrelated" });
    expect(failed.status).toBe(200);
    const seen = await model.requests();
    expect(seen.map((r) => [r.status, r.rule])).toEqual([
      ["failed", "control:fail"],
      ["failed", "control:fail"],
      ["completed", "default"],
      ["completed", "default"],
    ]);
  });

  it("a script fail step after streaming began ends the stream with response.failed", async () => {
    await model.setScript([{ id: "midfail", match: "midfail", reply: [{ text: "half" }, { fail: { message: "upstream died" } }] }]);
    const { res, events } = await stream([userMessage("midfail")]);
    expect(res.status).toBe(200);
    const last = events.at(-1)!;
    expect(last.event).toBe("response.failed");
    expect(last.data.response).toMatchObject({ status: "failed", error: { message: "upstream died" } });
    expect((await model.requests())[0].status).toBe("failed");
  });

  it("rejects a malformed script with a message naming the rule, and keeps the old rules", async () => {
    const res = await fetch(`${base}/_control/script`, { method: "POST", body: JSON.stringify({ rules: [{ id: "broken", reply: [{ txt: "x" }] }] }) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/broken\.reply\[0\]/);
    const { events } = await stream([userMessage("still fine")]);
    expect(expectWellFormed(events).output[0].content[0].text).toBe("fleetlab-ok: still fine");
  });

  it("reset restores the start-up script and clears records and armed faults", async () => {
    await model.setScript([{ id: "override", reply: [{ text: "overridden" }] }], "replace");
    await model.fail({ status: 500 });
    await model.reset();
    expect(await model.requests()).toEqual([]);
    const { events } = await stream([userMessage("after reset")]);
    expect(expectWellFormed(events).output[0].content[0].text).toBe("fleetlab-ok: after reset");
  });
});
