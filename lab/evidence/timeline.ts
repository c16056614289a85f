// What report.html shows, built from a run folder alone (after Jepsen's timeline.html: a lane
// per process, a box per operation coloured by outcome, faults drawn across): per lab a lane
// per member (container starts, stops, kills, restarts), its faults, its turns, its tool calls
// and approvals per MCP server, and a lane per connection (operator and wire tap) with every
// frame; the scenarios as boxes on top; the verdicts, checks and findings; links to every
// file. Everything embedded is redacted (lab/evidence/redact.ts). Big runs stay usable: at
// most FRAME_CAP frames per connection and scenario are embedded (the first and the last
// halves; fewer when the run would pass FRAMES_TOTAL), each frame's content at most
// FRAME_CONTENT_LIMIT characters; what was left out is an item on its lane and a notice naming
// the full transcript.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CheckRow, type RunRecord } from "./run.ts";
import { Redactor } from "./redact.ts";

/** Frames embedded per connection and scenario window (half from its start, half from its end). */
export const FRAME_CAP = 600;
/** Frames embedded in all (the per-connection cap is lowered for runs that would pass it). */
export const FRAMES_TOTAL = 20_000;
/** Characters of one frame's content embedded (JSON text); past that it is cut with a pointer to the transcript. */
export const FRAME_CONTENT_LIMIT = 4096;

export type Tone = "ok" | "error" | "warn" | "fault" | "info" | "in" | "out" | "muted" | "open";
export type ItemKind = "scenario" | "container" | "fault" | "armed" | "turn" | "tool" | "approval" | "mcp" | "frame" | "conn" | "http" | "omitted";
export type LaneGroup = "scenarios" | "member" | "faults" | "turns" | "tools" | "mcp" | "connection";

export interface Lane {
  id: string;
  /** Lab key (run.json labs), "" for the run-level lane. */
  lab: string;
  group: LaneGroup;
  label: string;
  /** Where its items come from (relative to the run folder). */
  source?: string;
}

export interface Item {
  lane: string;
  kind: ItemKind;
  /** Epoch milliseconds; `end` for items with a duration. */
  t: number;
  end?: number;
  label: string;
  tone: Tone;
  /** What the frame filter matches: the method, event or command. */
  key?: string;
  /** Points inside the box (fault steps). */
  marks?: { t: number; label: string }[];
  /** Drawn across every lane of its lab (faults in force). */
  band?: boolean;
  /** The full content, shown when the item is opened (redacted). */
  detail?: unknown;
  /** Where it was read: file relative to the run folder, with line or seq. */
  source?: string;
}

export interface Link {
  label: string;
  href: string;
}

export interface Notice {
  lab?: string;
  lane?: string;
  message: string;
  file?: string;
  /** The time it concerns (a view shows the notices of its window). */
  t?: number;
  end?: number;
}

export interface ScenarioView {
  name: string;
  verdict: string;
  seconds: number;
  detail?: string;
  t0?: number;
  t1?: number;
  /** Where the boundaries come from: run.json, verdict.json, scenario.log (approximate: end = last log line, start = end - seconds), or none. */
  bounds: "run.json" | "verdict.json" | "scenario.log" | "none";
  evidence?: string;
  lab?: string;
  links: Link[];
}

export interface LabView {
  key: string;
  evidence: string;
  members: { alias: string; kind: string; container: string; ip: string }[];
  links: Link[];
  t0?: number;
  t1?: number;
}

export interface ReportData {
  generatedAt: string;
  run: {
    id: string;
    seed: number;
    startedAt: string;
    endedAt?: string;
    openclawVersion?: string;
    host: RunRecord["host"];
    engine?: RunRecord["engine"];
    plan: string[];
    neverRan: string[];
    links: Link[];
  };
  scenarios: ScenarioView[];
  checks: z.infer<typeof CheckRow>[];
  labs: LabView[];
  lanes: Lane[];
  items: Item[];
  notices: Notice[];
  caps: { framesPerConnectionAndScenario: number; frameContentChars: number; framesTotal: number; framesEmbedded: number };
  range: { t0: number; t1: number };
}

// ---------------------------------------------------------------------------------------
// What the evidence files hold (the parts read here; loose: other fields are kept as they are)

const FaultEntry = z.looseObject({ id: z.string(), fault: z.string(), target: z.string(), step: z.string(), t: z.number(), ms: z.number().optional(), error: z.string().optional() });
type FaultEntry = z.infer<typeof FaultEntry>;

/** containers.jsonl (lab/evidence/containers.ts). */
export const ContainerEvent = z.looseObject({ t: z.number(), alias: z.string(), action: z.string(), container: z.string().optional(), kind: z.string().optional(), exitCode: z.number().optional(), signal: z.string().optional() });
type ContainerEvent = z.infer<typeof ContainerEvent>;

/** lab/clients/gateway.ts TranscriptEntry. */
const OperatorEntry = z.looseObject({
  n: z.number(),
  t: z.number(),
  conn: z.string(),
  dir: z.string(),
  kind: z.string(),
  id: z.string().optional(),
  method: z.string().optional(),
  event: z.string().optional(),
  ok: z.boolean().optional(),
  frame: z.unknown().optional(),
  note: z.string().optional(),
});
type OperatorEntry = z.infer<typeof OperatorEntry>;

/** docker/faultproxy/wire.ts TapRecord. */
const TapRecord = z.looseObject({ kind: z.string(), seq: z.number(), t: z.number(), conn: z.string().nullish(), event: z.string().optional() });
type TapRecord = z.infer<typeof TapRecord> & Record<string, unknown>;

/** docker/mcp/wire.ts McpRecord / HeldCall, as lab/kits/mcp.ts saves them per server. */
const McpRecord = z.looseObject({ seq: z.number(), time: z.string(), kind: z.string(), rpcMethod: z.string().nullish(), tool: z.string().nullish(), event: z.string().optional() });
const McpHeld = z.looseObject({ id: z.string(), tool: z.string(), status: z.string(), heldAt: z.string(), releasedAt: z.string().nullish(), cancelledAt: z.string().nullish() });
const McpServers = z.record(z.string(), z.looseObject({ requests: z.array(McpRecord).optional(), held: z.array(McpHeld).optional(), unreachable: z.string().optional() }));

const VerdictFile = z.looseObject({ startedAt: z.string().optional(), endedAt: z.string().optional() });

// ---------------------------------------------------------------------------------------

/**
 * Build the report's data from a run folder and its (validated) run.json, with the redactor that
 * made it: pass the serialized data through `redactor.known` too (a secret first seen in a later
 * frame is then also replaced where an earlier item held it).
 */
export function buildReportData(dir: string, record: RunRecord, opts: { frameCap?: number; framesTotal?: number; contentLimit?: number } = {}): { data: ReportData; redactor: Redactor } {
  // A copy: redaction works in place, and the record may be the live one of a running run.
  const b = new Builder(dir, structuredClone(record), opts.frameCap ?? FRAME_CAP, opts.framesTotal ?? FRAMES_TOTAL, opts.contentLimit ?? FRAME_CONTENT_LIMIT);
  return { data: b.build(), redactor: b.redact };
}

/** An event the operator received (from its transcript, or a scenario's events.json). */
interface GatewayEvent {
  t: number;
  event: string;
  payload: Record<string, unknown>;
}

/** What a scenario's events.json holds (lab/kits/events.ts Recorded). */
const RecordedEvents = z.array(z.looseObject({ t: z.number(), event: z.string(), payload: z.unknown() }));

/** A turn as the operator transcript shows it: send -> final/error/aborted. */
interface Turn {
  runId: string;
  t: number;
  method: string;
  message?: string;
  sessionKey?: string;
  sentN: number;
  end?: number;
  outcome?: string;
  endN?: number;
  endVia?: string;
}

class Builder {
  readonly redact: Redactor;
  readonly lanes = new Map<string, Lane>();
  readonly laneIds = new Map<string, string>();
  /** Frames whose content may pass the content limit (measured when capping). */
  readonly large = new WeakSet<Item>();
  readonly items: Item[] = [];
  readonly notices: Notice[] = [];
  readonly labs: LabView[] = [];
  readonly scenarios: ScenarioView[] = [];
  framesTotal = 0;

  constructor(
    readonly dir: string,
    readonly record: RunRecord,
    public frameCap: number,
    readonly framesTotalCap: number,
    readonly contentLimit: number,
  ) {
    const tokens: string[] = [];
    for (const lab of Object.values(record.labs ?? {})) {
      const token = (lab.spec as { gateway?: { token?: unknown } } | undefined)?.gateway?.token;
      if (typeof token === "string") tokens.push(token);
    }
    const top = (record.topology as { gateway?: { token?: unknown } } | undefined)?.gateway?.token;
    if (typeof top === "string") tokens.push(top);
    this.redact = new Redactor(tokens);
  }

  build(): ReportData {
    const r = this.record;
    this.collectLabs();
    this.collectScenarios();
    for (const lab of this.labs) {
      this.containers(lab);
      this.operator(lab);
      this.taps(lab);
    }
    this.scenarioEvents();
    this.labWindows(this.items);
    this.faults();
    this.mcpServers();
    this.scenarioLane();
    const items = this.capFrames();
    let t0 = Date.parse(r.startedAt);
    let t1 = r.endedAt ? Date.parse(r.endedAt) : t0 + 1000;
    for (const i of items) {
      if (Number.isFinite(i.t)) t0 = Math.min(t0, i.t);
      t1 = Math.max(t1, i.end ?? i.t);
    }
    this.labWindows(items);
    const versions = new Set(Object.values(r.labs ?? {}).map((l) => (l.spec as { openclawVersion?: string } | undefined)?.openclawVersion).filter(Boolean));
    const topVersion = (r.topology as { openclawVersion?: string } | undefined)?.openclawVersion;
    // Lanes in display order: the run's, then each lab's by group (members, faults, turns, tool
    // calls, MCP servers, connections), in the order they were met within a group.
    const groups: LaneGroup[] = ["scenarios", "member", "faults", "turns", "tools", "mcp", "connection"];
    const labRank = (l: Lane) => (l.lab === "" ? -1 : this.labs.findIndex((x) => x.key === l.lab));
    const laneOrder = [...this.lanes.values()].map((l, i) => ({ l, i })).sort((a, b) => labRank(a.l) - labRank(b.l) || groups.indexOf(a.l.group) - groups.indexOf(b.l.group) || a.i - b.i).map((x) => x.l);
    const used = new Set(items.map((i) => i.lane));
    return {
      generatedAt: new Date().toISOString(),
      run: {
        id: r.id,
        seed: r.seed,
        startedAt: r.startedAt,
        endedAt: r.endedAt,
        openclawVersion: topVersion ?? ([...versions].join(", ") || undefined),
        host: r.host,
        engine: r.engine,
        plan: r.plan ?? r.scenarios.map((s) => s.name),
        neverRan: (r.plan ?? []).filter((n) => !r.scenarios.some((s) => s.name === n)),
        links: this.links(["run.json", "junit.xml", r.faults?.timeline ?? "faults.jsonl", "report.png", "report-timeline.png"]),
      },
      scenarios: this.scenarios,
      checks: this.checks(),
      labs: this.labs,
      lanes: laneOrder.filter((l) => used.has(l.id) || l.group === "member"),
      items,
      notices: this.notices,
      caps: { framesPerConnectionAndScenario: this.frameCap, frameContentChars: this.contentLimit, framesTotal: this.framesTotal, framesEmbedded: items.filter((i) => i.kind === "frame").length },
      range: { t0, t1 },
    };
  }

  /** Each lab's span: from its first to its last item. */
  labWindows(items: Item[]): void {
    for (const lab of this.labs) {
      let t0 = Infinity;
      let t1 = -Infinity;
      for (const i of items) {
        if (this.lanes.get(i.lane)?.lab !== lab.key) continue;
        t0 = Math.min(t0, i.t);
        t1 = Math.max(t1, i.end ?? i.t);
      }
      if (t0 <= t1) Object.assign(lab, { t0, t1 });
    }
  }

  // -------------------------------------------------------------------------------------
  // Files

  rel(p: string): string {
    return path.relative(this.dir, p).split(path.sep).join("/");
  }

  exists(rel: string): boolean {
    return fs.existsSync(path.join(this.dir, rel));
  }

  links(rels: string[]): Link[] {
    return rels.filter((r) => this.exists(r)).map((r) => ({ label: r, href: r }));
  }

  /** Every file under a folder of the run (relative paths), optionally leaving one subfolder out. */
  filesUnder(rel: string, skip?: string): Link[] {
    const root = path.join(this.dir, rel);
    if (!fs.existsSync(root)) return [];
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) {
          if (skip && this.rel(p) === skip) continue;
          walk(p);
        } else out.push(this.rel(p));
      }
    };
    walk(root);
    return out.map((r) => ({ label: r.slice(rel.length + 1), href: r }));
  }

  readJson(rel: string): unknown {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.dir, rel), "utf8"));
    } catch (err) {
      this.notices.push({ message: `${rel} could not be read: ${(err as Error).message}`, file: rel });
      return undefined;
    }
  }

  /** JSON lines that pass `schema` (with their line numbers); lines that do not are counted in a notice. */
  readJsonl<T>(rel: string, schema: z.ZodType<T>, lab?: string): { line: number; value: T }[] {
    const file = path.join(this.dir, rel);
    if (!fs.existsSync(file)) return [];
    const out: { line: number; value: T }[] = [];
    let bad = 0;
    fs.readFileSync(file, "utf8")
      .split("\n")
      .forEach((text, i) => {
        if (!text.trim()) return;
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch {
          bad++;
          return;
        }
        const ok = schema.safeParse(raw);
        if (ok.success) out.push({ line: i + 1, value: ok.data });
        else bad++;
      });
    if (bad) this.notices.push({ lab, message: `${bad} line(s) of ${rel} are not readable records and are not shown`, file: rel });
    return out;
  }

  // -------------------------------------------------------------------------------------
  // Labs, scenarios, checks

  collectLabs(): void {
    const seen = new Set<string>();
    for (const [key, row] of Object.entries(this.record.labs ?? {})) {
      seen.add(row.evidence);
      this.labs.push({ key, evidence: row.evidence, members: row.members, links: this.filesUnder(row.evidence) });
    }
    // A lab cut before it wrote its run.json row still has its folder.
    const candidates = ["shared-lab", ...this.record.scenarios.map((s) => `${s.evidence ?? `scenarios/${s.name}`}/lab`)];
    for (const ev of candidates) {
      if (!seen.has(ev) && this.exists(ev)) {
        seen.add(ev);
        this.labs.push({ key: ev, evidence: ev, members: [], links: this.filesUnder(ev) });
      }
    }
  }

  labOf(evidence: string): LabView | undefined {
    return this.labs.find((l) => l.evidence === evidence);
  }

  collectScenarios(): void {
    const shared = this.labOf("shared-lab");
    for (const row of this.record.scenarios) {
      const evidence = row.evidence ?? (this.exists(`scenarios/${row.name}`) ? `scenarios/${row.name}` : undefined);
      const v: ScenarioView = { name: row.name, verdict: row.verdict, seconds: row.seconds, detail: row.detail, bounds: "none", evidence, links: [] };
      if (row.startedAt && row.endedAt) Object.assign(v, { t0: Date.parse(row.startedAt), t1: Date.parse(row.endedAt), bounds: "run.json" });
      else if (evidence && this.exists(`${evidence}/verdict.json`)) {
        const ok = VerdictFile.safeParse(this.readJson(`${evidence}/verdict.json`));
        if (ok.success && ok.data.startedAt && ok.data.endedAt) Object.assign(v, { t0: Date.parse(ok.data.startedAt), t1: Date.parse(ok.data.endedAt), bounds: "verdict.json" });
      }
      if (v.bounds === "none" && evidence && this.exists(`${evidence}/scenario.log`)) {
        const stamps = fs
          .readFileSync(path.join(this.dir, evidence, "scenario.log"), "utf8")
          .split("\n")
          .map((l) => Date.parse(l.slice(0, 24)))
          .filter(Number.isFinite);
        const last = stamps.at(-1);
        if (last !== undefined) Object.assign(v, { t1: last, t0: Math.min(stamps[0]!, last - row.seconds * 1000), bounds: "scenario.log" });
      }
      const own = evidence ? this.labOf(`${evidence}/lab`) : undefined;
      // A merged run (lab/evidence/merge.ts) keeps each shard's folder, its shared-lab/ beside its scenarios/.
      const shardShared = evidence ? this.labOf(evidence.replace(/scenarios\/[^/]+$/, "shared-lab")) : undefined;
      v.lab = (own ?? shardShared ?? shared)?.key;
      if (evidence) v.links = this.filesUnder(evidence, `${evidence}/lab`);
      this.scenarios.push(v);
    }
  }

  /** The scenario whose window holds `t` (on this lab when given). */
  scenarioAt(t: number, lab?: string): ScenarioView | undefined {
    return this.scenarios.find((s) => s.t0 !== undefined && s.t1 !== undefined && t >= s.t0 && t <= s.t1 && (lab === undefined || s.lab === lab));
  }

  checks(): z.infer<typeof CheckRow>[] {
    const out: z.infer<typeof CheckRow>[] = [];
    for (const s of this.scenarios) {
      const file = s.evidence ? `${s.evidence}/findings.json` : undefined;
      const parsed = file && this.exists(file) ? z.array(CheckRow).safeParse(this.readJson(file)) : undefined;
      if (parsed?.success) out.push(...parsed.data);
      else {
        if (parsed && !parsed.success) this.notices.push({ message: `${file} is not a list of checks; showing run.json's findings of ${s.name}`, file });
        out.push(...(this.record.findings ?? []).filter((c) => c.scenario === s.name));
      }
    }
    return out.map((c) => this.redact.value(c));
  }

  // -------------------------------------------------------------------------------------
  // Lanes

  /** The lane of (lab, group, name), created on first use; its id is short (it is on every item). */
  lane(lab: string, group: LaneGroup, name: string, label: string, source?: string): string {
    const k = `${lab}|${group}|${name}`;
    let id = this.laneIds.get(k);
    if (!id) {
      id = `l${this.laneIds.size}`;
      this.laneIds.set(k, id);
      this.lanes.set(id, { id, lab, group, label, source });
    }
    return id;
  }

  memberLane(lab: LabView, alias: string): string {
    return this.lane(lab.key, "member", alias, alias, lab.links.find((l) => l.href.endsWith(`/logs/${alias}.stdout.log`))?.href);
  }

  /** Member lanes first, in a stable order: gateway, nodes, taps, then the rest as run.json lists them. */
  orderMembers(lab: LabView): void {
    const rank = (m: { kind: string }) => ["gateway", "node", "tap", "model", "git", "mcp"].indexOf(m.kind) + 1 || 9;
    for (const m of [...lab.members].sort((a, b) => rank(a) - rank(b) || a.alias.localeCompare(b.alias, "en", { numeric: true }))) this.memberLane(lab, m.alias);
    this.lane(lab.key, "faults", "faults", "faults");
    this.lane(lab.key, "turns", "turns", "turns");
  }

  add(item: Item): void {
    this.items.push(item);
  }

  // -------------------------------------------------------------------------------------
  // Containers (containers.jsonl, recorded from the engine's events)

  containers(lab: LabView): void {
    this.orderMembers(lab);
    const rel = `${lab.evidence}/containers.jsonl`;
    const events = this.readJsonl(rel, ContainerEvent, lab.key);
    const running = new Map<string, { t: number; line: number }>();
    const lastT = events.at(-1)?.value.t;
    for (const { line, value: e } of events) {
      const lane = this.memberLane(lab, e.alias);
      if (e.action === "start" || e.action === "restart" || e.action === "unpause") running.set(e.alias, { t: e.t, line });
      if ((e.action === "die" || e.action === "pause") && running.has(e.alias)) {
        this.add({ lane, kind: "container", t: running.get(e.alias)!.t, end: e.t, label: "running", tone: "ok", source: `${rel}#L${running.get(e.alias)!.line}` });
        running.delete(e.alias);
      }
      const what = e.action + (e.exitCode !== undefined ? ` (exit ${e.exitCode})` : "") + (e.signal ? ` (${e.signal})` : "");
      const tone: Tone = e.action === "kill" || e.action === "oom" ? "fault" : e.action === "die" ? (e.exitCode ? "error" : "warn") : e.action === "start" || e.action === "restart" ? "ok" : "info";
      this.add({ lane, kind: "container", t: e.t, label: what, tone, key: `container ${e.action}`, detail: e, source: `${rel}#L${line}` });
    }
    for (const [alias, r] of running) this.add({ lane: this.memberLane(lab, alias), kind: "container", t: r.t, end: lastT, label: "running", tone: "ok", source: `${rel}#L${r.line}` });
  }

  // -------------------------------------------------------------------------------------
  // Faults (faults.jsonl of the run and of each scenario)

  faults(): void {
    const byId = new Map<string, { entries: FaultEntry[]; scenario?: ScenarioView; file: string }>();
    const take = (rel: string, scenario?: ScenarioView) => {
      for (const { value: e } of this.readJsonl(rel, FaultEntry)) {
        const f = byId.get(e.id) ?? { entries: [], file: rel };
        if (!f.entries.some((x) => x.step === e.step && x.t === e.t)) f.entries.push(e);
        f.scenario ??= scenario;
        byId.set(e.id, f);
      }
    };
    take(this.record.faults?.timeline ?? "faults.jsonl");
    for (const s of this.scenarios) if (s.evidence) take(`${s.evidence}/faults.jsonl`, s);
    for (const [id, f] of byId) {
      const steps = f.entries.sort((a, b) => a.t - b.t);
      const at = (step: string) => steps.find((e) => e.step === step);
      const first = steps[0]!;
      const scenario = f.scenario ?? this.scenarioAt(first.t);
      const lab = this.labs.find((l) => l.key === scenario?.lab) ?? this.labs.find((l) => l.t0 !== undefined && first.t >= l.t0 && first.t <= (l.t1 ?? Infinity)) ?? this.labs[0];
      const labKey = lab?.key ?? "";
      const inject = at("inject");
      const healedStep = at("healed") ?? at("heal") ?? at("cleanup") ?? steps.at(-1)!;
      const t = inject?.t ?? first.t;
      const end = Math.max(t, healedStep.t + (healedStep.ms ?? 0));
      const failed = steps.some((e) => e.step === "failed" || e.error);
      const detail = this.redact.value({ id, scenario: scenario?.name, steps });
      const label = `${first.fault} ${first.target}`;
      const marks = steps.filter((e) => e.step !== "prepare" && e.step !== "cleanup").map((e) => ({ t: e.t, label: e.step }));
      const faultLane = this.lane(labKey, "faults", "faults", "faults");
      const trigger = at("trigger");
      if (trigger && inject && inject.t > trigger.t) {
        this.add({ lane: faultLane, kind: "armed", t: trigger.t, end: inject.t, label: `armed: ${label}`, tone: "muted", detail, source: f.file });
      }
      this.add({ lane: faultLane, kind: "fault", t, end, label, tone: failed ? "error" : "fault", key: first.fault, marks, band: true, detail, source: f.file });
      // The member it acts on shows it too (a killed node is down from inject to healed).
      const alias = first.target.split(/\s+/)[0]!;
      if (lab && lab.members.some((m) => m.alias === alias)) {
        this.add({ lane: this.memberLane(lab, alias), kind: "fault", t, end, label: first.fault, tone: failed ? "error" : "fault", key: first.fault, marks, detail, source: f.file });
      }
    }
  }

  // -------------------------------------------------------------------------------------
  // The operator transcript: frames per connection, turns, tool calls, approvals

  operator(lab: LabView): void {
    const rel = `${lab.evidence}/transcripts/operator.jsonl`;
    const entries = this.readJsonl(rel, OperatorEntry, lab.key).map((x) => x.value);
    if (!entries.length) return;
    const open = new Map<string, OperatorEntry>();
    const turns = new Map<string, Turn>();
    const reqs = new Map<string, OperatorEntry>();
    const events: GatewayEvent[] = [];
    const lastT = entries.at(-1)!.t;
    for (const e of entries) {
      const lane = this.lane(lab.key, "connection", `op:${e.conn}`, `${e.conn} ws`, rel);
      const src = `${rel}#n=${e.n}`;
      if (e.kind === "open") open.set(e.conn, e);
      if (e.kind === "close") {
        const o = open.get(e.conn);
        this.add({ lane, kind: "conn", t: o?.t ?? e.t, end: e.t, label: `connection: ${e.note ?? "closed"}`, tone: "info", detail: this.redact.value({ open: o, close: e }), source: src });
        open.delete(e.conn);
      }
      if (e.kind === "error" || e.kind === "anomaly") this.add({ lane, kind: "conn", t: e.t, label: `${e.kind}: ${e.note ?? ""}`, tone: e.kind === "error" ? "error" : "warn", detail: this.redact.value(e), source: src });
      if (e.kind !== "req" && e.kind !== "res" && e.kind !== "event") continue;

      const frame = (e.frame ?? {}) as { params?: Record<string, unknown>; payload?: Record<string, unknown>; error?: { code?: string; message?: string } };
      const key = e.method ?? e.event ?? "";
      const p = (frame.payload ?? {}) as Record<string, unknown>;
      let label = e.kind === "req" ? `→ ${key}` : e.kind === "res" ? `← ${key} ${e.ok === false ? `error ${frame.error?.code ?? ""}` : "ok"}` : `← ${key}`;
      if (e.event === "chat" && typeof p.state === "string") label += ` ${p.state}`;
      if (e.event === "agent" && typeof p.stream === "string") label += ` ${p.stream}`;
      const tone: Tone = e.ok === false ? "error" : e.event === "chat" && (p.state === "error" || p.state === "aborted") ? "warn" : e.dir === "out" ? "out" : "in";
      this.frame({ lane, kind: "frame", t: e.t, label, tone, key, detail: { n: e.n, ts: new Date(e.t).toISOString(), conn: e.conn, dir: e.dir, kind: e.kind, bytes: e.bytes, frame: e.frame }, source: src }, typeof e.bytes === "number" ? e.bytes : undefined);

      // Turns: chat.send / agent request -> its runId -> the first terminal state seen.
      if (e.kind === "req" && e.id) reqs.set(e.id, e);
      if (e.kind === "res" && e.id && (e.method === "chat.send" || e.method === "agent") && e.ok) {
        const req = reqs.get(e.id);
        const runId = typeof p.runId === "string" ? p.runId : undefined;
        if (req && runId && !turns.has(runId)) {
          const params = ((req.frame as { params?: Record<string, unknown> } | undefined)?.params ?? {}) as Record<string, unknown>;
          turns.set(runId, { runId, t: req.t, method: e.method, message: typeof params.message === "string" ? params.message : undefined, sessionKey: typeof params.sessionKey === "string" ? params.sessionKey : undefined, sentN: req.n });
        }
      }
      const ended = (runId: unknown, outcome: string, via: string) => {
        const turn = typeof runId === "string" ? turns.get(runId) : undefined;
        if (turn && turn.end === undefined) Object.assign(turn, { end: e.t, outcome, endN: e.n, endVia: via });
      };
      if (e.event === "chat" && ["final", "error", "aborted"].includes(String(p.state))) ended(p.runId, String(p.state), "chat event");
      if (e.kind === "res" && e.ok && (e.method === "agent.wait" || e.method === "agent") && ["ok", "error", "aborted", "cancelled"].includes(String(p.status))) {
        ended(p.runId, p.status === "ok" ? "final" : String(p.status), `${e.method} res`);
      }

      if (e.event) events.push({ t: e.t, event: e.event, payload: p });
    }
    for (const [conn, o] of open) {
      this.add({ lane: this.lane(lab.key, "connection", `op:${conn}`, `${conn} ws`, rel), kind: "conn", t: o.t, end: lastT, label: "connection (open at the end of the transcript)", tone: "info", source: `${rel}#n=${o.n}` });
    }

    const turnsLane = this.lane(lab.key, "turns", "turns", "turns", rel);
    for (const turn of turns.values()) {
      const tone: Tone = turn.outcome === "final" ? "ok" : turn.outcome === "error" ? "error" : turn.outcome === "aborted" || turn.outcome === "cancelled" ? "warn" : "open";
      const what = turn.message ? `“${turn.message.slice(0, 60)}”` : turn.runId;
      this.add({
        lane: turnsLane,
        kind: "turn",
        t: turn.t,
        end: turn.end ?? lastT,
        label: `${what} → ${turn.outcome ?? "no end seen"}`,
        tone,
        key: turn.method,
        detail: this.redact.value({ ...turn, sentAt: new Date(turn.t).toISOString(), endedAt: turn.end === undefined ? null : new Date(turn.end).toISOString(), ms: turn.end === undefined ? null : turn.end - turn.t }),
        source: `${rel}#n=${turn.sentN}`,
      });
    }
    this.toolCalls(lab, events, rel, lastT);
  }

  /**
   * Tool calls (agent item events of kind tool: start -> end) and approvals (requested ->
   * resolved), on a lane per MCP server (by the tool's server prefix), from the operator's events.
   */
  toolCalls(lab: LabView, events: GatewayEvent[], rel: string, lastT: number): void {
    const tools = new Map<string, { start?: { t: number; p: Record<string, unknown> }; end?: { t: number; p: Record<string, unknown> }; name: string; runId?: string }>();
    const approvals = new Map<string, { requested?: { t: number; p: Record<string, unknown> }; resolved?: { t: number; p: Record<string, unknown> } }>();
    events.forEach((e, n) => {
      const p = e.payload;
      if (e.event === "agent" && p.stream === "item") {
        const d = (p.data ?? {}) as Record<string, unknown>;
        if (d.kind === "tool") {
          const id = String(d.toolCallId ?? d.itemId ?? n);
          const call = tools.get(id) ?? { name: String(d.name ?? "tool"), runId: typeof p.runId === "string" ? p.runId : undefined };
          if (d.phase === "start" && !call.start) call.start = { t: typeof d.startedAt === "number" ? d.startedAt : e.t, p };
          if (d.phase === "end") call.end = { t: typeof d.endedAt === "number" ? d.endedAt : e.t, p };
          tools.set(id, call);
        }
      }
      if (/approval\.(requested|resolved)$/.test(e.event)) {
        const id = String(p.id ?? n);
        const a = approvals.get(id) ?? {};
        if (e.event.endsWith("requested")) a.requested ??= { t: e.t, p };
        else a.resolved ??= { t: e.t, p };
        approvals.set(id, a);
      }
    });
    const servers = this.mcpServerNames(lab);
    const serverOf = (tool: string) => servers.find((s) => tool.startsWith(`${s}__`) || tool.startsWith(`${s}_`));
    for (const call of tools.values()) {
      const server = serverOf(call.name);
      const lane = this.lane(lab.key, "tools", server ?? "(agent)", server ? `${server} · calls` : "tool calls", rel);
      const status = String((call.end?.p.data as Record<string, unknown> | undefined)?.status ?? "");
      const tone: Tone = !call.end ? "open" : status === "completed" ? "ok" : status === "failed" || status === "error" ? "error" : "warn";
      const t = call.start?.t ?? call.end!.t;
      this.add({ lane, kind: "tool", t, end: call.end?.t ?? lastT, label: `${call.name} ${call.end ? status : "(no end seen)"}`, tone, key: call.name, detail: this.redact.value({ name: call.name, runId: call.runId, start: call.start?.p, end: call.end?.p }), source: rel });
    }
    for (const [id, a] of approvals) {
      const req = (a.requested?.p.request ?? a.resolved?.p.request ?? {}) as Record<string, unknown>;
      const toolName = String(req.toolName ?? "");
      const server = serverOf(toolName);
      const lane = this.lane(lab.key, "tools", server ?? "(agent)", server ? `${server} · calls` : "tool calls", rel);
      const decision = a.resolved ? String(a.resolved.p.decision ?? "resolved") : undefined;
      const tone: Tone = !decision ? "open" : decision.startsWith("allow") ? "ok" : decision === "deny" ? "error" : "warn";
      const t = a.requested?.t ?? a.resolved!.t;
      this.add({ lane, kind: "approval", t, end: a.resolved?.t ?? lastT, label: `approval ${toolName || id}: ${decision ?? "pending"}`, tone, key: "approval", detail: this.redact.value({ id, requested: a.requested?.p, resolved: a.resolved?.p }), source: rel });
    }
  }

  /** A lab without an operator transcript (a run killed before its lab went down): tool calls and approvals from each scenario's events.json. */
  scenarioEvents(): void {
    for (const s of this.scenarios) {
      const lab = this.labs.find((l) => l.key === s.lab);
      const rel = s.evidence ? `${s.evidence}/events.json` : undefined;
      if (!lab || !rel || this.exists(`${lab.evidence}/transcripts/operator.jsonl`) || !this.exists(rel)) continue;
      const ok = RecordedEvents.safeParse(this.readJson(rel));
      if (!ok.success || !ok.data.length) continue;
      const events = ok.data.map((e) => ({ t: e.t, event: e.event, payload: (e.payload ?? {}) as Record<string, unknown> }));
      this.toolCalls(lab, events, rel, s.t1 ?? events.at(-1)!.t);
    }
  }

  /** MCP server names of a lab (gateway-side and node-hosted), from its spec. */
  mcpServerNames(lab: LabView): string[] {
    const spec = (this.record.labs?.[lab.key]?.spec ?? this.record.topology) as { mcp?: { servers?: { name?: string }[]; nodeServers?: { name?: string }[] } } | undefined;
    return [...(spec?.mcp?.servers ?? []), ...(spec?.mcp?.nodeServers ?? [])].map((s) => s.name).filter((n): n is string => typeof n === "string");
  }

  // -------------------------------------------------------------------------------------
  // Wire taps: a lane per connection through each tap

  taps(lab: LabView): void {
    const dir = path.join(this.dir, lab.evidence, "transcripts");
    if (!fs.existsSync(dir)) return;
    for (const f of fs.readdirSync(dir).filter((f) => /^tap-.+\.jsonl$/.test(f)).sort((a, b) => a.localeCompare(b, "en", { numeric: true }))) {
      const node = f.slice(4, -6);
      const rel = `${lab.evidence}/transcripts/${f}`;
      const records = this.readJsonl(rel, TapRecord, lab.key).map((x) => x.value as TapRecord);
      const lastT = records.at(-1)?.t;
      const opened = new Map<string, TapRecord>();
      const paths = new Map<string, string>();
      for (const r of records) {
        if (typeof r.conn === "string" && !paths.has(r.conn) && typeof r.path === "string") {
          paths.set(r.conn, r.kind === "http" && !r.upgrade ? `http ${String(r.method)} ${r.path}` : r.path === "/" ? "node ws" : r.path === "/__openclaw__/worker" ? "worker ws" : `ws ${r.path}`);
        }
      }
      const laneOf = (conn: string) => this.lane(lab.key, "connection", `tap:${node}:${conn}`, `${node} · ${conn} · ${paths.get(conn) ?? "no request"}`, rel);
      for (const r of records) {
        const src = `${rel}#seq=${r.seq}`;
        if (r.kind === "rule") {
          if (r.event !== "fired") continue;
          const lane = typeof r.conn === "string" ? laneOf(r.conn) : this.lane(lab.key, "faults", "faults", "faults");
          this.add({ lane, kind: "conn", t: r.t, label: `rule ${String(r.id)} fired: ${String(r.action)}`, tone: "fault", key: "rule", detail: r, source: src });
          continue;
        }
        if (typeof r.conn !== "string") continue;
        const lane = laneOf(r.conn);
        if (r.kind === "conn") {
          if (r.event === "open") opened.set(r.conn, r);
          else if (r.event === "close") {
            const o = opened.get(r.conn);
            this.add({ lane, kind: "conn", t: o?.t ?? r.t, end: r.t, label: `connection ${paths.get(r.conn) ?? ""} (${Math.round(Number(r.durationMs ?? 0))} ms)`, tone: "info", detail: this.redact.value({ open: o, close: r }), source: src });
            opened.delete(r.conn);
          } else if (r.event !== "upgrade" && r.event !== "tunnel") {
            this.add({ lane, kind: "conn", t: r.t, label: `${r.event}: ${String(r.code ?? r.message ?? r.rule ?? "")}`, tone: r.event === "fault" ? "fault" : "error", key: `conn ${r.event}`, detail: this.redact.value(r), source: src });
          }
        } else if (r.kind === "http") {
          const status = r.status as number | null;
          const tone: Tone = status === null ? "warn" : status >= 400 ? "error" : "info";
          // A WebSocket upgrade is a tick (its connection's span says the rest); other exchanges (the worker bundle) a box.
          this.add({ lane, kind: "http", t: r.t, end: r.upgrade ? undefined : r.t + Number(r.durationMs ?? 0), label: `${String(r.method)} ${String(r.path)} ${status ?? "(no response)"}`, tone, key: `http ${String(r.method)}`, detail: this.redact.value(r), source: src });
        } else if (r.kind === "frame") {
          this.tapFrame(lane, node, r, src);
        }
      }
      for (const [conn, o] of opened) this.add({ lane: laneOf(conn), kind: "conn", t: o.t, end: lastT, label: "connection (open when the tap was saved)", tone: "info", source: `${rel}#seq=${o.seq}` });
    }
  }

  tapFrame(lane: string, node: string, r: TapRecord, src: string): void {
    const out = r.dir === "node->gw";
    const close = r.close as { code?: number; reason?: string } | undefined;
    const name = (r.method ?? r.event ?? r.replyTo) as string | undefined;
    const key = close ? "close" : ((r.command as string | undefined) ?? name ?? `opcode ${String(r.opcode)}`);
    let label = `${out ? "→" : "←"} ${close ? `close ${close.code ?? ""} ${close.reason ?? ""}` : `${(r.type as string | undefined) ?? `opcode ${String(r.opcode)}`} ${name ?? ""}`}`;
    if (r.command) label += ` ${String(r.command)}`;
    if (r.ok === false) label += ` error ${String(r.errorCode ?? "")}`;
    if (r.action && r.action !== "forward") label += ` [${String(r.action)}]`;
    const tone: Tone = r.action && r.action !== "forward" ? "fault" : r.ok === false ? "error" : close ? "warn" : out ? "out" : "in";
    const text = typeof r.text === "string" ? r.text : undefined;
    let content: unknown = text;
    if (text?.startsWith("{")) {
      try {
        content = JSON.parse(text);
      } catch {
        content = undefined;
      }
    }
    if (text !== undefined && typeof content !== "object") content = this.redact.text(text);
    const { text: _text, ...meta } = r;
    this.frame({ lane, kind: "frame", t: r.t, label: label.replace(/\s+/g, " ").trim(), tone, key, detail: { ...meta, node, frame: content }, source: src }, text?.length);
  }

  /** A frame item: redacted now, capped later (`size`: its content's length when known, to skip measuring small ones). */
  frame(item: Item, size?: number): void {
    this.framesTotal++;
    this.redact.value(item.detail);
    if (size === undefined || size > this.contentLimit / 2) this.large.add(item);
    this.items.push(item);
  }

  // -------------------------------------------------------------------------------------
  // MCP servers: what each server recorded (scenarios' mcp-servers.json)

  mcpServers(): void {
    const seen = new Set<string>();
    for (const s of this.scenarios) {
      const rel = s.evidence ? `${s.evidence}/mcp-servers.json` : undefined;
      if (!rel || !this.exists(rel)) continue;
      const ok = McpServers.safeParse(this.readJson(rel));
      if (!ok.success) {
        this.notices.push({ lab: s.lab, message: `${rel} is not the MCP servers' record; not shown`, file: rel });
        continue;
      }
      const lab = s.lab ?? "";
      for (const [server, v] of Object.entries(ok.data)) {
        const lane = this.lane(lab, "mcp", server, `${server} · server saw`, rel);
        if (v.unreachable) this.notices.push({ lab, lane, message: `${s.name}: MCP server ${server} was unreachable when its records were read (${v.unreachable})`, file: rel });
        for (const r of v.requests ?? []) {
          if (seen.has(`${lab}|${server}|${r.seq}`)) continue;
          seen.add(`${lab}|${server}|${r.seq}`);
          const what = r.kind === "rpc" ? `${r.rpcMethod ?? "response"}${r.tool ? ` ${r.tool}` : ""}` : `${r.event ?? r.kind}`;
          const tone: Tone = r.rpcMethod === "tools/call" ? "ok" : r.rpcMethod === "notifications/cancelled" || r.event === "call-cancelled" || r.event === "call-held" ? "warn" : r.event === "rejected" || r.event === "unknown-session" ? "error" : r.event === "effect" ? "fault" : "muted";
          this.add({ lane, kind: "mcp", t: Date.parse(r.time), label: what, tone, key: r.rpcMethod ?? r.event ?? r.kind, detail: this.redact.value(r), source: `${rel}#seq=${r.seq}` });
        }
        for (const h of v.held ?? []) {
          if (seen.has(`${lab}|${server}|${h.id}`)) continue;
          seen.add(`${lab}|${server}|${h.id}`);
          const end = h.releasedAt ?? h.cancelledAt;
          this.add({ lane, kind: "mcp", t: Date.parse(h.heldAt), end: end ? Date.parse(end) : s.t1, label: `held ${h.tool}: ${h.status}`, tone: h.status === "cancelled" ? "warn" : "info", key: "held", detail: this.redact.value(h), source: rel });
        }
      }
    }
  }

  // -------------------------------------------------------------------------------------

  scenarioLane(): void {
    const lane = this.lane("", "scenarios", "scenarios", "scenarios");
    for (const s of this.scenarios) {
      if (s.t0 === undefined || s.t1 === undefined) continue;
      const tone: Tone = s.verdict === "pass" ? "ok" : s.verdict === "fail" ? "error" : s.verdict === "unknown" ? "open" : "warn";
      this.add({ lane, kind: "scenario", t: s.t0, end: s.t1, label: `${s.name}: ${s.verdict}`, tone, key: s.name, detail: { name: s.name, verdict: s.verdict, seconds: s.seconds, detail: s.detail, bounds: s.bounds, lab: s.lab }, source: s.evidence });
    }
  }

  /**
   * At most frameCap frames per connection and scenario window (frames outside every window
   * count as one more window): the first and last halves are kept, the middle becomes one
   * "left out" item and a notice. Frame content longer than contentLimit is cut.
   */
  capFrames(): Item[] {
    const groups = new Map<string, Item[]>();
    const out: Item[] = [];
    for (const i of this.items) {
      if (i.kind !== "frame") {
        out.push(i);
        continue;
      }
      const lab = this.lanes.get(i.lane)?.lab;
      const s = this.scenarioAt(i.t, lab);
      const k = `${i.lane}\u0000${s?.name ?? ""}`;
      (groups.get(k) ?? groups.set(k, []).get(k)!).push(i);
    }
    // A run with many more connections than the standard lab's lowers the cap until the page
    // holds at most FRAMES_TOTAL frames.
    const embedded = (cap: number) => [...groups.values()].reduce((n, g) => n + Math.min(g.length, cap), 0);
    while (embedded(this.frameCap) > this.framesTotalCap && this.frameCap > 10) this.frameCap = Math.max(10, Math.floor(this.frameCap * 0.8));
    for (const [k, frames] of groups) {
      frames.sort((a, b) => a.t - b.t);
      if (frames.length <= this.frameCap) {
        out.push(...frames);
        continue;
      }
      const [laneId, scenario] = k.split("\u0000") as [string, string];
      const lane = this.lanes.get(laneId)!;
      const head = Math.ceil(this.frameCap / 2);
      const tail = this.frameCap - head;
      const dropped = frames.slice(head, frames.length - tail);
      out.push(...frames.slice(0, head), ...frames.slice(frames.length - tail));
      const where = `${scenario ? `during ${scenario}` : "outside the scenarios"}`;
      const message = `${lane.label} ${where}: ${frames.length} frames, ${dropped.length} left out (frames ${head + 1}–${head + dropped.length}); the full transcript is ${lane.source ?? "in the lab's transcripts"}`;
      out.push({ lane: laneId, kind: "omitted", t: dropped[0]!.t, end: dropped.at(-1)!.t, label: `${dropped.length} frames left out: full transcript ${lane.source ?? ""}`, tone: "muted", detail: { message, first: dropped[0]!.source, last: dropped.at(-1)!.source }, source: lane.source });
      this.notices.push({ lab: lane.lab, lane: laneId, message, file: lane.source, t: dropped[0]!.t, end: dropped.at(-1)!.t });
    }
    for (const i of out) {
      if (i.kind !== "frame" || !this.large.has(i)) continue;
      const text = JSON.stringify(i.detail);
      if (text.length > this.contentLimit) {
        i.detail = { cut: `${text.length} characters; the first ${this.contentLimit} are shown, the whole frame is at ${i.source}`, head: text.slice(0, this.contentLimit) };
      }
    }
    return out.sort((a, b) => a.t - b.t);
  }
}
