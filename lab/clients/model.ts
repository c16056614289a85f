// Host-side client for the scripted model's control API (docker/model/server.mjs).
// Scenarios use it to script answers, hold or fail model calls at chosen points, and read
// back every request the gateway made (full body, including the tools it offered).
// Replies are checked with zod so a drifted server shows up as a clear error, not as
// undefined fields deep inside a scenario.

import { z } from "zod";
import { controlCall } from "./control.ts";

// ---------- script format (see fixtures/model/README.md) ----------

export const MatchSchema = z.union([
  z.string(),
  z
    .object({
      contains: z.union([z.string(), z.array(z.string())]).optional(),
      regex: z.string().optional(),
      flags: z.string().optional(),
      round: z.number().int().min(0).optional(),
      hasToolOutput: z.boolean().optional(),
      userTurn: z.number().int().min(0).optional(),
      model: z.string().optional(),
      tool: z.string().optional(),
    })
    .strict(),
]);
export type Match = z.infer<typeof MatchSchema>;

export const StepSchema = z.union([
  z.object({ text: z.string(), chunks: z.number().int().min(1).optional(), holdAfter: z.number().int().min(1).optional() }).strict(),
  z
    .object({
      toolCall: z.object({ name: z.string().min(1), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(), callId: z.string().optional() }).strict(),
      chunks: z.number().int().min(1).optional(),
    })
    .strict(),
  z.object({ hold: z.literal(true) }).strict(),
  z.object({ delayMs: z.number().int().min(0) }).strict(),
  z
    .object({
      fail: z
        .object({ status: z.number().int().min(100).max(599).optional(), body: z.unknown().optional(), message: z.string().optional(), code: z.string().optional(), headers: z.record(z.string(), z.string()).optional() })
        .strict(),
    })
    .strict(),
  z.object({ drop: z.literal(true) }).strict(),
]);
export type Step = z.infer<typeof StepSchema>;

export const RuleSchema = z
  .object({
    id: z.string().min(1),
    match: MatchSchema.optional(),
    times: z.number().int().min(1).optional(),
    chunkDelayMs: z.number().int().min(0).optional(),
    reply: z.array(StepSchema).optional(),
    rounds: z.array(z.array(StepSchema)).min(1).optional(),
  })
  .strict()
  .refine((r) => r.reply !== undefined || r.rounds !== undefined, { message: "a rule needs reply or rounds" });
export type Rule = z.infer<typeof RuleSchema>;

export type ScriptMode = "prepend" | "append" | "replace";

// ---------- control API replies ----------

export const RequestStatusSchema = z.enum(["pending", "streaming", "held", "completed", "failed", "aborted"]);
export type RequestStatus = z.infer<typeof RequestStatusSchema>;

export const EmittedSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("function_call"), name: z.string(), arguments: z.string(), callId: z.string() }),
]);

/** One HTTP request the model server received (anything but /_control and /healthz). */
export const ModelRequestSchema = z.looseObject({
  id: z.string(),
  seq: z.number().int(),
  time: z.string(),
  method: z.string(),
  path: z.string(),
  model: z.string().nullable(),
  stream: z.boolean(),
  /** Id of the rule that answered, "control:fail" for an armed failure, null when none did. */
  rule: z.string().nullable(),
  status: RequestStatusSchema,
  httpStatus: z.number().int().nullable(),
  endedAt: z.string().nullable(),
  events: z.number().int(),
  /** What the response carried (text and tool calls), in order. */
  output: z.array(EmittedSchema),
  bodyBytes: z.number().int(),
  /** The parsed request body, as sent (a Responses request: model, input, tools, ...). */
  body: z.unknown(),
  // Facts derived from a /v1/responses body:
  userText: z.string().optional(),
  userTurn: z.number().int().optional(),
  round: z.number().int().optional(),
  toolNames: z.array(z.string()).optional(),
  responseId: z.string().optional(),
  streamedText: z.string().optional(),
  heldAt: z.string().optional(),
  releasedAt: z.string().optional(),
  holdReason: z.string().optional(),
});
export type ModelRequest = z.infer<typeof ModelRequestSchema>;

const RequestsReply = z.object({ requests: z.array(ModelRequestSchema) });

export const HeldSchema = z.looseObject({
  id: z.string(),
  seq: z.number().int(),
  path: z.string(),
  model: z.string().nullable(),
  rule: z.string().nullable(),
  heldAt: z.string(),
  reason: z.string(),
  userText: z.string(),
  round: z.number().int(),
  streamedText: z.string(),
});
export type HeldRequest = z.infer<typeof HeldSchema>;

const ArmedReply = z.object({
  ok: z.literal(true),
  armed: z.looseObject({ id: z.string(), match: z.unknown(), remaining: z.number().int() }),
});
export type Armed = z.infer<typeof ArmedReply>["armed"];

const HealthReply = z.looseObject({ ok: z.literal(true), rules: z.number().int(), held: z.number().int(), requests: z.number().int() });
export type ModelHealth = z.infer<typeof HealthReply>;

/** A tool definition from a Responses request's `tools` array. */
export const ToolDefSchema = z.looseObject({ type: z.string(), name: z.string().optional(), description: z.string().optional(), parameters: z.unknown().optional() });
export type ToolDef = z.infer<typeof ToolDefSchema>;

/** The tools the gateway offered in a recorded request (empty for non-Responses requests). */
export function toolsOf(r: ModelRequest): ToolDef[] {
  const parsed = z.object({ tools: z.array(ToolDefSchema) }).safeParse(r.body);
  return parsed.success ? parsed.data.tools : [];
}

/** True for the agent-turn calls (POST .../responses), as opposed to e.g. GET /v1/models. */
export const isResponsesCall = (r: ModelRequest): boolean => r.method === "POST" && r.path.endsWith("/responses");

export class ModelControlError extends Error {}

export class ModelControl {
  readonly baseUrl: string;

  /** baseUrl: the server root, e.g. http://172.20.0.3:8080 (not the /v1 provider URL). */
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  async #call<T>(method: "GET" | "POST", path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    return controlCall({ name: "model", baseUrl: this.baseUrl, method, path, schema, body, timeoutMs: 10_000, error: ModelControlError });
  }

  async health(): Promise<ModelHealth> {
    return this.#call("GET", "/healthz", HealthReply);
  }

  /** True when the server answers /healthz; never throws. */
  async healthy(): Promise<boolean> {
    return this.health().then(
      () => true,
      () => false,
    );
  }

  /** Every request recorded since the last reset, oldest first; `since` keeps only seq > since. */
  async requests(opts: { since?: number } = {}): Promise<ModelRequest[]> {
    const q = opts.since ? `?since=${opts.since}` : "";
    return (await this.#call("GET", `/_control/requests${q}`, RequestsReply)).requests;
  }

  /** Reloads the start-up script; clears records, armed holds/fails; releases held streams. */
  async reset(): Promise<{ released: string[]; rules: number }> {
    return this.#call("POST", "/_control/reset", z.object({ ok: z.literal(true), released: z.array(z.string()), rules: z.number().int() }));
  }

  /** Adds rules (checked here first); by default they take precedence over existing ones. */
  async setScript(rules: Rule[], mode: ScriptMode = "prepend"): Promise<string[]> {
    const checked = z.array(RuleSchema).parse(rules);
    return (await this.#call("POST", "/_control/script", z.object({ ok: z.literal(true), rules: z.array(z.string()) }), { rules: checked, mode })).rules;
  }

  /** Loads a script file by name from the server's MODEL_SCRIPTS folder. */
  async loadScript(name: string, mode: ScriptMode = "prepend"): Promise<string[]> {
    return (await this.#call("POST", "/_control/script", z.object({ ok: z.literal(true), rules: z.array(z.string()) }), { script: name, mode })).rules;
  }

  async script(): Promise<unknown[]> {
    return (await this.#call("GET", "/_control/script", z.object({ rules: z.array(z.unknown()) }))).rules;
  }

  /** The next `count` matching responses stop after `afterDeltas` deltas until released. */
  async hold(opts: { match?: Match; afterDeltas?: number; count?: number } = {}): Promise<Armed> {
    return (await this.#call("POST", "/_control/hold", ArmedReply, opts)).armed;
  }

  /** Releases one held request (by request id) or all; returns the ids released. */
  async release(id?: string): Promise<string[]> {
    return (await this.#call("POST", "/_control/release", z.object({ ok: z.literal(true), released: z.array(z.string()) }), id ? { id } : {})).released;
  }

  async held(): Promise<HeldRequest[]> {
    return (await this.#call("GET", "/_control/held", z.object({ held: z.array(HeldSchema) }))).held;
  }

  /** The next `count` matching requests are answered with HTTP `status`. */
  async fail(opts: { match?: Match; status?: number; count?: number; body?: unknown } = {}): Promise<Armed> {
    return (await this.#call("POST", "/_control/fail", ArmedReply, opts)).armed;
  }

  /** Polls until a recorded request satisfies `predicate`; throws with what was seen on timeout. */
  async waitForRequest(predicate: (r: ModelRequest) => boolean, timeoutMs = 30_000, opts: { since?: number; intervalMs?: number } = {}): Promise<ModelRequest> {
    const deadline = Date.now() + timeoutMs;
    let seen: ModelRequest[] = [];
    for (;;) {
      seen = await this.requests({ since: opts.since });
      const hit = seen.find(predicate);
      if (hit) return hit;
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
    }
    const summary = seen.slice(-5).map((r) => `${r.id} ${r.method} ${r.path} ${r.status} rule=${r.rule}`).join("; ");
    throw new ModelControlError(`no model request matched within ${timeoutMs} ms (${seen.length} seen; last: ${summary || "none"})`);
  }

  /** Waits until a request is held (e.g. after hold()); returns it. */
  async waitForHeld(timeoutMs = 30_000, predicate: (h: HeldRequest) => boolean = () => true): Promise<HeldRequest> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = (await this.held()).find(predicate);
      if (hit) return hit;
      if (Date.now() >= deadline) throw new ModelControlError(`no model request was held within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
