import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../evidence/run.ts";
import { buildExcerpt, cutAround, cutAroundAll, decidingProblems, hasRawEvidence, probesOf, scenarioLines } from "./excerpt.ts";

let root: string;
beforeAll(() => void (root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-excerpt-test-"))));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const T0 = Date.parse("2026-12-01T14:04:00.000Z");
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();
const TOKEN = "fleetlab-gateway-token-0001";

/** A run folder of one own-lab scenario: its log, the operator transcript, the node's tap frames and container logs. */
function runFolder(checks: { id: string; observed: unknown }[], log: string[]): { dir: string; record: RunRecord } {
  const dir = fs.mkdtempSync(path.join(root, "run-"));
  const s = path.join(dir, "scenarios", "midturn");
  fs.mkdirSync(path.join(s, "lab", "transcripts"), { recursive: true });
  fs.mkdirSync(path.join(s, "lab", "logs"), { recursive: true });
  fs.writeFileSync(path.join(s, "scenario.log"), log.join("\n") + "\n");
  const op = (sec: number, method: string, payload: unknown, kind = "res") => JSON.stringify({ n: sec, ts: iso(sec), t: T0 + sec * 1000, conn: "operator#1", dir: "in", kind, method, frame: { type: kind, id: `id-${sec}`, ok: true, payload } });
  fs.writeFileSync(
    path.join(s, "lab", "transcripts", "operator.jsonl"),
    [
      op(1, "node.list", { nodes: [{ displayName: "node-1", workerSlots: { total: 2, available: 2 } }] }),
      op(10, "agent.wait", { runId: "190b70a3-5cfe-44fa-8705-187efecdb4c4", status: "timeout" }),
      op(20, "node.list", { nodes: [{ displayName: "node-1", workerSlots: { total: 2, available: 1 }, token: TOKEN }] }),
      op(21, "node.list", { nodes: [{ displayName: "node-1", workerSlots: { total: 2, available: 1 }, token: TOKEN }] }),
      JSON.stringify({ n: 22, ts: iso(22), t: T0 + 22_000, conn: "operator#1", dir: "in", kind: "event", event: "agent", frame: { type: "event", event: "agent", payload: { runId: "x", lane: "main" } } }),
      // After the checks were judged: never their evidence.
      op(90, "node.list", { nodes: [{ displayName: "node-1", workerSlots: { total: 2, available: 1 } }] }),
    ].join("\n") + "\n",
  );
  fs.writeFileSync(path.join(s, "lab", "logs", "model.stdout.log"), [`${iso(5)} ${iso(5)} req-3 POST /v1/responses 18805B`, `${iso(5)} ${iso(5)} req-3 held (step holdAfter 2)`].join("\n") + "\n");
  fs.writeFileSync(path.join(s, "lab", "logs", "tap-node-1.stdout.log"), `${iso(20)} {"text":"workerSlots total 2 available 1 req-3"}\n`);
  const record = {
    id: "20261201-140321-test",
    startedAt: iso(0),
    seed: 1,
    host: { platform: "linux-x64", cpus: 2, memGiB: 8, node: "v24" },
    topology: { openclawVersion: "2026.9.6", gateway: { token: TOKEN } },
    timings: {},
    scenarios: [{ name: "midturn", verdict: "known-finding", seconds: 60, startedAt: iso(0), endedAt: iso(100), evidence: "scenarios/midturn" }],
    findings: checks.map((c) => ({ findingId: c.id, scenario: "midturn", expectation: "e", outcome: "known-finding", observed: c.observed, kind: "shortfall" })),
  } as RunRecord;
  return { dir, record };
}

const LOG = [
  `${iso(6)} model request req-3 held; node-1 SIGKILLed 420 ms later`,
  `${iso(25)} node-1 back; slots free false`,
  `${iso(30)} check F-slot: known-finding (observed {"within_s":20,"workerSlots":{"total":2,"available":1}})`,
  `${iso(30)} check F-held: known-finding (observed true)`,
  `${iso(30)} check F-turn: known-finding (observed {"agentWait":"timeout"})`,
  `${iso(40)} evidence check protocol, F-protocol-drift event agent lane: known-finding`,
];

describe("an excerpt carries the raw evidence that decided its finding", () => {
  it("a signature of numbers: the frames carrying the same key/value pairs, in the window up to the check, once each, redacted", () => {
    const { dir, record } = runFolder([{ id: "F-slot", observed: { within_s: 20, workerSlots: { total: 2, available: 1 } } }], LOG);
    const ex = buildExcerpt(dir, record, "F-slot");
    expect(hasRawEvidence(ex)).toBe(true);
    expect(ex.frames).toHaveLength(1); // the two polls are one frame; the poll after the check and the one with 2 free are not evidence
    expect(ex.frames[0]).toMatchObject({ file: "operator.jsonl", method: "node.list", carries: ['"total":2,"available":1'] });
    expect(JSON.stringify(ex.frames[0])).toContain('\\"workerSlots\\":{\\"total\\":2,\\"available\\":1}');
    expect(JSON.stringify(ex)).not.toContain(TOKEN);
    // The bound the scenario asserts is not searched for; the tap's own log is not evidence (its frames are).
    expect(ex.needles).not.toContain('"within_s":20');
    expect(ex.logs.some((l) => l.startsWith("tap-"))).toBe(false);
    // The scenario's lines just before the check are kept as context, beside its own line.
    expect(ex.scenarioLog[0]).toContain("model request req-3 held");
    expect(ex.scenarioLog.at(-1)).toContain("check F-slot");
  });

  it("a lab-named key is found by the value a raw frame carried (agentWait: timeout -> agent.wait status timeout)", () => {
    const { dir, record } = runFolder([{ id: "F-turn", observed: { agentWait: "timeout" } }], LOG);
    const ex = buildExcerpt(dir, record, "F-turn");
    expect(ex.frames.map((f) => (f as { method: string }).method)).toEqual(["agent.wait"]);
  });

  it("a boolean signature: what made it true, through the ids the scenario's lines before the check name", () => {
    const { dir, record } = runFolder([{ id: "F-held", observed: true }], LOG);
    const ex = buildExcerpt(dir, record, "F-held");
    expect(hasRawEvidence(ex)).toBe(true);
    expect(ex.logs).toEqual([expect.stringMatching(/^model\.stdout\.log: .* req-3 POST/), expect.stringMatching(/^model\.stdout\.log: .* req-3 held/)]);
    expect(ex.needles).toContain("id req-3");
  });

  it("a protocol-drift signature: frames of that kind carrying that field", () => {
    const id = "F-protocol-drift event agent lane";
    const { dir, record } = runFolder([{ id, observed: { frame: "event agent", path: "lane", rule: "additionalProperties", schema: "2026.9.1" } }], LOG);
    const ex = buildExcerpt(dir, record, id);
    expect(ex.frames).toEqual([expect.objectContaining({ event: "agent", carries: ["event agent", '"lane"'] })]);
    expect(ex.logs).toEqual([]);
  });

  it("the lines the probes come from, and the cut keeps what a frame carries", () => {
    const s = scenarioLines(LOG, "F-turn");
    expect(s.context).toEqual(LOG.slice(0, 2));
    expect(s.at).toBe(T0 + 30_000);
    const p = probesOf({ within_s: 45, run: { status: "error", stopReason: "restart" }, items: ["aborted"] }, s.context);
    expect(p.groups).toEqual([['"status":"error"', '"stopReason":"restart"']]);
    expect(p.values).toEqual(["error", "restart", "aborted"]);
    expect(p.ids).toEqual(["req-3"]);
    const long = `${"x".repeat(1000)}"available":1${"y".repeat(1000)}`;
    expect(cutAround(long, 1000, 90)).toContain('"available":1');
  });
});

describe("the deciding value: every frame that carries it, cut around all it carries", () => {
  it("a frame is cut around every span it carries, not its first match only", () => {
    const text = `{"id":"req-3",${'"pad":"x",'.repeat(200)}"state":"interrupted"}`;
    const spans: [number, number][] = [
      [text.indexOf("req-3"), text.indexOf("req-3") + 5],
      [text.indexOf('"state":"interrupted"'), text.indexOf('"state":"interrupted"') + 21],
    ];
    const cut = cutAroundAll(text, spans, 200);
    expect(cut).toContain("req-3");
    expect(cut).toContain('"state":"interrupted"');
    expect(cut).toContain("…");
    expect(cut.length).toBeLessThan(260);
  });

  it("every deciding frame is kept, beyond the budget of the best few; the lab's requests are kept as steps", () => {
    const { dir, record } = runFolder([{ id: "F-slot", observed: { workerSlots: { total: 2, available: 1 } } }], LOG);
    const t = path.join(dir, "scenarios", "midturn", "lab", "transcripts", "operator.jsonl");
    const extra = Array.from({ length: 9 }, (_, i) => JSON.stringify({ n: 40 + i, ts: iso(23), t: T0 + 23_000 + i, conn: "operator#1", dir: "in", kind: "res", method: `m${"abcdefghi"[i]}.list`, frame: { type: "res", id: `x${i}`, ok: true, payload: { pad: "p".repeat(700), workerSlots: { total: 2, available: 1 } } } }));
    const req = JSON.stringify({ n: 39, ts: iso(2), t: T0 + 2_000, conn: "operator#1", dir: "out", kind: "req", method: "chat.send", frame: { type: "req", id: "r1", method: "chat.send", params: { sessionKey: "agent:main:s", message: "hello" } } });
    fs.appendFileSync(t, [req, req, ...extra].join("\n") + "\n");
    const ex = buildExcerpt(dir, record, "F-slot");
    expect(ex.frames.length).toBe(10); // the node.list poll and the nine others: more than the six of the best few
    for (const fr of ex.frames) expect(JSON.stringify(fr)).toContain('\\"available\\":1');
    expect(ex.deciding).toEqual(['"total":2,"available":1']);
    expect(ex.requests).toEqual([{ t: T0 + 2_000, conn: "operator#1", method: "chat.send", params: '{"sessionKey":"agent:main:s","message":"hello"}', times: 2 }]);
    expect(decidingProblems(ex)).toEqual([]);
  });

  it("a check that read fixed? is no evidence of its finding: refused", () => {
    const { dir, record } = runFolder([{ id: "F-turn", observed: { agentWait: "timeout" } }], LOG);
    record.findings![0]!.outcome = "fixed?";
    expect(() => buildExcerpt(dir, record, "F-turn")).toThrow(/did not see finding F-turn .*it reads fixed\? there/);
  });

  it("decidingProblems: no raw evidence; a frame whose cut lost what it carries; the run's deciding value not kept; an old excerpt without the signature's value", () => {
    const observed = { pendingInput: "interrupted" };
    expect(decidingProblems({ observed, logs: [], frames: [] })).toEqual(["no raw evidence: no frame, RPC result or container log line"]);
    const cutAway = { file: "operator.jsonl", t: 1, method: "chat.history", carries: ['"state":"interrupted"'], frame: '{"messages":[…' };
    expect(decidingProblems({ observed, logs: [], frames: [cutAway], deciding: ['"state":"interrupted"'] })).toEqual([
      'a frame (operator.jsonl chat.history at 1) says it carries "\\"state\\":\\"interrupted\\"", cut away from its text',
      'the run carried "\\"state\\":\\"interrupted\\"" of the signature, and no frame or line kept here does (cut again: make excerpt)',
    ]);
    const kept = { ...cutAway, frame: '{"pendingInputs":[{"state":"interrupted"}]}' };
    expect(decidingProblems({ observed, logs: [], frames: [kept], deciding: ['"state":"interrupted"'] })).toEqual([]);
    // Cut before the rule (no `deciding`): the signature's value, as its probes find it, must be there.
    expect(decidingProblems({ observed, logs: ["gateway.log: something else"], frames: [] })[0]).toMatch(/no frame or log line carries the signature's deciding value/);
    expect(decidingProblems({ observed, logs: ["gateway.log: input interrupted"], frames: [] })).toEqual([]);
    // A drift: a frame of that kind carrying that field.
    const drift = { frame: "event agent", path: "lane", rule: "additionalProperties" };
    expect(decidingProblems({ observed: drift, logs: [], frames: [{ event: "chat", frame: '{"lane":"main"}' }] })).toHaveLength(1);
    expect(decidingProblems({ observed: drift, logs: [], frames: [{ event: "agent", frame: '{"lane":"main"}' }] })).toEqual([]);
  });
});
