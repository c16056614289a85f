// The operator transcript (transcripts/operator.jsonl): a lane per connection with a tick per
// frame, the turns (chat.send or agent -> its runId -> the first terminal state seen), and the
// tool calls and approvals its events show (tools.ts).
import { TranscriptEntry } from "../records/index.ts";
import type { Board } from "./board.ts";
import { drawToolCalls, type GatewayEvent } from "./tools.ts";
import type { LabView, Tone } from "./types.ts";

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

export function drawOperator(b: Board, lab: LabView): void {
  const rel = `${lab.evidence}/transcripts/operator.jsonl`;
  const entries = b.readJsonl(rel, TranscriptEntry, lab.key).map((x) => x.value);
  if (!entries.length) return;
  const open = new Map<string, TranscriptEntry>();
  const turns = new Map<string, Turn>();
  const reqs = new Map<string, TranscriptEntry>();
  const events: GatewayEvent[] = [];
  const lastT = entries.at(-1)!.t;
  for (const e of entries) {
    const lane = b.lane(lab.key, "connection", `op:${e.conn}`, `${e.conn} ws`, rel);
    const src = `${rel}#n=${e.n}`;
    if (e.kind === "open") open.set(e.conn, e);
    if (e.kind === "close") {
      const o = open.get(e.conn);
      b.add({ lane, kind: "conn", t: o?.t ?? e.t, end: e.t, label: `connection: ${e.note ?? "closed"}`, tone: "info", detail: b.redact.value({ open: o, close: e }), source: src });
      open.delete(e.conn);
    }
    if (e.kind === "error" || e.kind === "anomaly") b.add({ lane, kind: "conn", t: e.t, label: `${e.kind}: ${e.note ?? ""}`, tone: e.kind === "error" ? "error" : "warn", detail: b.redact.value(e), source: src });
    if (e.kind !== "req" && e.kind !== "res" && e.kind !== "event") continue;

    const frame = (e.frame ?? {}) as { params?: Record<string, unknown>; payload?: Record<string, unknown>; error?: { code?: string; message?: string } };
    const key = e.method ?? e.event ?? "";
    const p = (frame.payload ?? {}) as Record<string, unknown>;
    let label = e.kind === "req" ? `→ ${key}` : e.kind === "res" ? `← ${key} ${e.ok === false ? `error ${frame.error?.code ?? ""}` : "ok"}` : `← ${key}`;
    if (e.event === "chat" && typeof p.state === "string") label += ` ${p.state}`;
    if (e.event === "agent" && typeof p.stream === "string") label += ` ${p.stream}`;
    const tone: Tone = e.ok === false ? "error" : e.event === "chat" && (p.state === "error" || p.state === "aborted") ? "warn" : e.dir === "out" ? "out" : "in";
    b.frame({ lane, kind: "frame", t: e.t, label, tone, key, detail: { n: e.n, ts: new Date(e.t).toISOString(), conn: e.conn, dir: e.dir, kind: e.kind, bytes: e.bytes, frame: e.frame }, source: src }, e.bytes);

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
    b.add({ lane: b.lane(lab.key, "connection", `op:${conn}`, `${conn} ws`, rel), kind: "conn", t: o.t, end: lastT, label: "connection (open at the end of the transcript)", tone: "info", source: `${rel}#n=${o.n}` });
  }

  const turnsLane = b.lane(lab.key, "turns", "turns", "turns", rel);
  for (const turn of turns.values()) {
    const tone: Tone = turn.outcome === "final" ? "ok" : turn.outcome === "error" ? "error" : turn.outcome === "aborted" || turn.outcome === "cancelled" ? "warn" : "open";
    const what = turn.message ? `“${turn.message.slice(0, 60)}”` : turn.runId;
    b.add({
      lane: turnsLane,
      kind: "turn",
      t: turn.t,
      end: turn.end ?? lastT,
      label: `${what} → ${turn.outcome ?? "no end seen"}`,
      tone,
      key: turn.method,
      detail: b.redact.value({ ...turn, sentAt: new Date(turn.t).toISOString(), endedAt: turn.end === undefined ? null : new Date(turn.end).toISOString(), ms: turn.end === undefined ? null : turn.end - turn.t }),
      source: `${rel}#n=${turn.sentN}`,
    });
  }
  drawToolCalls(b, lab, events, rel, lastT);
}
