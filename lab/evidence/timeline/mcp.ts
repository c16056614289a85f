// What each MCP server recorded (a scenario's mcp-servers.json) on a lane per server: a tick
// per request or event it logged, a box per held call.
import { SavedMcpServers, asWritten } from "../records/index.ts";
import type { Board } from "./board.ts";
import type { Tone } from "./types.ts";

export function drawMcpServers(b: Board): void {
  const seen = new Set<string>();
  for (const s of b.scenarios) {
    const rel = s.evidence ? `${s.evidence}/mcp-servers.json` : undefined;
    if (!rel || !b.exists(rel)) continue;
    const saved = asWritten(SavedMcpServers, b.readJson(rel));
    if (!saved) {
      b.notices.push({ lab: s.lab, message: `${rel} is not the MCP servers' record; not shown`, file: rel });
      continue;
    }
    const lab = s.lab ?? "";
    for (const [server, v] of Object.entries(saved)) {
      const lane = b.lane(lab, "mcp", server, `${server} · server saw`, rel);
      if (v.unreachable) b.notices.push({ lab, lane, message: `${s.name}: MCP server ${server} was unreachable when its records were read (${v.unreachable})`, file: rel });
      for (const r of v.requests ?? []) {
        if (seen.has(`${lab}|${server}|${r.seq}`)) continue;
        seen.add(`${lab}|${server}|${r.seq}`);
        const what = r.kind === "rpc" ? `${r.rpcMethod ?? "response"}${r.tool ? ` ${r.tool}` : ""}` : `${r.event ?? r.kind}`;
        const tone: Tone = r.rpcMethod === "tools/call" ? "ok" : r.rpcMethod === "notifications/cancelled" || r.event === "call-cancelled" || r.event === "call-held" ? "warn" : r.event === "rejected" || r.event === "unknown-session" ? "error" : r.event === "effect" ? "fault" : "muted";
        b.add({ lane, kind: "mcp", t: Date.parse(r.time), label: what, tone, key: r.rpcMethod ?? r.event ?? r.kind, detail: b.redact.value(r), source: `${rel}#seq=${r.seq}` });
      }
      for (const h of v.held ?? []) {
        if (seen.has(`${lab}|${server}|${h.id}`)) continue;
        seen.add(`${lab}|${server}|${h.id}`);
        const end = h.releasedAt ?? h.cancelledAt;
        b.add({ lane, kind: "mcp", t: Date.parse(h.heldAt), end: end ? Date.parse(end) : s.t1, label: `held ${h.tool}: ${h.status}`, tone: h.status === "cancelled" ? "warn" : "info", key: "held", detail: b.redact.value(h), source: rel });
      }
    }
  }
}
