// Evidence that outlives the run folder: for a finding seen in a run, a small trimmed excerpt
// kept in the repository (fixtures/findings/<id>.json, a few KB), which its record's
// `evidence` points to. It holds what the check observed and the RAW evidence that decided it:
// frames of the lab's transcripts (operator RPC results and events, node frames through the tap)
// and container log lines (gateway, node hosts, the model and MCP servers), taken from the
// scenario's time window up to the moment the check was judged. The lab's own lines (the
// scenario log) are kept as context, never as the evidence itself.
//
// What is searched for, from the observed signature and the scenario log:
//   needles    telling strings: error codes, method names, messages (strings of the signature)
//   fragments  the signature's key/value pairs as JSON (`"available":1`, `"state":"active"`),
//              per object: a frame carrying every pair of one object shows that object
//   values     the signature's words ("timeout", "aborted"), as a JSON value or a log word:
//              a signature whose keys are the lab's own names (agentWait: "timeout") is found
//              by the value a raw frame carried ("status":"timeout")
//   ids        what the scenario's log lines just before the check point to (run ids,
//              model request ids, call ids, the nonces of its messages): for a signature of
//              counts or booleans, what made it true is in the frames and lines those ids name
//   drift      a protocol-drift signature ({ frame: "event agent", path: "lane" }): frames of
//              that kind carrying that field
// Frames and lines are ranked by what they carry (a needle or a whole object above a value, a
// value above an id); each frame says what it carries. The deciding ones (a needle, a whole
// object, the drift field, a value few texts carry) are ALL kept, not the best few: the frame
// that shows the signature's value may be the fifth that carries its key. Every text is redacted
// (the topology's gateway token, values under credential keys) and cut around EVERYTHING it
// carries, not its first match only (a frame's deciding `"state":"interrupted"` may sit 2 KB after
// the id that matched first). Beside them, the requests the lab sent in the scenario's window
// (`requests`: method and params), for the bug report's protocol-level steps.
// decidingProblems() says what an excerpt lacks of this (lab/findings/registry.test.ts).
//   fleetlab excerpt RUN [FINDING...]   (make excerpt RUN=<id or folder> [IDS="..."])
import fs from "node:fs";
import path from "node:path";
import { Redactor } from "../evidence/redact.ts";
import { TranscriptsLine, parseJsonLine } from "../evidence/records/index.ts";
import type { RunRecord } from "../evidence/run.ts";
import { ROOT } from "../core/paths.ts";
import { normaliseText } from "./normalise.ts";

export const EXCERPTS_DIR = path.join(ROOT, "fixtures", "findings");
/** A finding id as a file name ("F-protocol-drift res connect auth.method" -> "F-protocol-drift-res-connect-auth.method"). */
export const excerptFile = (id: string): string => `${id.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/-+$/, "")}.json`;
/** Where a finding's excerpt lives, relative to the repository (what its record's evidence says). */
export const excerptPath = (id: string): string => path.join("fixtures", "findings", excerptFile(id));

/** Budget of one excerpt: it stays small enough to read in a review. */
const MAX = { scenarioLog: 8, context: 4, logs: 12, frames: 6, deciding: 16, requests: 16, request: 400, line: 300, frame: 600, bytes: 8_000, decidingBytes: 24_000 };
/** The outcomes of a check that saw the finding (a "fixed?" or a pass did not). */
const SEEN = new Set(["known-finding", "fail"]);
/** A check is judged after what decided it, moments later at most (the scenario logs the check as it judges). */
const SLACK_MS = 1_000;

export interface Excerpt {
  id: string;
  scenario: string;
  version: string;
  run: string;
  outcome: string;
  expectation: string;
  observed: unknown;
  /** Scenario log lines about this check, after the lines just before it that say what the scenario saw (context, not evidence). */
  scenarioLog: string[];
  /** Container log lines that carry what was searched for: "<file>: <line>". */
  logs: string[];
  /** Transcript frames that carry what was searched for (trimmed records, each with what it carries). */
  frames: unknown[];
  /** What was searched for (needles, fragments, values, ids; see the head of lab/findings/excerpt.ts). */
  needles: string[];
  /**
   * What of the signature the raw texts of the scenario's window carried when the excerpt was cut
   * (needles, whole objects, values few texts carry, a drift's frame and field; not ids): each is
   * carried by a frame or line kept here (decidingProblems). Absent in an excerpt cut before this rule.
   */
  deciding?: string[];
  /** The requests the lab sent in the scenario's window, in order (one of each method and params): the report's protocol steps. */
  requests?: SentRequest[];
}

/** A request the lab sent to the gateway, as its transcript recorded it (params redacted and cut). */
export interface SentRequest {
  t: number;
  conn?: string;
  method: string;
  params: string;
  /** How many times in a row the same request was sent (a poll), when more than once. */
  times?: number;
}

/** Raw evidence in an excerpt: frames or container log lines, not only the lab's own lines. */
export const hasRawEvidence = (ex: Pick<Excerpt, "logs" | "frames">): boolean => ex.logs.length + ex.frames.length > 0;

/** The telling strings of an observed signature: string values of 5+ characters that are not placeholders, and error-code-like words. */
export function needlesOf(observed: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      const s = v.replace(/<(uuid|id|time|n)>/g, " ").trim();
      for (const code of s.match(/\b[A-Z][A-Z0-9_]{4,}\b/g) ?? []) out.add(code);
      for (const cmd of s.match(/\b[a-z]+(?:\.[a-zA-Z0-9]+){1,4}\b/g) ?? []) if (cmd.length >= 8) out.add(cmd);
      // a message: its longest run without placeholders, when long enough to be specific
      const part = s.split(/\s{2,}|[<>]/).sort((a, b) => b.length - a.length)[0] ?? "";
      if (part.length >= 12) out.add(part.slice(0, 60));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(observed);
  return [...out].slice(0, 8);
}

export interface Probes {
  needles: string[];
  /** Per object of the signature, its primitive key/value pairs as JSON. */
  groups: string[][];
  values: string[];
  ids: string[];
  drift?: { kind: "event" | "res"; name: string; key: string };
}

/** A bound the scenario asserts (within_s: 45, after_s_at_least: 6), not something OpenClaw sent. */
const BOUND_KEY = /(^|_)s($|_)|_s_|_ms$|^within/;
const PLACEHOLDER = /<[^>]*>/;

/** What to search the run's frames and logs for, from the observed signature and the scenario's context lines. */
export function probesOf(observed: unknown, context: string[] = [], earlier: string[] = []): Probes {
  const groups: string[][] = [];
  const values = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      for (const x of v) {
        if (typeof x === "string" && /^[a-z][a-z_-]{3,}$/i.test(x)) values.add(x);
        walk(x);
      }
    } else if (v && typeof v === "object") {
      const pairs: string[] = [];
      for (const [k, x] of Object.entries(v)) {
        if (BOUND_KEY.test(k)) continue;
        if (typeof x === "string" && !PLACEHOLDER.test(x)) {
          pairs.push(`${JSON.stringify(k)}:${JSON.stringify(x)}`);
          if (/^[a-z][a-z_-]{3,}$/i.test(x)) values.add(x);
        } else if (typeof x === "number" || typeof x === "boolean" || x === null) pairs.push(`${JSON.stringify(k)}:${JSON.stringify(x)}`);
        else walk(x);
      }
      if (pairs.length) groups.push(pairs);
    }
  };
  walk(observed);
  const o = observed as { frame?: unknown; path?: unknown; rule?: unknown } | undefined;
  const m = typeof o?.frame === "string" && typeof o.path === "string" && o.rule === "additionalProperties" ? /^(event|res) (\S+)$/.exec(o.frame) : null;
  const drift = m ? { kind: m[1] as "event" | "res", name: m[2]!, key: String(o!.path).split(".").at(-1)!.replace(/\[\]$/, "") } : undefined;
  // The context's ids first, then those of the scenario's earlier lines, latest first: a frame
  // carrying two of them (the recovery turn's message with the lost turn's partial reply) is the one.
  const ids = new Set<string>();
  for (const l of [...context, ...[...earlier].reverse()]) {
    for (const id of l.match(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g) ?? []) ids.add(id);
    for (const id of l.match(/\b(?:req|call)[-_][0-9a-zA-Z]{1,32}\b/g) ?? []) ids.add(id);
    // The nonces scenarios put in their messages (mt-ace933, rec-df70a4): the frames that carried that message.
    for (const id of l.match(/\b[a-z]{2,5}-[0-9a-f]{6}\b/g) ?? []) ids.add(id);
  }
  // A drift signature names a frame kind and a field, nothing a frame would carry as text.
  if (drift) return { needles: [], groups: [], values: [], ids: [], drift };
  return { needles: needlesOf(observed), groups, values: [...values], ids: [...ids].slice(0, 12) };
}

/** What a text carries of the probes, each with its weight (a value's weight is settled later, by how common it is). */
export interface Carried {
  score: number;
  carries: string[];
  /** The values it carries (their weight depends on how many texts carry them). */
  values: string[];
  /** Where the first thing it carries is. */
  at: number;
  /** Where each thing it carries is, [start, end) (the cut keeps every one). */
  spans: [number, number][];
  /** It carries a needle, a whole object or the drift field (the signature's own value, not only an id or a value). */
  deciding: boolean;
}

/** How much a text carries of the probes, and what: a needle 5, a whole object 3 per pair, an id 1; values are counted apart. */
export function scoreText(text: string, p: Probes, form: "json" | "log"): Carried {
  let score = 0;
  const carries: string[] = [];
  const values: string[] = [];
  const spans: [number, number][] = [];
  let at = -1;
  let deciding = false;
  const hit = (s: string, weight: number, where: [number, number][]) => {
    score += weight;
    carries.push(s);
    spans.push(...where);
    const i = Math.min(...where.map((w) => w[0]));
    if (at < 0 || i < at) at = i;
  };
  for (const n of p.needles) {
    const i = text.indexOf(n);
    if (i >= 0) {
      hit(n, 5, [[i, i + n.length]]);
      deciding = true;
    }
  }
  for (const g of p.groups) {
    const idx = g.map((f) => text.indexOf(f));
    if (idx.every((i) => i >= 0)) {
      hit(
        g.join(","),
        3 * g.length,
        idx.map((i, k) => [i, i + g[k]!.length]),
      );
      deciding = true;
    }
  }
  for (const v of p.values) {
    const re = form === "json" ? new RegExp(`"[\\w.-]+":"${v}"`) : new RegExp(`\\b${v}\\b`);
    const m = re.exec(text);
    if (m) {
      hit(m[0], 0, [[m.index, m.index + m[0].length]]);
      values.push(v);
    }
  }
  for (const id of p.ids) {
    const i = text.indexOf(id);
    if (i >= 0) hit(id, 1, [[i, i + id.length]]);
  }
  return { score, carries, values, at, spans, deciding };
}

/**
 * A value's weight: 2 where few texts carry it ("timeout" in one agent.wait result), 1 where
 * many do ("active" in every health event): a common word tells nothing by itself.
 */
export function valueWeights(all: Pick<Carried, "values">[], common = 12): Map<string, number> {
  const n = new Map<string, number>();
  for (const c of all) for (const v of new Set(c.values)) n.set(v, (n.get(v) ?? 0) + 1);
  return new Map([...n].map(([v, k]) => [v, k <= common ? 2 : 1]));
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** `s` cut to `n` characters around position `at` (what the excerpt is there for stays in). */
export function cutAround(s: string, at: number, n: number): string {
  if (s.length <= n || at < n / 3) return cut(s, n);
  const start = Math.max(0, Math.min(at - Math.floor(n / 3), s.length - n));
  return `…${s.slice(start, start + n)}${start + n < s.length ? "…" : ""}`;
}

/**
 * `s` cut around EVERY span ([start, end)) it carries, not the first only: a window around each,
 * about `n` characters in all (more when the spans alone need it: a span is never cut), the
 * windows that touch merged, the gaps between them said with "…".
 */
export function cutAroundAll(s: string, spans: [number, number][], n: number): string {
  if (s.length <= n) return s;
  const sorted = [...spans].filter(([a, b]) => a >= 0 && b > a).sort((x, y) => x[0] - y[0]);
  if (sorted.length <= 1) return cutAround(s, sorted[0]?.[0] ?? 0, n);
  const pad = Math.max(20, Math.floor((n - sorted.reduce((k, [a, b]) => k + (b - a), 0)) / sorted.length));
  const windows: [number, number][] = [];
  for (const [a, b] of sorted) {
    const w: [number, number] = [Math.max(0, a - Math.floor(pad / 3)), Math.min(s.length, b + pad - Math.floor(pad / 3))];
    const last = windows.at(-1);
    if (last && w[0] <= last[1] + 1) last[1] = Math.max(last[1], w[1]);
    else windows.push(w);
  }
  return windows.map(([a, b], i) => `${a > 0 && (i === 0 || a > windows[i - 1]![1]) ? "…" : ""}${s.slice(a, b)}`).join("") + (windows.at(-1)![1] < s.length ? "…" : "");
}

function* filesUnder(dir: string, ext: RegExp): Generator<string> {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* filesUnder(p, ext);
    else if (ext.test(e.name)) yield p;
  }
}

/**
 * The candidates an excerpt keeps, in time order: EVERY deciding one (up to MAX.deciding; one of
 * each: a node.list polled 40 times is one frame, its latest), then the best of the others up to
 * `max` in all, ranked by what they carry, the latest first among equals; those carrying only an
 * id only when `weak` (nothing, frame or line, carries more).
 */
export function best<T extends { score: number; t: number; same: string; deciding: boolean }>(all: T[], max: number, weak: boolean): T[] {
  const seen = new Set<string>();
  const ranked = all.sort((a, b) => b.score - a.score || b.t - a.t).filter((c) => !seen.has(c.same) && !!seen.add(c.same));
  const deciding = ranked.filter((c) => c.deciding).slice(0, MAX.deciding);
  const others = ranked.filter((c) => !c.deciding && (weak || c.score >= 2)).slice(0, Math.max(0, max - deciding.length));
  return [...deciding, ...others].sort((a, b) => a.t - b.t);
}

/** The scenario log's lines about check `id`, and the run of other lines just before its first one (what the scenario saw). */
export function scenarioLines(lines: string[], id: string): { context: string[]; earlier: string[]; about: string[]; at?: number } {
  const first = lines.findIndex((l) => l.includes(id));
  if (first < 0) return { context: [], earlier: [], about: [] };
  const isCheck = (l: string) => / check /.test(l.slice(24, 60)) || /^\S+ (evidence )?check /.test(l);
  let end = first;
  while (end > 0 && isCheck(lines[end - 1]!)) end--;
  let start = end;
  while (start > 0 && !isCheck(lines[start - 1]!) && end - start < MAX.context) start--;
  const at = Date.parse(lines[first]!.slice(0, 30).match(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/)?.[0] ?? "");
  return { context: lines.slice(start, end), earlier: lines.slice(0, start).filter((l) => !isCheck(l)), about: lines.filter((l) => l.includes(id)), at: Number.isFinite(at) ? at : undefined };
}

/** Build the excerpt of finding `id` as seen in the run at `runDir`. */
export function buildExcerpt(runDir: string, record: RunRecord, id: string, red = Redactor.ofProcess()): Excerpt {
  // A "fixed?" check saw the expectation hold: evidence of the finding's absence, never of it.
  const check = (record.findings ?? []).find((c) => c.findingId === id && SEEN.has(c.outcome));
  if (!check) {
    const other = (record.findings ?? []).find((c) => c.findingId === id);
    throw new Error(`run ${record.id} did not see finding ${id} (no known-finding or fail of it in run.json${other ? `; it reads ${other.outcome} there` : ""})`);
  }
  const row = record.scenarios.find((s) => s.name === check.scenario);
  const scenarioDir = path.join(runDir, row?.evidence ?? path.join("scenarios", check.scenario));
  red.remember((record.topology as { gateway?: { token?: string } } | undefined)?.gateway?.token ?? "");

  const logFile = path.join(scenarioDir, "scenario.log");
  const lines = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").split("\n").filter(Boolean) : [];
  const seen = scenarioLines(lines, id);
  let probes = probesOf(check.observed, seen.context, seen.earlier);
  const scenarioLog = [...seen.context, ...seen.about].slice(0, MAX.scenarioLog).map((l) => cut(red.text(l), MAX.line));

  // The window: the scenario's start up to the moment the check was judged.
  const from = row?.startedAt ? Date.parse(row.startedAt) : -Infinity;
  const to = seen.at !== undefined ? seen.at + SLACK_MS : row?.endedAt ? Date.parse(row.endedAt) : Infinity;
  const inWindow = (t: number) => !Number.isFinite(t) || (t >= from && t <= to);

  // The lab the scenario ran on: its own (inside its folder) or the shared one of the run.
  const own = path.join(scenarioDir, "lab");
  const dirs = fs.existsSync(own) ? [own] : fs.readdirSync(runDir).filter((d) => d.startsWith("shared-lab")).map((d) => path.join(runDir, d));

  type Cand = { score: number; values: string[]; t: number; same: string; deciding: boolean; carried: string[] };
  const logCands: (Cand & { text: string })[] = [];
  const frameCands: (Cand & { keep: Record<string, unknown> })[] = [];
  const requests: SentRequest[] = [];
  const scan = (probes: Probes, requests?: SentRequest[]) => {
    for (const d of dirs) {
      // The tap's own log repeats the frames it forwards: the frames are taken from its transcript.
      for (const f of filesUnder(path.join(d, "logs"), /\.log$/)) {
        if (/^tap-/.test(path.basename(f))) continue;
        for (const l of fs.readFileSync(f, "utf8").split("\n")) {
          if (!l || !scoreText(l, probes, "log").carries.length) continue;
          const t = Date.parse(l.slice(0, 30).match(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/)?.[0] ?? "");
          if (!inWindow(t)) continue;
          // Scored again once redacted: the cut's spans are positions in the text kept.
          const shown = red.text(l);
          const s = scoreText(shown, probes, "log");
          if (!s.carries.length) continue;
          const text = `${path.basename(f)}: ${cutAroundAll(shown, s.spans, MAX.line)}`;
          logCands.push({ score: s.score, values: s.values, deciding: s.deciding, carried: s.carries, t: Number.isFinite(t) ? t : 0, same: normaliseText(text.replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z?/g, "")), text });
        }
      }
      for (const f of filesUnder(path.join(d, "transcripts"), /\.jsonl$/)) {
        for (const l of fs.readFileSync(f, "utf8").split("\n")) {
          if (!l) continue;
          // Every line is an operator entry or a tap record (lab/evidence/records); both carry their t.
          const line = parseJsonLine(l, TranscriptsLine);
          if (!line) continue;
          const rec: Record<string, unknown> = line;
          const t = line.t;
          if (!inWindow(t)) continue;
          // The lab's requests up to the check itself (not its slack: the next step's request is no step of this one).
        if (requests && /^operator/.test(path.basename(f)) && (seen.at === undefined || t <= seen.at)) sentRequest(rec, red, requests);
          const raw = typeof rec.text === "string" ? rec.text : rec.frame !== undefined ? JSON.stringify(rec.frame) : "";
          if (!raw) continue;
          const score = (text: string) => (probes.drift ? driftScore(rec, text, probes.drift) : scoreText(text, probes, "json"));
          if (!score(raw).carries.length) continue;
          const text = typeof rec.text === "string" ? red.jsonText(rec.text) : red.text(raw);
          const s = score(text);
          if (!s.carries.length) continue;
          const keep: Record<string, unknown> = { file: path.basename(f) };
          for (const k of ["seq", "t", "conn", "dir", "method", "event", "command", "replyTo", "errorCode", "errorDetailsCode"]) if (rec[k] !== undefined) keep[k] = rec[k];
          keep.carries = s.carries;
          keep[typeof rec.text === "string" ? "text" : "frame"] = cutAroundAll(text, s.spans, MAX.frame);
          const same = `${path.basename(f)} ${String(rec.method ?? rec.event ?? "")} ${normaliseText(String(keep.text ?? keep.frame)).replace(/\d+/g, "0")}`;
          frameCands.push({ score: s.score, values: s.values, deciding: s.deciding, carried: s.carries, t: Number.isFinite(t) ? t : 0, same, keep });
        }
      }
    }
  };
  scan(probes, requests);
  // Nothing in the run carries the signature (its keys and values are the lab's own words, and the
  // scenario's lines name no id): what the lab's own requests of the window name instead (the
  // session, the approval, the run), latest first; the frames and lines carrying them show what happened.
  if (!logCands.length && !frameCands.length) {
    const ids = new Set<string>();
    for (const r of [...requests].reverse()) for (const id of r.params.match(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g) ?? []) ids.add(id);
    probes = { ...probes, ids: [...ids].slice(0, 6) };
    scan(probes);
  }
  const weights = valueWeights([...logCands, ...frameCands]);
  for (const c of [...logCands, ...frameCands]) {
    for (const v of c.values) c.score += weights.get(v) ?? 0;
    // A value few texts carry is the signature's own ("timeout" in the one agent.wait result), and deciding as such.
    if (c.values.some((v) => weights.get(v) === 2)) c.deciding = true;
  }
  const weak = ![...logCands, ...frameCands].some((c) => c.score >= 2);
  // What of the signature the window's raw texts carry (not ids): every one of these stays in the excerpt.
  const deciding = [...new Set([...logCands, ...frameCands].filter((c) => c.deciding).flatMap((c) => c.carried.filter((x) => !probes.ids.includes(x))))];
  const logs = best(logCands, MAX.logs, weak);
  const frames = best(frameCands, MAX.frames, weak);
  const ex: Excerpt = {
    id,
    scenario: check.scenario,
    version: (record.topology as { openclawVersion?: string } | undefined)?.openclawVersion ?? "unknown",
    run: record.id,
    outcome: check.outcome,
    expectation: check.expectation,
    observed: red.value(check.observed),
    scenarioLog,
    logs: [],
    frames: [],
    needles: [...probes.needles, ...probes.groups.map((g) => g.join(",")), ...probes.values.map((v) => `value ${v}`), ...probes.ids.map((i) => `id ${i}`), ...(probes.drift ? [`${probes.drift.kind} ${probes.drift.name} with "${probes.drift.key}"`] : [])],
    deciding,
    requests: requests.slice(0, MAX.requests),
  };
  const fill = () => {
    ex.logs = logs.map((c) => c.text);
    ex.frames = frames.map((c) => c.keep);
  };
  fill();
  // Within budget: drop what is not deciding, frames then log lines, the latest first; what is
  // deciding goes only past a larger budget, and the last of either stays.
  const size = () => JSON.stringify(ex, null, 2).length;
  const drop = (from: Cand[], deciding: boolean) => {
    for (let i = from.length - 1; i >= 0; i--) if (from[i]!.deciding === deciding) return !!from.splice(i, 1);
    return false;
  };
  while (size() > MAX.bytes && logs.length + frames.length > 1 && (drop(frames, false) || drop(logs, false))) fill();
  while (size() > MAX.decidingBytes && logs.length + frames.length > 1 && (frames.length > (logs.length ? 0 : 1) ? drop(frames, true) : drop(logs, true))) fill();
  while (size() > MAX.decidingBytes && ex.requests!.length > 1) ex.requests!.pop();
  return ex;
}

/** A request the lab sent (an operator transcript's "out" "req"), added to `out` as a step: one of each, a run of the same one counted. */
function sentRequest(rec: Record<string, unknown>, red: Redactor, out: SentRequest[]): void {
  if (rec.dir !== "out" || rec.kind !== "req" || typeof rec.method !== "string") return;
  const frame = rec.frame as { params?: unknown } | undefined;
  const params = cut(red.text(JSON.stringify(red.value(frame?.params ?? {}))), MAX.request);
  const last = out.at(-1);
  if (last && last.method === rec.method && last.params === params) {
    last.times = (last.times ?? 1) + 1;
    return;
  }
  // A request sent before with the same params (a poll between other steps) is not a new step.
  if (out.some((r) => r.method === rec.method && r.params === params)) return;
  out.push({ t: Number(rec.t), ...(typeof rec.conn === "string" && { conn: rec.conn }), method: rec.method, params });
}

/** A drift signature's frame: of that kind (event name or the method answered) and carrying that key. */
function driftScore(rec: Record<string, unknown>, text: string, d: NonNullable<Probes["drift"]>): Carried {
  const type = (rec.kind ?? rec.type) as string | undefined;
  const named = d.kind === "event" ? rec.event === d.name || text.includes(`"event":"${d.name}"`) : rec.method === d.name && (type === "res" || text.includes(`"type":"res"`));
  const at = text.indexOf(`"${d.key}":`);
  return named && at >= 0 ? { score: 10, carries: [`${d.kind} ${d.name}`, `"${d.key}"`], values: [], at, spans: [[at, at + d.key.length + 3]], deciding: true } : { score: 0, carries: [], values: [], at: -1, spans: [], deciding: false };
}

/** Write excerpts for these findings (default: every finding the run saw) into fixtures/findings/. */
export function writeExcerpts(runDir: string, record: RunRecord, ids?: string[], outDir = EXCERPTS_DIR): { id: string; file: string; bytes: number; raw: boolean }[] {
  const seen = [...new Set((record.findings ?? []).filter((c) => SEEN.has(c.outcome)).map((c) => c.findingId))];
  // An id also by its file name (F-protocol-drift-event-agent-lane): ids with spaces are awkward on a command line.
  const want = ids?.length ? ids.map((id) => seen.find((s) => excerptFile(s) === excerptFile(id)) ?? id) : seen;
  fs.mkdirSync(outDir, { recursive: true });
  return want.map((id) => {
    // One Redactor for the whole excerpt, and a last pass over its text: a credential learnt from
    // a later frame is hidden in the log lines taken before it too.
    const red = Redactor.ofProcess();
    const ex = buildExcerpt(runDir, record, id, red);
    const file = path.join(outDir, excerptFile(id));
    const text = red.jsonText(JSON.stringify(ex, null, 2)) + "\n";
    fs.writeFileSync(file, text);
    return { id, file, bytes: text.length, raw: hasRawEvidence(ex) };
  });
}

/**
 * What an excerpt lacks of the evidence that decided its finding, one line each (empty: sound):
 *   - raw evidence: a frame or a container log line, not only the lab's own lines;
 *   - the deciding value: where the signature has one a raw text can carry (a needle, a whole
 *     object of its key/value pairs, a value, a drift signature's field), a frame or line carries it;
 *   - each frame carries in its text what it says it carries (the cut kept it).
 * A signature of counts and booleans only (nothing a raw text carries) is found through ids: raw
 * evidence is all that can be asked of it.
 */
export function decidingProblems(ex: Pick<Excerpt, "observed" | "logs" | "frames" | "deciding">): string[] {
  if (!hasRawEvidence(ex)) return ["no raw evidence: no frame, RPC result or container log line"];
  const out: string[] = [];
  const texts = (ex.frames as Record<string, unknown>[]).map((fr) => ({ fr, text: String(fr.text ?? fr.frame ?? "") }));
  // What a text carries is in it: a whole object's pairs all, a drift's field as a key (its frame kind is the record's).
  const holds = (text: string, c: string) => /^(event|res) \S+$/.test(c) || (/^"[^"]+"$/.test(c) ? text.includes(`${c}:`) || text.includes(c) : c.split(/,(?=")/).every((part) => text.includes(part)));
  for (const { fr, text } of texts) {
    const lost = ((fr.carries as string[] | undefined) ?? []).filter((c) => !holds(text, c));
    if (lost.length) out.push(`a frame (${String(fr.file)} ${String(fr.method ?? fr.event ?? "")} at ${String(fr.t)}) says it carries ${lost.map((c) => JSON.stringify(c)).join(", ")}, cut away from its text`);
  }
  if (ex.deciding) {
    // Cut by the rule: what the run carried of the signature, every piece kept.
    const all = [...texts.map((x) => x.text), ...ex.logs];
    const missing = ex.deciding.filter((c) => !all.some((t) => holds(t, c)));
    if (missing.length) out.push(`the run carried ${missing.map((c) => JSON.stringify(c)).join(", ")} of the signature, and no frame or line kept here does (cut again: make excerpt)`);
    return out;
  }
  // Cut before the rule: the signature's deciding value, as its probes find it, must be here.
  const p = probesOf(ex.observed);
  const frameTexts = texts.map((x) => x.text);
  if (p.drift) {
    const d = p.drift;
    const ok = texts.some(({ fr, text }) => text.includes(`"${d.key}":`) && (d.kind === "event" ? fr.event === d.name || text.includes(`"event":"${d.name}"`) : fr.method === d.name));
    if (!ok) out.push(`no frame of ${d.kind} ${d.name} carries the field "${d.key}" (the drift's deciding value)`);
    return out;
  }
  if (!p.needles.length && !p.groups.length && !p.values.length) return out;
  const carried = [...frameTexts.map((t) => scoreText(t, p, "json")), ...ex.logs.map((l) => scoreText(l, p, "log"))];
  if (!carried.some((c) => c.deciding || c.values.length)) {
    const wanted = [...p.needles, ...p.groups.map((g) => g.join(",")), ...p.values.map((v) => `value ${v}`)];
    out.push(`no frame or log line carries the signature's deciding value (any of: ${wanted.join("; ")})`);
  }
  return out;
}
