import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readPage } from "./chromium.ts";
import { containerEventLine } from "./containers.ts";
import { Redactor } from "./redact.ts";
import { reportHtml, writeReportHtml } from "./report-html.ts";
import { Run } from "./run.ts";
import { buildReportData, type Item, type ReportData } from "./timeline.ts";

// A small synthetic run folder shaped like a real one: one shared lab with an operator
// transcript (a turn with a tool call and an approval), a tap transcript (the node's connect
// frame with the gateway token in clear), containers.jsonl, a kill fault, an MCP server's records.
const T = Date.parse("2026-11-30T06:00:00.000Z");
const at = (s: number) => T + s * 1000;
const iso = (s: number) => new Date(at(s)).toISOString();
const TOKEN = "fleetlab-gateway-token-0001";
const DEVICE_TOKEN = "Jz33wuCrD_Ow0JLGr4o9vRcq3WERD7KkjkZMgM23at8";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-report-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const jsonl = (file: string, rows: unknown[]) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
};

function makeRun(): Run {
  const run = Run.create({ root, id: "20261130-060000-abcd", seed: 7 });
  const spec = { openclawVersion: "2026.9.6", gateway: { alias: "gateway", port: 18789, token: TOKEN }, mcp: { servers: [{ name: "north" }, { name: "south" }], nodeServers: [] } };
  run.update((r) => {
    r.startedAt = iso(0);
    r.topology = spec;
    r.plan = ["routing", "loss", "never"];
    r.labs = {
      "20261130-060000-abcd-1": {
        evidence: "shared-lab",
        spec,
        network: { name: "n", id: "i", subnet: "172.19.0.0/16" },
        members: [
          { alias: "node-1", kind: "node", container: "aaa", ip: "172.19.0.2" },
          { alias: "gateway", kind: "gateway", container: "bbb", ip: "172.19.0.3" },
          { alias: "tap-node-1", kind: "tap", container: "ccc", ip: "172.19.0.4" },
        ],
        timings: {},
      },
    };
    r.scenarios = [
      { name: "routing", verdict: "pass", seconds: 20, startedAt: iso(1), endedAt: iso(21), evidence: "scenarios/routing" },
      // An older row: no start and end; scenario.log gives them.
      { name: "loss", verdict: "known-finding", seconds: 30, detail: "known-finding F-loss" },
    ];
    r.findings = [{ findingId: "F-loss", scenario: "loss", expectation: "the turn ends with an error", outcome: "known-finding", observed: { agentWait: "timeout" }, kind: "shortfall" }];
  });
  const dir = run.dir;
  fs.mkdirSync(path.join(dir, "scenarios/routing"), { recursive: true });
  fs.writeFileSync(path.join(dir, "scenarios/routing/scenario.log"), `${iso(2)} routed\n`);
  fs.writeFileSync(
    path.join(dir, "scenarios/routing/findings.json"),
    JSON.stringify([
      { findingId: "R-routing", scenario: "routing", expectation: "each call reaches its own server", kind: "shortfall", outcome: "pass" },
      { findingId: "R-hint", scenario: "routing", expectation: "a write asks first", kind: "differs-from-reference", outcome: "known-finding", observed: { asked: false } },
    ]),
  );
  fs.mkdirSync(path.join(dir, "scenarios/loss"), { recursive: true });
  fs.writeFileSync(path.join(dir, "scenarios/loss/scenario.log"), `${iso(25)} node-1 killed\n${iso(50)} recovered\n`);

  const op = (n: number, s: number, e: Record<string, unknown>) => ({ n, ts: iso(s), t: at(s), conn: "operator#1", ...e });
  jsonl(path.join(dir, "shared-lab/transcripts/operator.jsonl"), [
    op(0, 0.5, { dir: "meta", kind: "open", note: "connected" }),
    op(1, 2, { dir: "out", kind: "req", id: "r1", method: "chat.send", frame: { type: "req", id: "r1", method: "chat.send", params: { sessionKey: "agent:main:s1", message: "route both </script><b>x</b>", idempotencyKey: "run-1" } } }),
    op(2, 2.1, { dir: "in", kind: "res", id: "r1", method: "chat.send", ok: true, frame: { type: "res", id: "r1", ok: true, payload: { runId: "run-1", status: "started" } } }),
    op(3, 3, { dir: "in", kind: "event", event: "agent", frame: { type: "event", event: "agent", payload: { runId: "run-1", stream: "item", data: { kind: "tool", phase: "start", name: "north__example_echo", toolCallId: "c1", startedAt: at(3) } } } }),
    op(4, 3.5, { dir: "in", kind: "event", event: "agent", frame: { type: "event", event: "agent", payload: { runId: "run-1", stream: "item", data: { kind: "tool", phase: "end", name: "north__example_echo", toolCallId: "c1", status: "completed", endedAt: at(3.5) } } } }),
    op(5, 4, { dir: "in", kind: "event", event: "plugin.approval.requested", frame: { type: "event", event: "plugin.approval.requested", payload: { id: "plugin:1", request: { toolName: "south__write_file", runId: "run-1" } } } }),
    op(6, 5, { dir: "in", kind: "event", event: "plugin.approval.resolved", frame: { type: "event", event: "plugin.approval.resolved", payload: { id: "plugin:1", decision: "allow-once" } } }),
    op(7, 6, { dir: "in", kind: "event", event: "chat", frame: { type: "event", event: "chat", payload: { runId: "run-1", state: "final" } } }),
    // A turn that never ends (the node was lost under it).
    op(8, 26, { dir: "out", kind: "req", id: "r2", method: "chat.send", frame: { type: "req", id: "r2", method: "chat.send", params: { sessionKey: "agent:main:s2", message: "stuck", idempotencyKey: "run-2" } } }),
    op(9, 26.1, { dir: "in", kind: "res", id: "r2", method: "chat.send", ok: true, frame: { type: "res", id: "r2", ok: true, payload: { runId: "run-2", status: "started" } } }),
    op(10, 40, { dir: "out", kind: "req", id: "r3", method: "node.list", frame: { type: "req", id: "r3", method: "node.list", params: {} } }),
    op(11, 40.2, { dir: "in", kind: "res", id: "r3", method: "node.list", ok: false, frame: { type: "res", id: "r3", ok: false, error: { code: "UNAVAILABLE", message: `echo of ${DEVICE_TOKEN}` } } }),
    op(12, 55, { dir: "meta", kind: "close", note: "code 1000" }),
  ]);

  const frame = (seq: number, s: number, dir: string, text: string, extra: Record<string, unknown> = {}) => ({ kind: "frame", seq, t: at(s), conn: "c1", path: "/", dir, opcode: 1, fin: true, len: text.length, masked: dir === "node->gw", action: "forward", text, ...extra });
  const big = JSON.stringify({ type: "event", event: "node.invoke.request", payload: { command: "worker.workspace.exec.v1", blob: "x".repeat(9000) } });
  jsonl(path.join(dir, "shared-lab/transcripts/tap-node-1.jsonl"), [
    { kind: "conn", seq: 1, t: at(1), event: "open", conn: "c1", remote: "172.19.0.2:4000" },
    frame(2, 1.1, "node->gw", JSON.stringify({ type: "req", id: "1", method: "connect", params: { auth: { token: TOKEN }, device: { id: "d", signature: "sig-abcdefgh" } } }), { type: "req", method: "connect" }),
    frame(3, 1.2, "gw->node", JSON.stringify({ type: "res", id: "1", ok: true, payload: { type: "hello-ok", auth: { deviceToken: DEVICE_TOKEN } } }), { type: "res", ok: true, replyTo: "connect" }),
    ...Array.from({ length: 10 }, (_, i) => frame(10 + i, 26 + i, "gw->node", JSON.stringify({ type: "event", event: "tick", payload: { i } }), { type: "event", event: "tick" })),
    frame(30, 28.5, "gw->node", big, { type: "event", event: "node.invoke.request", command: "worker.workspace.exec.v1" }),
    // A frame the tap cut short: not JSON, still holds a token in clear.
    frame(31, 29, "node->gw", `{"type":"req","method":"connect","params":{"auth":{"token":"other-secret-token-42"}`, { truncated: true }),
    { kind: "conn", seq: 40, t: at(29.5), event: "close", conn: "c1", remote: "172.19.0.2:4000", path: "/", durationMs: 28500, frames: { "node->gw": 2, "gw->node": 12 }, bytes: { "node->gw": 1, "gw->node": 1 } },
  ]);

  jsonl(path.join(dir, "shared-lab/containers.jsonl"), [
    { t: at(0.2), time: iso(0.2), alias: "node-1", kind: "node", container: "aaa", action: "start" },
    { t: at(27), time: iso(27), alias: "node-1", kind: "node", container: "aaa", action: "kill", signal: "SIGKILL" },
    { t: at(27.1), time: iso(27.1), alias: "node-1", kind: "node", container: "aaa", action: "die", exitCode: 137 },
    { t: at(40), time: iso(40), alias: "node-1", kind: "node", container: "aaa", action: "start" },
  ]);
  const step = (s: string, sec: number) => ({ id: "f1", fault: "kill", target: "node-1", step: s, t: at(sec), ms: 5 });
  jsonl(path.join(dir, "faults.jsonl"), [step("prepare", 26.5), step("trigger", 26.5), step("inject", 27), step("in-effect", 27.05), step("heal", 39.9), step("healed", 40), step("cleanup", 40.1)]);

  fs.writeFileSync(
    path.join(dir, "scenarios/routing/mcp-servers.json"),
    JSON.stringify({ north: { requests: [{ seq: 6, time: iso(3.2), server: "north", kind: "rpc", httpMethod: "POST", sessionId: "s", rpcMethod: "tools/call", rpcId: 2, tool: "example_echo", args: { text: "hi" } }], held: [], effects: [], sessions: [] } }),
  );
  return run;
}

const run = makeRun();
const { data, redactor } = buildReportData(run.dir, run.record);
const laneOf = (i: Item) => data.lanes.find((l) => l.id === i.lane)!;
const itemsOn = (label: string) => data.items.filter((i) => laneOf(i).label === label);

describe("report data (timeline.ts) from a run folder", () => {
  it("a lane per member, for faults, turns, tool calls per MCP server, and per connection", () => {
    const labels = data.lanes.map((l) => l.label);
    expect(labels).toEqual(expect.arrayContaining(["scenarios", "gateway", "node-1", "tap-node-1", "faults", "turns", "north · calls", "south · calls", "north · server saw", "operator#1 ws", "node-1 · c1 · node ws"]));
    // Members first, connections last.
    expect(labels.indexOf("gateway")).toBeLessThan(labels.indexOf("node-1"));
    expect(labels.indexOf("turns")).toBeLessThan(labels.indexOf("operator#1 ws"));
  });

  it("container starts, kills (with the signal) and deaths (with the exit code) on the member's lane", () => {
    const node = itemsOn("node-1").map((i) => i.label);
    expect(node).toEqual(expect.arrayContaining(["start", "kill (SIGKILL)", "die (exit 137)", "running"]));
  });

  it("a fault from inject to healed, drawn across its lab, with its steps; also on its target's lane", () => {
    const f = data.items.find((i) => i.kind === "fault" && laneOf(i).label === "faults")!;
    expect(f).toMatchObject({ label: "kill node-1", t: at(27), end: at(40) + 5, band: true, tone: "fault" });
    expect(f.marks!.map((m) => m.label)).toEqual(["trigger", "inject", "in-effect", "heal", "healed"]);
    expect(itemsOn("node-1").some((i) => i.kind === "fault")).toBe(true);
    expect(data.items.some((i) => i.kind === "armed")).toBe(true);
  });

  it("turns from chat.send to the final event; a turn without an end is drawn open", () => {
    const [done, stuck] = itemsOn("turns");
    expect(done).toMatchObject({ kind: "turn", t: at(2), end: at(6), tone: "ok" });
    expect(done!.label).toContain("final");
    expect(stuck).toMatchObject({ tone: "open", t: at(26), end: at(55) });
    expect(stuck!.label).toContain("no end seen");
  });

  it("tool calls and approvals per MCP server, and what the server saw", () => {
    expect(itemsOn("north · calls")).toEqual([expect.objectContaining({ kind: "tool", t: at(3), end: at(3.5), tone: "ok", label: "north__example_echo completed" })]);
    expect(itemsOn("south · calls")).toEqual([expect.objectContaining({ kind: "approval", t: at(4), end: at(5), tone: "ok", label: "approval south__write_file: allow-once" })]);
    expect(itemsOn("north · server saw")).toEqual([expect.objectContaining({ kind: "mcp", label: "tools/call example_echo" })]);
  });

  it("frames per connection, each with its full content and where it came from", () => {
    const frames = data.items.filter((i) => i.kind === "frame");
    expect(frames.length).toBe(data.caps.framesTotal);
    const res = frames.find((i) => i.key === "node.list" && i.tone === "error")!;
    expect(res.label).toBe("← node.list error UNAVAILABLE");
    expect(res.source).toBe("shared-lab/transcripts/operator.jsonl#n=11");
    const connect = frames.find((i) => i.key === "connect" && laneOf(i).label.startsWith("node-1"))!;
    expect(connect.detail).toMatchObject({ seq: 2, dir: "node->gw", frame: { method: "connect" } });
  });

  it("scenario boundaries from run.json, or estimated from scenario.log for older rows", () => {
    expect(data.scenarios[0]).toMatchObject({ name: "routing", t0: at(1), t1: at(21), bounds: "run.json", lab: "20261130-060000-abcd-1" });
    expect(data.scenarios[1]).toMatchObject({ name: "loss", t1: at(50), t0: at(20), bounds: "scenario.log" });
    expect(data.run.neverRan).toEqual(["never"]);
  });

  it("checks from findings.json (passes included), else run.json's findings; with links to the files beside", () => {
    expect(data.checks.map((c) => `${c.scenario}/${c.findingId}/${c.outcome}`)).toEqual(["routing/R-routing/pass", "routing/R-hint/known-finding", "loss/F-loss/known-finding"]);
    expect(data.scenarios[0]!.links.map((l) => l.href)).toEqual(expect.arrayContaining(["scenarios/routing/scenario.log", "scenarios/routing/findings.json"]));
    expect(data.labs[0]!.links.map((l) => l.href)).toEqual(expect.arrayContaining(["shared-lab/transcripts/operator.jsonl", "shared-lab/transcripts/tap-node-1.jsonl"]));
  });
});

describe("a run killed before its lab went down (no operator transcript)", () => {
  it("takes tool calls and approvals from the scenario's events.json", () => {
    const dir = path.join(root, "cut");
    fs.cpSync(run.dir, dir, { recursive: true });
    fs.rmSync(path.join(dir, "shared-lab/transcripts/operator.jsonl"));
    const ev = (s: number, event: string, payload: unknown) => ({ t: at(s), event, payload });
    fs.writeFileSync(
      path.join(dir, "scenarios/routing/events.json"),
      JSON.stringify([
        ev(3, "agent", { runId: "run-1", stream: "item", data: { kind: "tool", phase: "start", name: "north__example_echo", toolCallId: "c1" } }),
        ev(4, "plugin.approval.requested", { id: "plugin:1", request: { toolName: "south__write_file" } }),
      ]),
    );
    const cut = buildReportData(dir, run.record).data;
    const lane = (label: string) => cut.lanes.find((l) => l.label === label)!.id;
    expect(cut.items.filter((i) => i.lane === lane("north · calls"))).toEqual([expect.objectContaining({ kind: "tool", tone: "open", t: at(3), end: at(21), source: "scenarios/routing/events.json" })]);
    expect(cut.items.filter((i) => i.lane === lane("south · calls"))).toEqual([expect.objectContaining({ kind: "approval", label: "approval south__write_file: pending" })]);
  });
});

describe("caps", () => {
  it("at most frameCap frames per connection and scenario, the rest one visible 'left out' item and a notice naming the transcript", () => {
    const small = buildReportData(run.dir, run.record, { frameCap: 4 }).data;
    // The operator's 7 frames during "routing" and the tap's 12 during "loss" are over 4.
    const left = small.items.filter((i) => i.kind === "omitted").map((i) => i.label);
    expect(left).toEqual(["3 frames left out: full transcript shared-lab/transcripts/operator.jsonl", "8 frames left out: full transcript shared-lab/transcripts/tap-node-1.jsonl"]);
    expect(small.notices.some((n) => /left out/.test(n.message) && n.file === "shared-lab/transcripts/tap-node-1.jsonl")).toBe(true);
    expect(small.caps.framesEmbedded).toBeLessThan(small.caps.framesTotal);
  });

  it("a run that would embed more than framesTotal frames gets a lower cap per connection and scenario", () => {
    const small = buildReportData(run.dir, run.record, { framesTotal: 23 }).data;
    expect(small.caps.framesPerConnectionAndScenario).toBeLessThan(600);
    expect(small.caps.framesEmbedded).toBeLessThanOrEqual(23);
    expect(small.items.some((i) => i.kind === "omitted")).toBe(true);
  });

  it("a frame's content past the limit is cut, saying where the whole frame is", () => {
    const big = data.items.find((i) => i.key === "worker.workspace.exec.v1")!;
    expect(big.detail).toMatchObject({ cut: expect.stringMatching(/the whole frame is at shared-lab\/transcripts\/tap-node-1\.jsonl#seq=30$/) });
  });
});

describe("report.html", () => {
  const written = writeReportHtml(run.dir);
  const html = fs.readFileSync(written.file, "utf8");
  const embedded = (): ReportData => JSON.parse(html.match(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/)![1]!);

  it("is one file with its data as JSON and nothing fetched from anywhere", () => {
    expect(written.file).toBe(path.join(run.dir, "report.html"));
    expect(embedded().run.id).toBe(run.id);
    expect(html).not.toMatch(/<script[^>]+src=|<link\b|@import|url\(\s*["']?(https?:)?\/\//i);
    expect(html).toContain("default-src 'none'");
  });

  it("text that looks like markup stays text: '<' is \\u003c in the JSON, so no '</script>' inside it", () => {
    const json = html.match(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/)![1]!;
    expect(json).not.toContain("<");
    expect(JSON.stringify(embedded())).toContain("route both </script><b>x</b>");
  });

  it("credentials are redacted: the gateway token, device tokens (also where echoed), signatures, tokens in cut frames", () => {
    for (const secret of [TOKEN, DEVICE_TOKEN, "sig-abcdefgh", "other-secret-token-42"]) expect(html).not.toContain(secret);
    expect(html).toContain("[redacted]");
  });

  it("reportHtml fills the page's placeholders only", () => {
    const page = reportHtml(data, (s) => redactor.known(s));
    expect(page).not.toContain("<!--DATA-->");
    expect(page).not.toContain("<!--SCRIPT-->");
    expect(page.match(/<script\b/g)).toHaveLength(2);
  });
});

describe("redaction", () => {
  it("string values under credential keys, not counts that merely mention tokens", () => {
    const r = new Redactor();
    const v = r.value({ auth: { token: "abcdefgh12", password: "pw-123456" }, usage: { inputTokens: 12, maxTokens: "30" }, headers: { Authorization: "Bearer zzz" }, clientSecret: "s3cr3t-value" });
    expect(v).toEqual({ auth: { token: "[redacted]", password: "[redacted]" }, usage: { inputTokens: 12, maxTokens: "30" }, headers: { Authorization: "[redacted]" }, clientSecret: "[redacted]" });
    expect(r.known("x abcdefgh12 y")).toBe("x [redacted] y");
    expect(r.text("GET / HTTP/1.1\r\nAuthorization: Bearer abc\r\nHost: x")).toBe("GET / HTTP/1.1\r\nAuthorization: [redacted]\r\nHost: x");
  });
});

describe("containers.jsonl lines from engine events", () => {
  const ev = (Action: string, attrs: Record<string, string> = {}) => ({ Type: "container", Action, Actor: { ID: "0123456789abcdef", Attributes: { "fleetlab.alias": "node-1", "fleetlab.kind": "node", ...attrs } }, timeNano: 1796018384253612345 });
  it("keeps life-cycle actions with the alias, the signal by name and the exit code", () => {
    expect(containerEventLine(ev("kill", { signal: "9" }))).toEqual({ t: 1796018384253.6, time: "2026-11-30T05:59:44.253Z", alias: "node-1", kind: "node", container: "0123456789ab", action: "kill", signal: "SIGKILL" });
    expect(containerEventLine(ev("die", { exitCode: "137" }))).toMatchObject({ action: "die", exitCode: 137 });
    expect(containerEventLine(ev("exec_start: sh -c true"))).toBeUndefined();
  });
});

describe("reading a dumped page back", () => {
  it("verdict rows by data-scenario/data-verdict, timeline items by data-kind", () => {
    const dom = `<html><body data-rendered="true"><table><tr data-scenario="a" data-verdict="pass"></tr><tr data-scenario="b" data-verdict="known-finding"></tr></table>
      <div class="item k-fault t-fault" style="left:1px" title="kill" data-kind="fault" data-tone="fault"></div><div class="item k-frame t-in instant" data-kind="frame"></div><div class="item k-frame t-out instant" data-kind="frame"></div></body></html>`;
    expect(readPage(dom)).toEqual({ rendered: true, verdicts: { a: "pass", b: "known-finding" }, items: { fault: 1, frame: 2 } });
  });
});
