// The script format of the scripted model, defined once: the rules lab/clients/model.ts sends and
// fixtures/model/*.json hold, how they are checked and loaded, and how a rule matches a request
// and fills in its templates.
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
// A control "match" (hold, fail) has the rule match keys, or is a plain string (= contains).

import fs from "node:fs";
import path from "node:path";
import type { Facts } from "./request-facts.ts";

// ---------- the format ----------

export interface MatchFields {
  contains?: string | string[];
  regex?: string;
  flags?: string;
  round?: number;
  hasToolOutput?: boolean;
  userTurn?: number;
  model?: string;
  tool?: string;
}
/** A plain string means { contains: string }. */
export type Match = string | MatchFields;

export interface TextStep {
  text: string;
  chunks?: number;
  holdAfter?: number;
}
export interface ToolCallStep {
  toolCall: { name: string; arguments?: string | Record<string, unknown>; callId?: string };
  chunks?: number;
}
export interface HoldStep {
  hold: true;
}
export interface DelayStep {
  delayMs: number;
}
export interface FailStep {
  fail: { status?: number; body?: unknown; message?: string; code?: string; headers?: Record<string, string> };
}
export interface DropStep {
  drop: true;
}
export type Step = TextStep | ToolCallStep | HoldStep | DelayStep | FailStep | DropStep;

export interface Rule {
  /** Default: where it was found, e.g. "default.json#1" or "control#0". */
  id?: string;
  match?: Match;
  times?: number;
  chunkDelayMs?: number;
  reply?: Step[];
  rounds?: Step[][];
}

/** A rule as loaded (and listed by GET /_control/script): id filled in, match as an object. */
export interface LoadedRule extends Rule {
  id: string;
  match: MatchFields;
}

/** Where POST /_control/script puts new rules: before (default), after, or instead of the others. */
export type ScriptMode = "prepend" | "append" | "replace";

// ---------- checking and loading ----------

export class ScriptError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === "object";

export function validateMatch(m: unknown, where: string): MatchFields {
  if (m === undefined || m === null) return {};
  if (typeof m === "string") return { contains: m };
  if (typeof m !== "object" || Array.isArray(m)) throw new ScriptError(`${where}: match must be an object or string`);
  const known = ["contains", "regex", "flags", "round", "hasToolOutput", "userTurn", "model", "tool"];
  for (const k of Object.keys(m)) if (!known.includes(k)) throw new ScriptError(`${where}: unknown match key "${k}"`);
  const fields = m as MatchFields;
  if (fields.regex !== undefined) {
    try {
      new RegExp(fields.regex, fields.flags ?? "");
    } catch (e) {
      throw new ScriptError(`${where}: bad regex: ${(e as Error).message}`);
    }
  }
  return fields;
}

function validateSteps(steps: unknown, where: string): Step[] {
  if (!Array.isArray(steps)) throw new ScriptError(`${where}: steps must be an array`);
  steps.forEach((s: unknown, i) => {
    const w = `${where}[${i}]`;
    if (!isObject(s)) throw new ScriptError(`${w}: step must be an object`);
    const kinds = ["text", "toolCall", "hold", "delayMs", "fail", "drop"].filter((k) => k in s);
    if (kinds.length !== 1) throw new ScriptError(`${w}: step needs exactly one of text|toolCall|hold|delayMs|fail|drop`);
    if ("text" in s && typeof s.text !== "string") throw new ScriptError(`${w}: text must be a string`);
    const call = s.toolCall as { name?: unknown } | undefined;
    if ("toolCall" in s && (typeof call?.name !== "string" || !call.name)) throw new ScriptError(`${w}: toolCall.name must be a non-empty string`);
    if ("fail" in s && typeof s.fail !== "object") throw new ScriptError(`${w}: fail must be an object`);
  });
  return steps as Step[];
}

function validateRule(r: unknown, where: string): LoadedRule {
  if (!isObject(r) || Array.isArray(r)) throw new ScriptError(`${where}: rule must be an object`);
  const id = typeof r.id === "string" && r.id ? r.id : where;
  const match = validateMatch(r.match, `${id}.match`);
  if (r.reply === undefined && r.rounds === undefined) throw new ScriptError(`${id}: rule needs reply or rounds`);
  const reply = r.reply === undefined ? undefined : validateSteps(r.reply, `${id}.reply`);
  let rounds: Step[][] | undefined;
  if (r.rounds !== undefined) {
    if (!Array.isArray(r.rounds) || r.rounds.length === 0) throw new ScriptError(`${id}: rounds must be a non-empty array`);
    rounds = r.rounds.map((s, i) => validateSteps(s, `${id}.rounds[${i}]`));
  }
  return { ...(r as Rule), id, match, reply, rounds };
}

/** Checks {"rules":[...]} or a bare array; `where` names the source in errors. */
export function validateRules(list: unknown, where: string): LoadedRule[] {
  const arr = Array.isArray(list) ? list : isObject(list) ? list.rules : undefined;
  if (!Array.isArray(arr)) throw new ScriptError(`${where}: expected {"rules":[...]} or an array`);
  return arr.map((r, i) => validateRule(r, `${where}#${i}`));
}

export function loadScriptFile(dir: string, name: string): LoadedRule[] {
  if (!/^[\w.-]+$/.test(name)) throw new ScriptError(`bad script name "${name}"`);
  const f = name.endsWith(".json") ? name : `${name}.json`;
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, f), "utf8");
  } catch {
    throw new ScriptError(`no script ${f} in ${dir}`);
  }
  try {
    return validateRules(JSON.parse(text), f);
  } catch (e) {
    throw e instanceof ScriptError ? e : new ScriptError(`${f}: ${(e as Error).message}`);
  }
}

/** Start-up (and reset) rules: the default script's file if set, else every *.json by name. */
export function loadScripts(dir: string, defaultScript: string, log: (msg: string) => void): LoadedRule[] {
  if (defaultScript) return loadScriptFile(dir, defaultScript);
  let files: string[] = [];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
  } catch (e) {
    log(`no scripts dir ${dir}: ${(e as Error).message}`);
  }
  return files.flatMap((f) => loadScriptFile(dir, f));
}

// ---------- matching and templates ----------

/** Regex groups of a match: by number, and by name under .groups. */
export interface Groups {
  readonly [i: number]: string | undefined;
  groups?: Record<string, string | undefined>;
}

export function matches(m: Match | undefined, facts: Facts, model: string | null): { ok: true; groups: Groups } | { ok: false } {
  if (!m) return { ok: true, groups: [] };
  if (typeof m === "string") m = { contains: m };
  let groups: Groups = [];
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

export interface RenderContext {
  facts: Facts;
  groups: Groups;
  requestId: string;
}

export function render(tpl: string, ctx: RenderContext): string {
  return tpl.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key: string) => {
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

/** Tool call arguments as the JSON string the Responses API carries, templates filled in. */
export function renderArgs(args: ToolCallStep["toolCall"]["arguments"], ctx: RenderContext): string {
  if (args === undefined) return "{}";
  if (typeof args === "string") return render(args, ctx);
  const walk = (v: unknown): unknown =>
    typeof v === "string" ? render(v, ctx) : Array.isArray(v) ? v.map(walk) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)])) : v;
  return JSON.stringify(walk(args));
}
