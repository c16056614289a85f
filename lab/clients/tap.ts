// Host-side client for the wire tap's control API (docker/faultproxy/control.ts): read the
// WebSocket frames and HTTP exchanges that passed between node hosts and the gateway, wait for a
// protocol point, add and remove fault rules, heal, and save the transcript as evidence.
// The tap records frames as sent, credentials included (the node's connect carries the shared
// gateway token, the gateway's hello-ok the node's issued device token): every frame read
// through this client, and the saved transcript, has them redacted (lab/evidence/redact.ts).
// The rule format (docker/faultproxy/rules.ts) and every route with its reply
// (docker/faultproxy/wire.ts) are defined once, by the tap; this client imports them.

import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { OpcodeName, TapMatch, TapRule, TapRuleSpec } from "../../docker/faultproxy/rules.ts";
import type { Frame, HttpExchange, Healed, TapConnection, TapControlApi, TapHealth, TapRecord } from "../../docker/faultproxy/wire.ts";
import { ControlClient } from "./control.ts";
import { WaitTimeout, waitFor } from "../core/wait.ts";
import { Redactor } from "../evidence/redact.ts";

export { closeCodeProblem } from "../../docker/faultproxy/rules.ts";
export type { ActionType, CloseCode, CloseSide, Dir, Firing, OpcodeName, RuleAction, RuleMatch, TapAction, TapMatch, TapRule, TapRuleSpec } from "../../docker/faultproxy/rules.ts";
export type { ConnEvent, Frame, FrameAction, Healed, HttpExchange, RuleEvent, TapConnection, TapEvent, TapHealth, TapRecord } from "../../docker/faultproxy/wire.ts";

/** WebSocket opcodes as recorded in Frame.opcode. */
export const WS_OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const satisfies Record<OpcodeName, number>;

/** Frame filter with the same meaning as a rule's match (kind is ignored). */
export function frameMatches(m: TapMatch, f: Frame): boolean {
  if (m.dir && f.dir !== m.dir) return false;
  if (m.conn && f.conn !== m.conn) return false;
  if (m.path && !(m.path.endsWith("*") ? (f.path ?? "").startsWith(m.path.slice(0, -1)) : f.path === m.path)) return false;
  if (m.opcode !== undefined && f.opcode !== (typeof m.opcode === "number" ? m.opcode : WS_OPCODE[m.opcode])) return false;
  if (m.method && f.method !== m.method) return false;
  if (m.event && f.event !== m.event) return false;
  if (m.command && f.command !== m.command) return false;
  if (m.textIncludes && !(f.text ?? "").includes(m.textIncludes)) return false;
  return true;
}

/** One line per frame for error messages and logs. */
export function describeFrame(f: Frame): string {
  const what = f.method ?? f.event ?? (f.type === "res" ? `res${f.replyTo ? `(${f.replyTo})` : ""} ${f.ok === false ? `error ${f.errorCode ?? ""}` : "ok"}` : undefined);
  const extra = f.command ? ` ${f.command}` : f.close ? ` close ${f.close.code}` : "";
  return `#${f.seq} ${f.conn} ${f.path ?? "?"} ${f.dir} op${f.opcode} ${what ?? (f.text !== undefined ? JSON.stringify(f.text.slice(0, 60)) : `${f.len} B`)}${extra} [${f.action}]`;
}

export class TapControlError extends Error {}

/** A record with the credentials in its frame text replaced (in place), learning them for `known`. */
export function redactRecord<R extends TapRecord>(r: R, redactor: Redactor): R {
  if (r.kind === "frame" && r.text !== undefined) {
    // A whole JSON frame stays the same JSON, byte for byte except the secrets: the values under
    // credential keys are learnt from a parsed copy and replaced where they stand. Only a frame
    // that is not JSON (cut short by the recorder) goes through the raw-text rules, whose header
    // pattern runs to the end of a line and would cut a JSON frame that quotes such a header.
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.text);
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined) {
      redactor.value(parsed); // learns every credential value, escaped ones included
      r.text = redactor.jsonText(r.text);
    } else r.text = redactor.text(r.text);
  }
  return r;
}

/**
 * JSON lines of tap records (a transcript, or the tap's own stdout log) with every credential
 * replaced: first every frame's text (credential keys, learning their values: the shared
 * token from a connect, a device token from a hello-ok), then every value learnt, wherever it
 * stands on any line (a token learnt from a later frame is also replaced in an earlier one).
 */
export function redactTapLines(lines: string[], redactor: Redactor): string[] {
  const first = lines.map((line) => {
    // A container log line starts with the engine's timestamp: "2026-11-30T07:34:01.5Z {...}".
    const [, prefix = "", json = line] = /^(\S+ )(\{.*)$/.exec(line) ?? [];
    let rec: TapRecord;
    try {
      rec = JSON.parse(json) as TapRecord;
    } catch {
      return redactor.text(line);
    }
    return rec && typeof rec === "object" && "kind" in rec ? prefix + JSON.stringify(redactRecord(rec, redactor)) : redactor.text(line);
  });
  return first.map((line) => redactor.known(line));
}

export class TapControl extends ControlClient<TapControlApi> {
  /** Credentials seen on this tap's wire (pass the lab's one: it knows the gateway token). */
  readonly redactor: Redactor;

  /** baseUrl: the control API root, e.g. http://172.20.0.5:9099 */
  constructor(baseUrl: string, opts: { redactor?: Redactor } = {}) {
    super(baseUrl, { name: "tap", timeoutMs: 15_000, error: TapControlError });
    this.redactor = opts.redactor ?? new Redactor();
  }

  async health(): Promise<TapHealth> {
    return this.call("GET /healthz");
  }

  /** Recorded WebSocket frames with seq > since, oldest first. */
  async frames(opts: { since?: number; conn?: string; match?: string; limit?: number } = {}): Promise<Frame[]> {
    const { since, conn, match, limit } = opts;
    return (await this.call("GET /frames", { query: { since, conn, match, limit } })).frames.map((f) => this.#redact(f));
  }

  async http(opts: { since?: number; conn?: string } = {}): Promise<HttpExchange[]> {
    const { since, conn } = opts;
    return (await this.call("GET /http", { query: { since, conn } })).http;
  }

  /** Everything recorded (frames, HTTP exchanges, connection and rule events) in seq order. */
  async events(opts: { since?: number } = {}): Promise<TapRecord[]> {
    return (await this.call("GET /events", { query: { since: opts.since } })).events.map((r) => this.#redact(r));
  }

  async connections(): Promise<TapConnection[]> {
    return (await this.call("GET /connections")).connections;
  }

  /** The current seq: pass it as `since` to see only what happens from now on. */
  async seq(): Promise<number> {
    return (await this.health()).seq;
  }

  /**
   * Polls (every ~50 ms) until a frame with seq > since satisfies `predicate` (a function, or a
   * match with the rules' meaning); returns it. On timeout the error names what it waited for
   * and the last frames seen. `timeoutMs` is paced (lab/core/pace.ts) unless `expectation` makes
   * it the fixed bound that is judged.
   */
  async waitForFrame(predicate: TapMatch | ((f: Frame) => boolean), opts: { timeoutMs?: number; since?: number; intervalMs?: number; what?: string; signal?: AbortSignal; expectation?: boolean } = {}): Promise<Frame> {
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const test = typeof predicate === "function" ? predicate : (f: Frame) => frameMatches(predicate, f);
    const what = opts.what ?? (typeof predicate === "function" ? predicate.toString().replace(/\s+/g, " ").slice(0, 200) : JSON.stringify(predicate));
    let cursor = opts.since ?? 0;
    let recent: Frame[] = [];
    let seen = 0;
    const probe = async (): Promise<Frame | undefined> => {
      const batch = await this.frames({ since: cursor });
      for (const f of batch) {
        if (test(f)) return f;
        cursor = f.seq;
      }
      seen += batch.length;
      recent = [...recent, ...batch].slice(-8);
      return undefined;
    };
    return waitFor(`tap frame ${what}`, probe, { timeoutMs, bound: opts.expectation ? "expectation" : "lab", intervalMs: opts.intervalMs ?? 50, signal: opts.signal }).catch((err: unknown) => {
      if (!(err instanceof WaitTimeout)) throw err;
      const last = recent.map(describeFrame).join("\n  ");
      throw new TapControlError(`no tap frame matched ${what} within ${timeoutMs} ms (${seen} frames seen since seq ${opts.since ?? 0}); last frames:\n  ${last || "none"}`);
    });
  }

  async rules(): Promise<TapRule[]> {
    return (await this.call("GET /rules")).rules;
  }

  async rule(id: string): Promise<TapRule | undefined> {
    return (await this.rules()).find((r) => r.id === id);
  }

  /** Adds a fault rule (the tap checks it: a bad one is refused with the reason); it acts on the next matching frame. */
  async addRule(spec: TapRuleSpec): Promise<TapRule> {
    return (await this.call("POST /rules", { body: spec })).rule;
  }

  /** Removes one rule and undoes its half-open connections / freeze. */
  async removeRule(id: string): Promise<void> {
    await this.call("DELETE /rules/:id", { id });
  }

  /** Heals everything: removes all rules, resumes held connections, delivers delayed frames. */
  async heal(): Promise<{ removed: string[]; healed: Healed }> {
    const { removed, healed } = await this.call("DELETE /rules");
    return { removed, healed };
  }

  /** Heals and forgets all records (seq keeps counting). */
  async reset(): Promise<void> {
    await this.call("POST /reset");
  }

  /** Writes every record the tap holds (frames, HTTP exchanges, connection and rule events) as
   * JSON lines; returns how many. */
  async saveTranscript(file: string): Promise<number> {
    const all = await this.events();
    await mkdir(dirname(file), { recursive: true });
    const lines = redactTapLines(all.map((r) => JSON.stringify(r)), this.redactor);
    await writeFile(file, lines.join("\n") + (lines.length ? "\n" : ""));
    return all.length;
  }

  /** A record as scenarios and evidence may see it: credentials in frame text, and any learnt before, replaced. */
  #redact<R extends TapRecord>(r: R): R {
    return redactRecord(r, this.redactor);
  }
}
