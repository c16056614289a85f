// Host-side client for the scripted model's control API (docker/model/control.ts).
// Scenarios use it to script answers, hold or fail model calls at chosen points, and read
// back every request the gateway made (full body, including the tools it offered).
// The script format (docker/model/script.ts, see fixtures/model/README.md) and every route with
// its body and reply (docker/model/wire.ts) are defined once, by the server; this client imports
// them.

import { z } from "zod";
import type { LoadedRule, Match, Rule, ScriptMode } from "../../docker/model/script.ts";
import type { ArmedFail, ArmedHold, HeldRequest, ModelControlApi, ModelHealth, ModelRequest } from "../../docker/model/wire.ts";
import { ControlClient } from "./control.ts";
import { WaitTimeout, waitFor } from "../core/wait.ts";

export type { DelayStep, DropStep, FailStep, HoldStep, LoadedRule, Match, MatchFields, Rule, ScriptMode, Step, TextStep, ToolCallStep } from "../../docker/model/script.ts";
export type { ArmedFail, ArmedHold, Emitted, HeldRequest, ModelHealth, ModelRequest, RequestStatus } from "../../docker/model/wire.ts";
export type Armed = ArmedHold | ArmedFail;

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

export class ModelControl extends ControlClient<ModelControlApi> {
  /** baseUrl: the server root, e.g. http://172.20.0.3:8080 (not the /v1 provider URL). */
  constructor(baseUrl: string) {
    super(baseUrl, { name: "model", timeoutMs: 10_000, error: ModelControlError });
  }

  async health(): Promise<ModelHealth> {
    return this.call("GET /healthz");
  }

  /** Every request recorded since the last reset, oldest first; `since` keeps only seq > since. */
  async requests(opts: { since?: number } = {}): Promise<ModelRequest[]> {
    return (await this.call("GET /_control/requests", { query: { since: opts.since } })).requests;
  }

  /** Reloads the start-up script; clears records, armed holds/fails; releases held streams. */
  async reset(): Promise<{ released: string[]; rules: number }> {
    const { released, rules } = await this.call("POST /_control/reset");
    return { released, rules };
  }

  /** Adds rules (the server checks them: a bad one is refused naming the rule and step); by
   * default they take precedence over existing ones. Returns the ids of all rules in force. */
  async setScript(rules: Rule[], mode: ScriptMode = "prepend"): Promise<string[]> {
    return (await this.call("POST /_control/script", { body: { rules, mode } })).rules;
  }

  /** Loads a script file by name from the server's MODEL_SCRIPTS folder. */
  async loadScript(name: string, mode: ScriptMode = "prepend"): Promise<string[]> {
    return (await this.call("POST /_control/script", { body: { script: name, mode } })).rules;
  }

  async script(): Promise<LoadedRule[]> {
    return (await this.call("GET /_control/script")).rules;
  }

  /** The next `count` matching responses stop after `afterDeltas` deltas until released. */
  async hold(opts: { match?: Match; afterDeltas?: number; count?: number } = {}): Promise<ArmedHold> {
    return (await this.call("POST /_control/hold", { body: opts })).armed;
  }

  /** Releases one held request (by request id) or all; returns the ids released. */
  async release(id?: string): Promise<string[]> {
    return (await this.call("POST /_control/release", { body: id ? { id } : {} })).released;
  }

  async held(): Promise<HeldRequest[]> {
    return (await this.call("GET /_control/held")).held;
  }

  /** The next `count` matching requests are answered with HTTP `status`. */
  async fail(opts: { match?: Match; status?: number; count?: number; body?: unknown } = {}): Promise<ArmedFail> {
    return (await this.call("POST /_control/fail", { body: opts })).armed;
  }

  /**
   * Polls until a recorded request satisfies `predicate`; throws with what was seen on timeout.
   * `timeoutMs` is paced (lab/core/pace.ts) unless `expectation` makes it the fixed bound judged.
   */
  async waitForRequest(predicate: (r: ModelRequest) => boolean, timeoutMs = 30_000, opts: { since?: number; intervalMs?: number; signal?: AbortSignal; expectation?: boolean } = {}): Promise<ModelRequest> {
    let seen: ModelRequest[] = [];
    const bound = opts.expectation ? "expectation" : "lab";
    return waitFor("a model request", async () => (seen = await this.requests({ since: opts.since })).find(predicate), { timeoutMs, bound, intervalMs: opts.intervalMs ?? 100, signal: opts.signal }).catch((err: unknown) => {
      if (!(err instanceof WaitTimeout)) throw err;
      const summary = seen.slice(-5).map((r) => `${r.id} ${r.method} ${r.path} ${r.status} rule=${r.rule}`).join("; ");
      throw new ModelControlError(`no model request matched within ${timeoutMs} ms (${seen.length} seen; last: ${summary || "none"})`);
    });
  }

  /** Waits until a request is held (e.g. after hold()); returns it. `timeoutMs` is paced unless `expectation` (see waitForRequest). */
  async waitForHeld(timeoutMs = 30_000, predicate: (h: HeldRequest) => boolean = () => true, signal?: AbortSignal, opts: { expectation?: boolean } = {}): Promise<HeldRequest> {
    const bound = opts.expectation ? "expectation" : "lab";
    return waitFor("a held model request", async () => (await this.held()).find(predicate), { timeoutMs, bound, intervalMs: 100, signal }).catch((err: unknown) => {
      throw err instanceof WaitTimeout ? new ModelControlError(`no model request was held within ${timeoutMs} ms`) : err;
    });
  }
}
