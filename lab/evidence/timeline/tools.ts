// Tool calls (agent item events of kind tool: start -> end) and approvals (requested ->
// resolved) on a lane per MCP server (by the tool's server prefix), from the gateway events an
// operator received: its transcript (operator.ts), or a scenario's events.json when the lab left
// no transcript (a run killed before its lab went down).
import { RecordedEvents, asWritten } from "../records/index.ts";
import type { Board } from "./board.ts";
import type { LabView, Tone } from "./types.ts";

/** An event the operator received (from its transcript, or a scenario's events.json). */
export interface GatewayEvent {
  t: number;
  event: string;
  payload: Record<string, unknown>;
}

export function drawToolCalls(b: Board, lab: LabView, events: GatewayEvent[], rel: string, lastT: number): void {
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
  const servers = mcpServerNames(b, lab);
  const serverOf = (tool: string) => servers.find((s) => tool.startsWith(`${s}__`) || tool.startsWith(`${s}_`));
  for (const call of tools.values()) {
    const server = serverOf(call.name);
    const lane = b.lane(lab.key, "tools", server ?? "(agent)", server ? `${server} · calls` : "tool calls", rel);
    const status = String((call.end?.p.data as Record<string, unknown> | undefined)?.status ?? "");
    const tone: Tone = !call.end ? "open" : status === "completed" ? "ok" : status === "failed" || status === "error" ? "error" : "warn";
    const t = call.start?.t ?? call.end!.t;
    b.add({ lane, kind: "tool", t, end: call.end?.t ?? lastT, label: `${call.name} ${call.end ? status : "(no end seen)"}`, tone, key: call.name, detail: b.redact.value({ name: call.name, runId: call.runId, start: call.start?.p, end: call.end?.p }), source: rel });
  }
  for (const [id, a] of approvals) {
    const req = (a.requested?.p.request ?? a.resolved?.p.request ?? {}) as Record<string, unknown>;
    const toolName = String(req.toolName ?? "");
    const server = serverOf(toolName);
    const lane = b.lane(lab.key, "tools", server ?? "(agent)", server ? `${server} · calls` : "tool calls", rel);
    const decision = a.resolved ? String(a.resolved.p.decision ?? "resolved") : undefined;
    const tone: Tone = !decision ? "open" : decision.startsWith("allow") ? "ok" : decision === "deny" ? "error" : "warn";
    const t = a.requested?.t ?? a.resolved!.t;
    b.add({ lane, kind: "approval", t, end: a.resolved?.t ?? lastT, label: `approval ${toolName || id}: ${decision ?? "pending"}`, tone, key: "approval", detail: b.redact.value({ id, requested: a.requested?.p, resolved: a.resolved?.p }), source: rel });
  }
}

/** A lab without an operator transcript (a run killed before its lab went down): tool calls and approvals from each scenario's events.json. */
export function drawScenarioEvents(b: Board): void {
  for (const s of b.scenarios) {
    const lab = b.labs.find((l) => l.key === s.lab);
    const rel = s.evidence ? `${s.evidence}/events.json` : undefined;
    if (!lab || !rel || b.exists(`${lab.evidence}/transcripts/operator.jsonl`) || !b.exists(rel)) continue;
    const recorded = asWritten(RecordedEvents, b.readJson(rel));
    if (!recorded?.length) continue;
    const events = recorded.map((e) => ({ t: e.t, event: e.event, payload: (e.payload ?? {}) as Record<string, unknown> }));
    drawToolCalls(b, lab, events, rel, s.t1 ?? events.at(-1)!.t);
  }
}

/** MCP server names of a lab (gateway-side and node-hosted), from its spec. */
function mcpServerNames(b: Board, lab: LabView): string[] {
  const spec = (b.record.labs?.[lab.key]?.spec ?? b.record.topology) as { mcp?: { servers?: { name?: string }[]; nodeServers?: { name?: string }[] } } | undefined;
  return [...(spec?.mcp?.servers ?? []), ...(spec?.mcp?.nodeServers ?? [])].map((s) => s.name).filter((n): n is string => typeof n === "string");
}
