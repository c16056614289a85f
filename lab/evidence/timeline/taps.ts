// The wire taps' transcripts (transcripts/tap-<node>.jsonl): a lane per connection through each
// tap, named by what it carried (node ws, worker ws, an HTTP request), with its span, its HTTP
// exchanges, a tick per frame, connection errors and faults, and the rules that fired on it.
import fs from "node:fs";
import path from "node:path";
import { TapRecord, type TapConnEvent, type TapFrame } from "../records/index.ts";
import type { Board } from "./board.ts";
import type { LabView, Tone } from "./types.ts";

export function drawTaps(b: Board, lab: LabView): void {
  const dir = path.join(b.dir, lab.evidence, "transcripts");
  if (!fs.existsSync(dir)) return;
  for (const f of fs.readdirSync(dir).filter((f) => /^tap-.+\.jsonl$/.test(f)).sort((x, y) => x.localeCompare(y, "en", { numeric: true }))) {
    const node = f.slice(4, -6);
    const rel = `${lab.evidence}/transcripts/${f}`;
    const records = b.readJsonl(rel, TapRecord, lab.key).map((x) => x.value);
    const lastT = records.at(-1)?.t;
    const opened = new Map<string, TapConnEvent>();
    const paths = new Map<string, string>();
    for (const r of records) {
      const conn = "conn" in r ? r.conn : null;
      if (typeof conn === "string" && !paths.has(conn) && "path" in r && typeof r.path === "string") {
        paths.set(conn, r.kind === "http" && !r.upgrade ? `http ${r.method} ${r.path}` : r.path === "/" ? "node ws" : r.path === "/__openclaw__/worker" ? "worker ws" : `ws ${r.path}`);
      }
    }
    const laneOf = (conn: string) => b.lane(lab.key, "connection", `tap:${node}:${conn}`, `${node} · ${conn} · ${paths.get(conn) ?? "no request"}`, rel);
    for (const r of records) {
      const src = `${rel}#seq=${r.seq}`;
      if (r.kind === "rule") {
        if (r.event !== "fired") continue;
        const lane = typeof r.conn === "string" ? laneOf(r.conn) : b.lane(lab.key, "faults", "faults", "faults");
        b.add({ lane, kind: "conn", t: r.t, label: `rule ${r.id} fired: ${r.action}`, tone: "fault", key: "rule", detail: r, source: src });
        continue;
      }
      const lane = laneOf(r.conn);
      if (r.kind === "conn") {
        if (r.event === "open") opened.set(r.conn, r);
        else if (r.event === "close") {
          const o = opened.get(r.conn);
          b.add({ lane, kind: "conn", t: o?.t ?? r.t, end: r.t, label: `connection ${paths.get(r.conn) ?? ""} (${Math.round(r.durationMs)} ms)`, tone: "info", detail: b.redact.value({ open: o, close: r }), source: src });
          opened.delete(r.conn);
        } else if (r.event !== "upgrade" && r.event !== "tunnel") {
          const what = r.event === "fault" ? r.code : r.event === "error" ? (r.code ?? r.message) : r.message;
          b.add({ lane, kind: "conn", t: r.t, label: `${r.event}: ${what}`, tone: r.event === "fault" ? "fault" : "error", key: `conn ${r.event}`, detail: b.redact.value(r), source: src });
        }
      } else if (r.kind === "http") {
        const status = r.status;
        const tone: Tone = status === null ? "warn" : status >= 400 ? "error" : "info";
        // A WebSocket upgrade is a tick (its connection's span says the rest); other exchanges (the worker bundle) a box.
        b.add({ lane, kind: "http", t: r.t, end: r.upgrade ? undefined : r.t + r.durationMs, label: `${r.method} ${r.path} ${status ?? "(no response)"}`, tone, key: `http ${r.method}`, detail: b.redact.value(r), source: src });
      } else {
        drawFrame(b, lane, node, r, src);
      }
    }
    for (const [conn, o] of opened) b.add({ lane: laneOf(conn), kind: "conn", t: o.t, end: lastT, label: "connection (open when the tap was saved)", tone: "info", source: `${rel}#seq=${o.seq}` });
  }
}

function drawFrame(b: Board, lane: string, node: string, r: TapFrame, src: string): void {
  const out = r.dir === "node->gw";
  const close = r.close;
  const name = r.method ?? r.event ?? r.replyTo;
  const key = close ? "close" : (r.command ?? name ?? `opcode ${r.opcode}`);
  let label = `${out ? "→" : "←"} ${close ? `close ${close.code} ${close.reason}` : `${r.type ?? `opcode ${r.opcode}`} ${name ?? ""}`}`;
  if (r.command) label += ` ${r.command}`;
  if (r.ok === false) label += ` error ${r.errorCode ?? ""}`;
  if (r.action !== "forward") label += ` [${r.action}]`;
  const tone: Tone = r.action !== "forward" ? "fault" : r.ok === false ? "error" : close ? "warn" : out ? "out" : "in";
  const text = r.text;
  let content: unknown = text;
  if (text?.startsWith("{")) {
    try {
      content = JSON.parse(text);
    } catch {
      content = undefined;
    }
  }
  if (text !== undefined && typeof content !== "object") content = b.redact.text(text);
  const { text: _text, ...meta } = r;
  b.frame({ lane, kind: "frame", t: r.t, label: label.replace(/\s+/g, " ").trim(), tone, key, detail: { ...meta, node, frame: content }, source: src }, text?.length);
}
