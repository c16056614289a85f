// Frames against OpenClaw's own published protocol (npm @openclaw/gateway-protocol, which ships
// protocol.schema.json): every frame of the operator transcript and of the wire taps in a
// scenario's window is validated with the schema of the installed package version nearest the
// version under test. The validator is TypeBox's JSON Schema compiler (typebox/schema), the
// library the package itself is built on.
//
// Two kinds of violation are told apart:
//   drift      the frame is valid once the fields the schema forbids (additionalProperties:false)
//              are removed, or it names a method the schema does not list: expected when the
//              gateway is newer than the schema. Each drifted path is an anomaly finding of its
//              own (lab-wide records in lab/checks/findings.ts), so new drift shows up.
//   malformed  a field the schema knows with a wrong type or value, a missing required field, a
//              bad envelope, or text that is not a JSON frame. Never expected.
// Frames with nothing to check their payload against (no <Method>Params / <Method>Result /
// <Event>Event definition, the worker dialect on /__openclaw__/worker (its connect carries
// `admission` and answers with no hello-ok: measured on 2026.9.6), text the tap truncated)
// are counted as unchecked, never as valid.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import Schema from "typebox/schema";
import { ROOT } from "../core/paths.ts";
import { writeJson } from "../evidence/write.ts";
import type { FindingRecord } from "../findings/findings.ts";
import { compareVersions } from "../findings/versions.ts";
import { labFindings } from "./findings.ts";
import type { EvidenceCheck, EvidenceCheckInput, ScenarioWindow } from "./types.ts";

const PACKAGE = "@openclaw/gateway-protocol";
/** The node hosts' worker connections speak their own dialect; the published file lists none of its methods. */
const WORKER_PATH = "/__openclaw__/worker";
/** Strip-and-revalidate rounds before a frame's additional fields are given up on (nesting depth, in practice). */
const MAX_STRIP_ROUNDS = 24;
const MAX_ISSUES_PER_FRAME = 8;

// ---------------------------------------------------------------------------------------
// Which published schema

export interface InstalledSchema {
  version: string;
  /** Folder of the package, relative to the repository root. */
  dir: string;
}

/**
 * Every installed copy of the package: node_modules/@openclaw/gateway-protocol and any npm
 * alias of it (`"gateway-protocol-2026.8.1": "npm:@openclaw/gateway-protocol@2026.8.1"`), found by
 * the name in its package.json, not by its folder name.
 */
export function installedSchemas(root = ROOT): InstalledSchema[] {
  const nm = path.join(root, "node_modules");
  const dirs: string[] = [];
  for (const e of safeReaddir(nm)) {
    if (e.startsWith(".")) continue;
    if (e.startsWith("@")) for (const s of safeReaddir(path.join(nm, e))) dirs.push(path.join(nm, e, s));
    else dirs.push(path.join(nm, e));
  }
  const out: InstalledSchema[] = [];
  for (const d of dirs) {
    const pkg = readJson(path.join(d, "package.json")) as { name?: string; version?: string } | undefined;
    if (pkg?.name !== PACKAGE || !pkg.version || !fs.existsSync(path.join(d, "protocol.schema.json"))) continue;
    out.push({ version: pkg.version, dir: path.relative(root, d) });
  }
  return out.sort((a, b) => compareVersions(a.version, b.version));
}

// Version order is the findings' (lab/findings/versions.ts); re-exported for this module's readers.
export { compareVersions };

/** The newest schema not newer than the version under test; when all are newer, the oldest. */
export function nearestSchema(installed: InstalledSchema[], version: string): { schema: InstalledSchema; reason: string } | undefined {
  if (!installed.length) return undefined;
  const sorted = [...installed].sort((a, b) => compareVersions(a.version, b.version));
  const older = sorted.filter((s) => compareVersions(s.version, version) <= 0);
  if (older.length) {
    const s = older.at(-1)!;
    return { schema: s, reason: s.version === version ? "same version" : `newest installed schema not newer than ${version} (installed: ${sorted.map((x) => x.version).join(", ")})` };
  }
  return { schema: sorted[0]!, reason: `every installed schema is newer than ${version}; the oldest is used (installed: ${sorted.map((x) => x.version).join(", ")})` };
}

// ---------------------------------------------------------------------------------------
// Validating one frame

/** One frame as recorded, from whichever transcript. */
export interface WireFrame {
  /** "operator" or "tap-node-1". */
  source: string;
  /** Where to find it: transcript position or tap seq, and its connection. */
  ref: string;
  /** "/" for the gateway protocol, the worker path for worker connections. */
  path: string;
  dir: string;
  /** The parsed frame, or the text when it could not be parsed. */
  frame?: unknown;
  text?: string;
  /** The method a response answers (the tap's replyTo, the operator's pending request). */
  replyTo?: string;
  /** The recorder kept only the start of it. */
  truncated?: boolean;
}

export interface Issue {
  /** Normalised: dots for nesting, [] for any array index. */
  path: string;
  rule: string;
  message: string;
}

export type FrameOutcome = "valid" | "drift" | "malformed" | "unchecked";

export interface FrameVerdict {
  /** "req connect", "res node.list", "event tick" (what per-kind counts group by). */
  kind: string;
  outcome: FrameOutcome;
  /** The definition the payload was checked with, when any. */
  schema?: string;
  /** Normalised paths the schema forbids (drift), or "(unknown method)". */
  drift: string[];
  malformed: Issue[];
  /** Why the payload was not checked. */
  unchecked?: string;
}

type Definitions = Record<string, object>;
type Validator = ReturnType<typeof Schema.Compile>;

export class ProtocolSchema {
  readonly definitions: Definitions;
  readonly methods: Set<string>;
  readonly #validators = new Map<string, Validator>();

  readonly version: string;
  constructor(
    version: string,
    json: { definitions?: Definitions; methods?: Record<string, unknown> },
  ) {
    this.version = version;
    if (!json.definitions?.RequestFrame || !json.definitions.ResponseFrame || !json.definitions.EventFrame) {
      throw new Error(`protocol schema ${version} has no RequestFrame/ResponseFrame/EventFrame definitions`);
    }
    this.definitions = json.definitions;
    this.methods = new Set(Object.keys(json.methods ?? {}));
  }

  static load(root: string, s: InstalledSchema): ProtocolSchema {
    return new ProtocolSchema(s.version, JSON.parse(fs.readFileSync(path.join(root, s.dir, "protocol.schema.json"), "utf8")));
  }

  /** Compiled once per definition (its $refs are inlined in the published file). */
  #validator(name: string): Validator {
    let v = this.#validators.get(name);
    if (!v) this.#validators.set(name, (v = Schema.Compile(this.definitions[name] as Parameters<typeof Schema.Compile>[0])));
    return v;
  }

  /**
   * The payload definition of a method or event, by the package's naming (node.pair.approve ->
   * NodePairApproveParams / NodePairApproveResult, node.invoke.request -> NodeInvokeRequestEvent);
   * connect answers with HelloOk.
   */
  payloadSchema(type: "req" | "res" | "event", name: string): string | undefined {
    if (type === "res" && name === "connect") return "HelloOk";
    const base = name
      .split(/[.\-_]/)
      .filter(Boolean)
      .map((p) => p[0]!.toUpperCase() + p.slice(1))
      .join("");
    const def = `${base}${type === "req" ? "Params" : type === "res" ? "Result" : "Event"}`;
    return this.definitions[def] ? def : undefined;
  }

  check(f: WireFrame): FrameVerdict {
    if (f.frame === undefined) {
      return { kind: "text", outcome: f.truncated ? "unchecked" : "malformed", drift: [], malformed: f.truncated ? [] : [{ path: "", rule: "json", message: "not a JSON frame" }], unchecked: f.truncated ? "truncated by the recorder" : undefined };
    }
    const fr = f.frame as { type?: unknown; method?: unknown; event?: unknown; ok?: unknown; params?: unknown; payload?: unknown };
    const type = fr.type === "req" || fr.type === "res" || fr.type === "event" ? fr.type : undefined;
    if (!type) return { kind: `type ${JSON.stringify(fr.type ?? null)}`, outcome: "malformed", drift: [], malformed: [{ path: "type", rule: "discriminator", message: "type must be req, res or event" }] };
    const name = type === "req" ? str(fr.method) : type === "event" ? str(fr.event) : f.replyTo;
    const kind = `${type} ${name ?? "?"}`;
    const envelope = validate(this.#validator(type === "req" ? "RequestFrame" : type === "res" ? "ResponseFrame" : "EventFrame"), f.frame);
    const drift = envelope.drift;
    const malformed = envelope.malformed;
    let schema: string | undefined;
    let unchecked: string | undefined;
    const worker = f.path.startsWith(WORKER_PATH);
    if (!name) unchecked = "a response to a request the transcript does not know";
    else if (worker) unchecked = "worker dialect (/__openclaw__/worker): its own connect and methods, none of them in the published file";
    else if (type !== "event" && !this.methods.has(name)) drift.push("(unknown method)");
    else if (type === "res" && fr.ok !== true) unchecked = undefined; // the error shape is part of the envelope
    else {
      schema = this.payloadSchema(type, name);
      if (!schema) unchecked = `no ${type === "req" ? "params" : type === "res" ? "result" : "event payload"} schema for ${name}`;
      else {
        const payload = type === "req" ? (fr.params ?? {}) : fr.payload;
        const r = validate(this.#validator(schema), payload);
        drift.push(...r.drift);
        malformed.push(...r.malformed);
      }
    }
    const outcome: FrameOutcome = malformed.length ? "malformed" : drift.length ? "drift" : unchecked ? "unchecked" : "valid";
    return { kind, outcome, schema, drift: [...new Set(drift)].sort(), malformed: malformed.slice(0, MAX_ISSUES_PER_FRAME), unchecked };
  }
}

/**
 * Validate; while the only complaints are fields the schema forbids, remove them and validate
 * again. What is left decides: nothing (drift at most) or the remaining errors (malformed).
 */
function validate(v: Validator, value: unknown): { drift: string[]; malformed: Issue[] } {
  const drift: string[] = [];
  let current = value;
  if (v.Check(value)) return { drift, malformed: [] }; // the compiled check is fast; Errors() only for a failing frame
  for (let round = 0; round < MAX_STRIP_ROUNDS; round++) {
    const [ok, errors] = v.Errors(current);
    if (ok) return { drift, malformed: [] };
    const extra = errors.filter((e) => e.keyword === "additionalProperties");
    if (!extra.length) {
      return { drift, malformed: errors.map((e) => ({ path: normalisePointer(e.instancePath), rule: e.keyword, message: e.message })) };
    }
    if (current === value) current = structuredClone(value);
    for (const e of extra) {
      const names = (e.params as { additionalProperties?: string[] }).additionalProperties ?? [];
      const holder = resolvePointer(current, e.instancePath);
      for (const n of names) {
        drift.push(normalisePointer(`${e.instancePath}/${escapePointer(n)}`));
        if (holder && typeof holder === "object") delete (holder as Record<string, unknown>)[n];
      }
    }
  }
  return { drift, malformed: [{ path: "", rule: "additionalProperties", message: `still failing after ${MAX_STRIP_ROUNDS} rounds of removing forbidden fields` }] };
}

/** "/snapshot/presence/0/clientId" -> "snapshot.presence[].clientId" (stable across runs). */
export function normalisePointer(pointer: string): string {
  if (!pointer) return "";
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[]` : acc ? `${acc}.${seg}` : seg), "");
}

function resolvePointer(value: unknown, pointer: string): unknown {
  let cur = value;
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);

// ---------------------------------------------------------------------------------------
// A window of frames -> report -> expectations

export interface KindCount {
  frames: number;
  valid: number;
  drift: number;
  malformed: number;
  unchecked: number;
}

export interface Violation {
  source: string;
  ref: string;
  kind: string;
  dir: string;
  class: "drift" | "malformed";
  path: string;
  rule: string;
  message?: string;
}

export interface ProtocolReport {
  schema: { package: string; version: string; dir: string; reason: string };
  versionUnderTest: string;
  frames: number;
  outcomes: Record<FrameOutcome, number>;
  bySource: Record<string, number>;
  byKind: Record<string, KindCount>;
  /** Per kind, why its payloads went unchecked. */
  unchecked: Record<string, string>;
  violations: Violation[];
  ms: number;
}

export function judgeFrames(schema: ProtocolSchema, frames: WireFrame[]): Omit<ProtocolReport, "schema" | "versionUnderTest" | "ms"> {
  const outcomes: Record<FrameOutcome, number> = { valid: 0, drift: 0, malformed: 0, unchecked: 0 };
  const bySource: Record<string, number> = {};
  const byKind: Record<string, KindCount> = {};
  const unchecked: Record<string, string> = {};
  const violations: Violation[] = [];
  for (const f of frames) {
    const v = schema.check(f);
    outcomes[v.outcome]++;
    bySource[f.source] = (bySource[f.source] ?? 0) + 1;
    const k = (byKind[v.kind] ??= { frames: 0, valid: 0, drift: 0, malformed: 0, unchecked: 0 });
    k.frames++;
    k[v.outcome]++;
    if (v.unchecked) unchecked[v.kind] ??= v.unchecked;
    for (const p of v.drift) violations.push({ source: f.source, ref: f.ref, kind: v.kind, dir: f.dir, class: "drift", path: p, rule: p === "(unknown method)" ? "methods" : "additionalProperties" });
    for (const i of v.malformed) violations.push({ source: f.source, ref: f.ref, kind: v.kind, dir: f.dir, class: "malformed", path: i.path, rule: i.rule, message: i.message });
  }
  return { frames: frames.length, outcomes, bySource, byKind: sortKeys(byKind), unchecked: sortKeys(unchecked), violations };
}

export const MALFORMED_ID = "P-no-malformed-frame";
const DRIFT_PREFIX = "F-protocol-drift";

/** The finding id of one drifted path of one kind of frame. */
export const driftId = (kind: string, path: string): string => `${DRIFT_PREFIX} ${kind} ${path}`;

/** The signature a drift record holds: what a reader needs, nothing that changes per run. */
export const driftSignature = (kind: string, path: string, schemaVersion: string) => ({ frame: kind, path, rule: path === "(unknown method)" ? "methods" : "additionalProperties", schema: schemaVersion });

/**
 * What the check reports to the verdict:
 * - "no malformed frame", always when at least one frame was checked; observed: each distinct
 *   (kind, path, rule), sorted.
 * - one expectation per drifted (kind, path): does not hold, judged against the lab-wide records.
 * - a registered drift record whose kind of frame was seen in the window without any drift holds
 *   (so a gateway that stopped drifting reads "fixed?"); one whose kind was not seen says nothing.
 */
export function protocolExpectations(report: Pick<ProtocolReport, "frames" | "violations" | "byKind" | "schema">, registry: FindingRecord[]): EvidenceCheckInput[] {
  if (!report.frames) return [];
  const out: EvidenceCheckInput[] = [];
  const malformed = uniqueSorted(report.violations.filter((v) => v.class === "malformed").map((v) => JSON.stringify({ frame: v.kind, path: v.path, rule: v.rule })));
  out.push({
    id: MALFORMED_ID,
    expectation: `every frame in the window (operator and wire taps) validates against OpenClaw's published protocol schema ${report.schema.version}, apart from fields newer than it`,
    holds: malformed.length === 0,
    observed: malformed.length ? malformed.map((s) => JSON.parse(s)) : undefined,
    kind: "shortfall",
  });
  const drifted = new Map<string, { kind: string; path: string }>();
  for (const v of report.violations) if (v.class === "drift") drifted.set(driftId(v.kind, v.path), { kind: v.kind, path: v.path });
  for (const [id, d] of [...drifted].sort(([a], [b]) => a.localeCompare(b))) {
    out.push({ id, expectation: driftExpectation(d.kind), holds: false, observed: driftSignature(d.kind, d.path, report.schema.version), kind: "differs-from-reference" });
  }
  for (const rec of registry) {
    if (!rec.id.startsWith(`${DRIFT_PREFIX} `) || drifted.has(rec.id)) continue;
    const kind = (rec.signature as { frame?: string } | undefined)?.frame;
    const seen = kind ? report.byKind[kind] : undefined;
    if (seen && seen.drift === 0 && seen.malformed === 0 && seen.frames > seen.unchecked) {
      out.push({ id: rec.id, expectation: rec.expectation, holds: true, kind: rec.kind });
    }
  }
  return out;
}

export const driftExpectation = (kind: string) => `${kind} frames carry only what OpenClaw's published protocol schema for them allows`;

// ---------------------------------------------------------------------------------------
// Gathering the window's frames from a live lab

/** Operator transcript entries and tap frames of the window, as WireFrames. */
export async function windowFrames(w: ScenarioWindow): Promise<WireFrame[]> {
  const from = Date.parse(w.startedAt);
  const to = Date.parse(w.endedAt);
  const frames: WireFrame[] = [];
  for (const e of w.lab.operator?.client.transcript() ?? []) {
    if (e.t < from || e.t > to || e.dir === "meta") continue;
    if (e.frame === undefined && e.raw === undefined) continue;
    frames.push({ source: "operator", ref: `operator.jsonl n=${e.n} ${e.conn}`, path: "/", dir: e.dir, frame: e.frame, text: e.raw, replyTo: e.kind === "res" || (e.kind === "anomaly" && e.ok !== undefined) ? e.method : undefined });
  }
  for (const [alias, since] of Object.entries(w.tapSince)) {
    const tap = w.lab.tap(alias);
    for (const f of await tap.frames({ since })) {
      if (f.opcode !== 1 || f.text === undefined || f.t > to + 1) continue;
      let frame: unknown;
      if (!f.truncated) {
        try {
          frame = JSON.parse(f.text);
        } catch {
          frame = undefined;
        }
      }
      frames.push({ source: `tap-${alias}`, ref: `tap-${alias}.jsonl seq=${f.seq} ${f.conn}`, path: f.path ?? "/", dir: f.dir, frame, text: frame === undefined ? f.text.slice(0, 120) : undefined, replyTo: f.replyTo, truncated: f.truncated });
    }
  }
  return frames;
}

let loaded: { root: string; version: string; schema: ProtocolSchema; reason: string; dir: string } | undefined;

/** The nearest installed schema, compiled lazily and kept for the process (same version under test). */
export function schemaFor(version: string, root = ROOT): { schema: ProtocolSchema; reason: string; dir: string } {
  if (loaded?.root === root && loaded.version === version) return loaded;
  const pick = nearestSchema(installedSchemas(root), version);
  if (!pick) throw new Error(`no ${PACKAGE} with protocol.schema.json under node_modules: the frames cannot be checked against OpenClaw's protocol`);
  loaded = { root, version, schema: ProtocolSchema.load(root, pick.schema), reason: pick.reason, dir: pick.schema.dir };
  return loaded;
}

export const protocolCheck: EvidenceCheck = {
  name: "protocol",
  async run(w) {
    const t0 = performance.now();
    const { schema, reason, dir } = schemaFor(w.version);
    const frames = await windowFrames(w);
    const judged = judgeFrames(schema, frames);
    const report: ProtocolReport = { schema: { package: PACKAGE, version: schema.version, dir, reason }, versionUnderTest: w.version, ...judged, ms: 0 };
    const expectations = protocolExpectations(report, labFindings);
    report.ms = Math.round(performance.now() - t0);
    writeJson(path.join(w.dir, "protocol.json"), report);
    return expectations;
  },
};

function uniqueSorted(xs: string[]): string[] {
  return [...new Set(xs)].sort();
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}
