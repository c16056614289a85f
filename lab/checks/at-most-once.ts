// At-most-once tool effects, judged from evidence alone, after every scenario.
//
// An effect is a tools/call request that reached an MCP server (its own request log, wherever
// the server runs: gateway-side servers and node-hosted ones alike) within the scenario's
// window, identified by (server, tool, arguments as canonical JSON). Scenarios make arguments
// unique with tokens, so one intent has one key.
//
// How many effects of a key are legitimate is what the model asked for: each function_call it
// emitted with that tool (`<server>__<tool>` gateway-side, `<server>_<tool>` node-hosted) and
// those arguments, counted by distinct call id. A scenario calling the same tool twice on
// purpose does so with different tokens (two keys), or as two model calls with two call ids
// (two intents); a retry, reconnect or restart that re-sends one call adds an effect, not an
// intent. When the model's records are gone (reset and not saved), one effect per key is allowed.
//
// Never before its approval: an effect of a gated tool (the topology's mcp.approvalTools, or any
// tool an approval was requested for in the window) needs its own allow decision for that tool
// and those arguments, given before the effect reached the server. The decision's time is the
// earlier of the operator sending plugin.approval.resolve (host clock) and the gateway's
// resolved ts; one allow-once covers one effect, allow-always covers every later one.
//
// Sources, each read from the live lab and from the scenario's saved evidence (scenarios reset
// servers and model in their finally, after saving mcp-servers.json / model-requests.json):
// MCP request logs, model requests, the operator transcript (approval events and resolves); the
// saved files are read with their formats' schemas (lab/evidence/records/mcp.ts and model.ts).
// A server whose log can be read neither way leaves the check unable to tell: it says so (the
// scenario's verdict is unknown, with the server and the reason), unless what was read already
// fails.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { writeJson } from "../evidence/write.ts";
import { McpRecord, ModelRequest, SavedMcpServers, SavedModelRequests } from "../evidence/records/index.ts";
import { mcpContainers } from "../definitions/spec.ts";
import type { EvidenceCheck, EvidenceCheckInput, ScenarioWindow } from "./types.ts";

/** One tools/call as the server recorded it. */
export interface EffectRecord {
  server: string;
  tool: string;
  args: unknown;
  /** ISO time at the server. */
  time: string;
  seq?: number;
  rpcId?: string | number | null;
  sessionId?: string | null;
}

/** One function_call the model emitted. */
export interface Intent {
  /** The tool name as the model saw it: `north__example_echo`, `east_example_echo`. */
  name: string;
  arguments: string;
  callId: string;
}

export interface ApprovalEvidence {
  id: string;
  toolName: string;
  /** The arguments, as the gate plugin showed them ("Run <tool> with <json>"); undefined when unreadable. */
  args?: unknown;
  decision?: string;
  /** Epoch ms the decision was given (earliest evidence of it). */
  decidedAt?: number;
}

export interface AtMostOnceEvidence {
  effects: EffectRecord[];
  /** undefined: the model's records are not available. */
  intents?: Intent[];
  approvals: ApprovalEvidence[];
  /** Model-facing names of gated tools. */
  gatedTools: string[];
  /** Server -> how the model names its tools ("__" gateway-side, "_" node-hosted). */
  separators: Record<string, "__" | "_">;
}

export interface Duplicate {
  server: string;
  tool: string;
  args: unknown;
  effects: number;
  intents: number | "unknown";
}

export interface Unapproved {
  server: string;
  tool: string;
  args: unknown;
  /** "no allow decision", or "before its allow decision". */
  why: string;
}

export interface AtMostOnceReport {
  effects: number;
  keys: number;
  intents: number | "unknown";
  approvals: number;
  gatedEffects: number;
  duplicates: Duplicate[];
  unapproved: Unapproved[];
  sources: Record<string, string>;
  ms?: number;
}

/** Deterministic JSON: object keys sorted, so equal arguments make equal keys. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

const parseArgs = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

export function judgeAtMostOnce(ev: AtMostOnceEvidence): AtMostOnceReport {
  const modelName = (e: EffectRecord) => `${e.server}${ev.separators[e.server] ?? "__"}${e.tool}`;
  const keyOf = (name: string, args: unknown) => `${name} ${canonical(args)}`;

  const effects = [...ev.effects].sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  const byKey = new Map<string, EffectRecord[]>();
  for (const e of effects) {
    const k = keyOf(modelName(e), e.args);
    byKey.set(k, [...(byKey.get(k) ?? []), e]);
  }
  const intentIds = new Map<string, Set<string>>();
  for (const i of ev.intents ?? []) {
    const k = keyOf(i.name, parseArgs(i.arguments));
    (intentIds.get(k) ?? intentIds.set(k, new Set()).get(k)!).add(i.callId);
  }

  const duplicates: Duplicate[] = [];
  for (const [k, list] of byKey) {
    const intents = ev.intents ? (intentIds.get(k)?.size ?? 0) : undefined;
    if (list.length > Math.max(1, intents ?? 1)) {
      duplicates.push({ server: list[0]!.server, tool: list[0]!.tool, args: list[0]!.args, effects: list.length, intents: intents ?? "unknown" });
    }
  }

  // Approval matching: each gated effect, oldest first, takes the earliest allow decision for its
  // tool and arguments given before it; allow-once is used up, allow-always stays.
  const gated = new Set([...ev.gatedTools, ...ev.approvals.map((a) => a.toolName)]);
  const allows = ev.approvals
    .filter((a) => (a.decision === "allow-once" || a.decision === "allow-always") && a.decidedAt !== undefined)
    .map((a) => ({ ...a, key: keyOf(a.toolName, a.args), used: false }))
    .sort((a, b) => a.decidedAt! - b.decidedAt!);
  const unapproved: Unapproved[] = [];
  let gatedEffects = 0;
  for (const e of effects) {
    const name = modelName(e);
    if (!gated.has(name)) continue;
    gatedEffects++;
    const k = keyOf(name, e.args);
    const at = Date.parse(e.time);
    const forIt = allows.filter((a) => (a.args === undefined ? a.toolName === name : a.key === k));
    const fits = forIt.filter((a) => !(a.decision === "allow-once" && a.used));
    const before = fits.find((a) => a.decidedAt! <= at);
    if (before) {
      if (before.decision === "allow-once") before.used = true;
      continue;
    }
    const why = fits.length ? "before its allow decision" : forIt.length ? "its allow-once was used by an earlier effect" : "no allow decision";
    unapproved.push({ server: e.server, tool: e.tool, args: e.args, why });
  }

  return {
    effects: effects.length,
    keys: byKey.size,
    intents: ev.intents ? ev.intents.length : "unknown",
    approvals: ev.approvals.length,
    gatedEffects,
    duplicates: duplicates.sort((a, b) => canonical(a).localeCompare(canonical(b))),
    unapproved: unapproved.sort((a, b) => canonical(a).localeCompare(canonical(b))),
    sources: {},
  };
}

export const AT_MOST_ONCE_ID = "E-tool-effect-at-most-once";
export const APPROVED_FIRST_ID = "E-tool-effect-after-approval";

/** Nothing to judge when no effect reached a server in the window: no vacuous pass. */
export function atMostOnceExpectations(r: AtMostOnceReport): EvidenceCheckInput[] {
  if (!r.effects) return [];
  const out: EvidenceCheckInput[] = [
    {
      id: AT_MOST_ONCE_ID,
      expectation: "each tool call the model made reaches its MCP server at most once (across reconnects, restarts and retries)",
      holds: r.duplicates.length === 0,
      observed: r.duplicates.length ? r.duplicates : undefined,
      kind: "shortfall",
    },
  ];
  if (r.gatedEffects) {
    out.push({
      id: APPROVED_FIRST_ID,
      expectation: "a gated tool call reaches its MCP server only after an operator allowed it, one allow-once per call",
      holds: r.unapproved.length === 0,
      observed: r.unapproved.length ? r.unapproved : undefined,
      kind: "shortfall",
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Gathering from the live lab and the scenario's saved evidence

/** What the check takes of a model request, live or saved (model-requests.json): its function_calls. */
type ModelCalls = Pick<ModelRequest, "id" | "time" | "output">;
const ApprovalPayloadSchema = z.looseObject({
  id: z.string(),
  decision: z.string().optional(),
  ts: z.number().optional(),
  request: z.looseObject({ toolName: z.string().optional(), description: z.string().optional() }).optional(),
});

function toEffect(r: McpRecord): EffectRecord | undefined {
  if (r.kind !== "rpc" || r.rpcMethod !== "tools/call" || r.response || !r.tool) return undefined;
  return { server: r.server, tool: r.tool, args: r.args ?? {}, time: r.time, seq: r.seq, rpcId: r.rpcId, sessionId: r.sessionId };
}

function inWindow(time: string, from: number, to: number): boolean {
  const t = Date.parse(time);
  return t >= from && t <= to;
}

function readSaved<T>(file: string, schema: z.ZodType<T>): T | undefined {
  if (!fs.existsSync(file)) return undefined;
  const r = schema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  return r.success ? r.data : undefined;
}

/** "Run south__write_file with {...}" -> the arguments (the gate plugin's description). */
export function argsFromDescription(toolName: string, description: string | undefined): unknown {
  const prefix = `Run ${toolName} with `;
  if (!description?.startsWith(prefix)) return undefined;
  try {
    return JSON.parse(description.slice(prefix.length));
  } catch {
    return undefined;
  }
}

/** An MCP server whose request log could be read neither live nor from the scenario's saved evidence, and why. */
export interface UnreadServer {
  server: string;
  reason: string;
}

/**
 * The check's answer when some servers could not be read: a failing expectation stands (what
 * was read already shows an effect too many or unapproved); otherwise it could not tell, and
 * says so by throwing (the runner makes that the scenario's unknown, with this reason), rather
 * than passing on the servers it could read.
 */
export function unlessUnread(expectations: EvidenceCheckInput[], unread: UnreadServer[]): EvidenceCheckInput[] {
  if (!unread.length) return expectations;
  const failing = expectations.filter((e) => !e.holds);
  if (failing.length) return failing;
  throw new Error(`could not tell whether tool effects happened at most once: ${unread.map((u) => `MCP server ${u.server} could not be read (${u.reason})`).join("; ")}`);
}

export async function gatherAtMostOnce(w: ScenarioWindow): Promise<{ evidence: AtMostOnceEvidence; sources: Record<string, string>; unread: UnreadServer[] }> {
  const from = Date.parse(w.startedAt);
  const to = Date.parse(w.endedAt);
  const sources: Record<string, string> = {};
  const servers = mcpContainers(w.lab.spec);
  const separators = Object.fromEntries(servers.map((s) => [s.name, s.node ? "_" : "__"] as const)) as Record<string, "__" | "_">;

  // Effects: live logs plus the saved ones, the same record once (server + seq + time).
  const effects = new Map<string, EffectRecord>();
  const add = (e: EffectRecord | undefined) => e && inWindow(e.time, from, to) && effects.set(`${e.server} ${e.seq ?? ""} ${e.time} ${String(e.rpcId)}`, e);
  const unreachable = new Map<string, string>();
  for (const s of servers) {
    try {
      const recs = await w.lab.mcp(s.name).requests();
      for (const r of recs) add(toEffect(McpRecord.parse(r)));
      sources[`mcp ${s.name}`] = `live (${recs.length} records)`;
    } catch (err) {
      sources[`mcp ${s.name}`] = `unreachable: ${(err as Error).message}`;
      unreachable.set(s.name, (err as Error).message);
    }
  }
  const saved = readSaved(path.join(w.dir, "mcp-servers.json"), SavedMcpServers);
  if (saved) {
    for (const v of Object.values(saved)) for (const r of v.requests ?? []) add(toEffect(r));
    sources["mcp-servers.json"] = "saved by the scenario";
  }
  // A server unreachable now is still read if the scenario saved its log; otherwise its effects are unknown.
  const unread = [...unreachable]
    .filter(([name]) => !saved?.[name]?.requests)
    .map(([server, message]) => ({ server, reason: `unreachable after the scenario (${message}) and no saved log in mcp-servers.json` }));

  // Intents: the model's function_calls, live and saved.
  let intents: Intent[] | undefined;
  const models = new Map<string, ModelCalls>();
  try {
    for (const r of await w.lab.model.requests()) {
      const p = ModelRequest.safeParse(r);
      if (p.success) models.set(p.data.id, p.data);
    }
    sources.model = "live";
  } catch (err) {
    sources.model = `unreachable: ${(err as Error).message}`;
  }
  const savedModel = readSaved(path.join(w.dir, "model-requests.json"), SavedModelRequests);
  if (savedModel) {
    for (const r of savedModel) models.set(r.id, r);
    sources["model-requests.json"] = "saved by the scenario";
  }
  const inModel = [...models.values()].filter((r) => inWindow(r.time, from, to));
  // A scenario that reset the model without saving it leaves effects with no requests to explain them.
  if (inModel.length || !effects.size) {
    intents = inModel.flatMap((r) => r.output.flatMap((o) => (o.type === "function_call" && o.name && o.callId ? [{ name: o.name, arguments: o.arguments, callId: o.callId }] : [])));
  } else sources.intents = "unknown: no model request of the window is left (reset, not saved)";

  // Approvals: the operator's view (requested, resolved events; its own resolve requests).
  const approvals = new Map<string, ApprovalEvidence>();
  const sentAt = new Map<string, number>();
  for (const e of w.lab.operator?.client.transcript() ?? []) {
    if (e.t < from || e.t > to) continue;
    const frame = e.frame as { params?: { id?: unknown; decision?: unknown }; payload?: unknown } | undefined;
    if (e.kind === "req" && (e.method === "plugin.approval.resolve" || e.method === "approval.resolve") && typeof frame?.params?.id === "string") {
      sentAt.set(frame.params.id, Math.min(sentAt.get(frame.params.id) ?? Infinity, e.t));
    }
    if (e.kind !== "event" || (e.event !== "plugin.approval.requested" && e.event !== "plugin.approval.resolved")) continue;
    const p = ApprovalPayloadSchema.safeParse(frame?.payload);
    if (!p.success) continue;
    const a = approvals.get(p.data.id) ?? { id: p.data.id, toolName: p.data.request?.toolName ?? "?" };
    a.args ??= argsFromDescription(a.toolName, p.data.request?.description);
    if (e.event === "plugin.approval.resolved") {
      a.decision = p.data.decision;
      a.decidedAt = Math.min(a.decidedAt ?? Infinity, p.data.ts ?? e.t);
    }
    approvals.set(a.id, a);
  }
  for (const a of approvals.values()) if (a.decidedAt !== undefined && sentAt.has(a.id)) a.decidedAt = Math.min(a.decidedAt, sentAt.get(a.id)!);
  sources.approvals = `operator transcript (${approvals.size} approvals)`;

  return { evidence: { effects: [...effects.values()], intents, approvals: [...approvals.values()], gatedTools: w.lab.spec.mcp.approvalTools, separators }, sources, unread };
}

export const atMostOnceCheck: EvidenceCheck = {
  name: "at-most-once",
  async run(w) {
    const t0 = performance.now();
    const { evidence, sources, unread } = await gatherAtMostOnce(w);
    const report = { ...judgeAtMostOnce(evidence), sources };
    report.ms = Math.round(performance.now() - t0);
    writeJson(path.join(w.dir, "at-most-once.json"), { ...report, unread, evidence: { effects: evidence.effects, approvals: evidence.approvals, gatedTools: evidence.gatedTools } });
    return unlessUnread(atMostOnceExpectations(report), unread);
  },
};
