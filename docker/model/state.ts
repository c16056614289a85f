// What the model server keeps between requests: the rules in force and how often each answered,
// every request record, the armed control holds and failures, and the streams held now.

import { randomBytes } from "node:crypto";
import { loadScripts, matches, type Groups, type LoadedRule, type Step } from "./script.ts";
import type { Facts } from "./request-facts.ts";
import type { ArmedFail, ArmedHold, ModelRequest } from "./wire.ts";
import { log } from "./io.ts";

/** A record as kept: the raw body stays until the request is parsed. */
export type StoredRequest = ModelRequest & { rawBody?: string };

/** A held stream; release(true) when its client went away. */
export interface HeldStream {
  record: StoredRequest;
  release: (aborted: boolean) => void;
}

export const rid = (prefix: string): string => `${prefix}_${randomBytes(12).toString("hex")}`;

export class ModelState {
  rules: LoadedRule[] = [];
  records: StoredRequest[] = [];
  seq = 0;
  holds: ArmedHold[] = [];
  fails: ArmedFail[] = [];
  /** Request id -> its held stream. */
  readonly held = new Map<string, HeldStream>();
  /** Rule id -> answered count (for "times"). */
  readonly ruleUses = new Map<string, number>();
  readonly scriptsDir: string;
  readonly defaultScript: string;
  readonly maxRecords: number;

  constructor(opts: { scriptsDir: string; defaultScript: string; maxRecords: number }) {
    this.scriptsDir = opts.scriptsDir;
    this.defaultScript = opts.defaultScript;
    this.maxRecords = opts.maxRecords;
  }

  loadScripts(): LoadedRule[] {
    return loadScripts(this.scriptsDir, this.defaultScript, log);
  }

  addRecord(rec: StoredRequest): StoredRequest {
    this.records.push(rec);
    if (this.records.length > this.maxRecords) this.records.splice(0, this.records.length - this.maxRecords);
    return rec;
  }

  /** Takes one use of the first armed hold or failure matching this request. */
  takeArmed<A extends ArmedHold | ArmedFail>(list: A[], facts: Facts, model: string | null): A | undefined {
    const i = list.findIndex((a) => a.remaining > 0 && matches(a.match, facts, model).ok);
    if (i < 0) return undefined;
    const a = list[i]!;
    a.remaining--;
    if (a.remaining <= 0) list.splice(i, 1);
    return a;
  }

  /** The first rule in force that matches (and is not spent), with the steps for this round. */
  pickRule(facts: Facts, model: string | null): { rule: LoadedRule; steps: Step[]; groups: Groups } | undefined {
    for (const r of this.rules) {
      if (r.times !== undefined && (this.ruleUses.get(r.id) ?? 0) >= r.times) continue;
      const m = matches(r.match, facts, model);
      if (!m.ok) continue;
      this.ruleUses.set(r.id, (this.ruleUses.get(r.id) ?? 0) + 1);
      // A loaded rule has reply or rounds (script.ts checked that).
      const steps = r.rounds ? r.rounds[Math.min(facts.round, r.rounds.length - 1)]! : r.reply!;
      return { rule: r, steps, groups: m.groups };
    }
    return undefined;
  }

  /** Releases one held stream, or all; returns the request ids released. */
  releaseHeld(id?: string): string[] {
    const ids = id ? [id] : [...this.held.keys()];
    const released: string[] = [];
    for (const i of ids) {
      const h = this.held.get(i);
      if (h) {
        h.release(false);
        released.push(i);
      }
    }
    return released;
  }

  /** Reloads the start-up rules and forgets everything else; returns the released request ids. */
  reset(): string[] {
    const fresh = this.loadScripts(); // first: a broken script file leaves the state untouched
    const released = this.releaseHeld();
    this.rules = fresh;
    this.records = [];
    this.holds = [];
    this.fails = [];
    this.ruleUses.clear();
    return released;
  }
}
