import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadScenarios } from "../../scenarios/index.ts";
import { LabError } from "../core/log.ts";
import type { MatrixRecord } from "./matrix.ts";
import type { Excerpt } from "../findings/excerpt.ts";
import type { FindingRecord } from "../findings/findings.ts";
import type { Upstream } from "../findings/upstream.ts";
import {
  MEASURED,
  REPORTS_DIR,
  TITLE_MAX,
  closeIds,
  cutAtWord,
  findFinding,
  headerComment,
  issueCommand,
  issueReport,
  measure,
  readExcerpt,
  registeredFindings,
  reportFile,
  versionRows,
  withoutMeasured,
} from "./issue-report.ts";

const scenarios = await loadScenarios();
const all = registeredFindings(scenarios);

let tmp: string;
beforeAll(() => void (tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-issue-test-"))));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("the committed bug reports (fixtures/findings/reports/)", () => {
  it("one per registered finding, and none for a finding no longer registered", () => {
    const want = all.map((f) => reportFile(f.record.id)).sort();
    expect(fs.readdirSync(REPORTS_DIR).filter((f) => f.endsWith(".md")).sort()).toEqual(want);
  });

  it("each is current: written again from the record, the scenario file and the excerpt, it reads the same outside the parts measured on a machine (make issue ALL=1)", () => {
    const empty = fs.mkdtempSync(path.join(tmp, "runs-"));
    const stale: string[] = [];
    for (const f of all) {
      const file = path.join(REPORTS_DIR, reportFile(f.record.id));
      if (!fs.existsSync(file)) continue;
      const ex = readExcerpt(f.record.id);
      const again = issueReport(f, ex, measure(f, ex, empty));
      if (withoutMeasured(fs.readFileSync(file, "utf8")) !== withoutMeasured(again)) stale.push(f.record.id);
    }
    expect(stale, "write them again: make issue ALL=1").toEqual([]);
  });

  it("each quotes its excerpt's raw evidence when the excerpt has some", () => {
    for (const f of all) {
      const ex = readExcerpt(f.record.id);
      const text = fs.readFileSync(path.join(REPORTS_DIR, reportFile(f.record.id)), "utf8");
      if (ex?.logs.length) expect(text, f.record.id).toContain(ex.logs[0]!.slice(0, 60));
      expect(text.startsWith(f.record.kind === "differs-from-reference" ? "# [Differs from reference]: " : "# [Bug]: "), f.record.id).toBe(true);
    }
  });

  it("each title is at most TITLE_MAX long and, when cut, cut at a word boundary of the expectation with an ellipsis", () => {
    for (const f of all) {
      const title = fs.readFileSync(path.join(REPORTS_DIR, reportFile(f.record.id)), "utf8").split("\n")[0]!.slice(2);
      expect(title.length, f.record.id).toBeLessThanOrEqual(TITLE_MAX);
      const expectation = f.record.expectation.replace(/\s+/g, " ").trim();
      const at = title.indexOf(expectation.slice(0, 24));
      expect(at, `${f.record.id}: the title carries the expectation`).toBeGreaterThan(0);
      const shown = title.slice(at);
      if (shown === expectation) continue;
      expect(shown.endsWith("…"), f.record.id).toBe(true);
      const kept = shown.slice(0, -1);
      expect(expectation.startsWith(kept), f.record.id).toBe(true);
      expect(expectation[kept.length], `${f.record.id}: cut mid-word after "${kept.slice(-20)}"`).toMatch(/[\s,;:.)]/);
    }
  });

  it("each report of a repro leads with its upstream thread and status; R-145189's says it is filed against 2026.9.4 for an issue fixed in 2026.9.5", () => {
    for (const f of all.filter((x) => x.upstream)) {
      const lines = fs.readFileSync(path.join(REPORTS_DIR, reportFile(f.record.id)), "utf8").split("\n");
      const name = f.upstream!.kind === "pr" ? `openclaw PR #${f.upstream!.issue}` : `openclaw#${f.upstream!.issue}`;
      expect(lines[0], f.record.id).toContain(name);
      expect(lines[2], f.record.id).toContain(name);
      expect(lines[2], f.record.id).toContain(f.upstream!.source);
    }
    const text = fs.readFileSync(path.join(REPORTS_DIR, "R-145189-connection-survives.md"), "utf8");
    expect(text.split("\n")[0]).toMatch(/^# \[Bug\]: openclaw#145189 \(fixed in 2026\.9\.5 by PR #145191\) on openclaw@2026\.9\.4: /);
    expect(text).toContain("Known upstream as openclaw#145189, fixed in 2026.9.5 by PR #145191; not a new report.");
    expect(text).toContain("2026.9.4, the version of this evidence, is older than the fix.");
  });
});

describe("a report follows OpenClaw's bug form", () => {
  const rec: FindingRecord = {
    id: "R-x-refused",
    expectation: "every patch succeeds, however slowly",
    signature: { refused: [{ code: "UNAVAILABLE" }] },
    versions: ["2026.9.6"],
    variants: [{ versions: "2026.9.5", signature: { refused: [] }, note: "nothing refused, but slower" }],
    kind: "shortfall",
    evidence: "fixtures/findings/R-x-refused.json",
  };
  const excerpt: Excerpt = {
    id: rec.id,
    scenario: "repro-155359",
    version: "2026.9.6",
    run: "20261201-000000-abcd",
    outcome: "known-finding",
    expectation: rec.expectation,
    observed: rec.signature,
    scenarioLog: ["2026-12-01T00:00:01Z check R-x-refused: known-finding"],
    logs: ["gateway.stderr.log: 2026-12-01T00:00:00Z database is locked token=supersecretvalue123"],
    frames: [{ file: "operator.jsonl", t: Date.parse("2026-12-01T00:00:00Z"), dir: "in", method: "sessions.patch", carries: ["UNAVAILABLE"], text: '{"ok":false,"error":{"code":"UNAVAILABLE"}}' }],
    needles: ["UNAVAILABLE"],
  };
  const f = { record: rec, scenario: "repro-155359" };

  it("its fields in the form's order, the steps from the scenario's header, the evidence redacted", () => {
    const text = issueReport(f, excerpt);
    const heads = [...text.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
    expect(heads).toEqual(["Bug type", "Summary", "Steps to reproduce", "Expected behavior", "Actual behavior", "OpenClaw version", "Operating system", "Install method", "Logs, screenshots, and evidence", "Impact and severity", "Additional information"]);
    expect(text.split("\n")[0]).toBe("# [Bug]: not met on openclaw@2026.9.6: every patch succeeds, however slowly");
    expect(text).toContain("\n> openclaw#155359"); // the header of scenarios/repro/repro-155359.ts
    expect(text).toContain("make repro NAME=repro-155359 N=5 OPENCLAW_VERSION=2026.9.6");
    expect(text).toContain("- 2026.9.5: `{\"refused\":[]}` (nothing refused, but slower)");
    expect(text).toContain('# 2025-12-01T00:00:00.000Z'.replace("2025", "2026"));
    expect(text).toContain("database is locked token=[redacted]");
    expect(text).not.toContain("supersecretvalue123");
  });

  it("a finding seen on a build of one's own is said as the build, with OPENCLAW_PACKAGE in its steps, never as the published version", () => {
    const text = issueReport(f, { ...excerpt, version: "2026.9.6+0123456789" });
    expect(text.split("\n")[0]).toBe("# [Bug]: not met on build openclaw@2026.9.6+0123456789: every patch succeeds, however slowly");
    expect(text).toContain("1. A build of openclaw 2026.9.6 (`2026.9.6+0123456789`: packed from a branch, not the published package)");
    expect(text).toContain("make repro NAME=repro-155359 N=5 OPENCLAW_PACKAGE=<the build's .tgz>");
    expect(text).not.toContain("Real, published");
  });

  it("from this machine's runs: versions affected and not from the newest matrix, k/N from the newest repro loop, a regression's bounds", () => {
    const runs = fs.mkdtempSync(path.join(tmp, "runs-"));
    const cell = (verdict: string, findings: string[], more: Partial<MatrixRecord["cells"][string][string]> = {}) => ({ verdict, seconds: 1, findings, run: "r", ...more });
    const m: MatrixRecord = {
      id: "matrix-20261201-1",
      startedAt: "",
      versions: ["2026.9.4", "2026.9.5", "2026.9.6"],
      scenarios: ["repro-155359"],
      cells: { "repro-155359": { "2026.9.4": cell("pass", [], { notAffected: ["R-x-refused"] }), "2026.9.5": cell("known-finding", ["known-finding R-x-refused [variant 2026.9.5]"], { variants: { "R-x-refused": "2026.9.5" } }), "2026.9.6": cell("known-finding", ["known-finding R-x-refused [variant base]"]) } },
      runs: {},
    };
    fs.mkdirSync(path.join(runs, m.id));
    fs.writeFileSync(path.join(runs, m.id, "matrix.json"), JSON.stringify(m));
    expect(versionRows(m, "repro-155359", "R-x-refused").map((r) => [r.version, r.status, r.detail])).toEqual([
      ["2026.9.4", "not affected", undefined],
      ["2026.9.5", "affected", "variant 2026.9.5"],
      ["2026.9.6", "affected", undefined],
    ]);
    const run = "20261201-120000-abcd";
    fs.mkdirSync(path.join(runs, run));
    fs.writeFileSync(
      path.join(runs, run, "run.json"),
      JSON.stringify({ id: run, startedAt: "", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 8, node: "v24.1.0" }, engine: { version: "28.1.1", apiVersion: "1.49" }, topology: { openclawVersion: "2026.9.6" }, timings: {}, scenarios: [], repro: { scenario: "repro-155359", asked: 10, until: false, ran: 10, reproduced: 7, newSignature: 0, failedOtherwise: 0, notReproduced: 3, unknown: 0, hits: [] } }),
    );
    // A newer premise self-test of the same scenario (--aim-off) is no reproduction loop: skipped.
    const selfTest = "20261201-130000-abcd";
    fs.mkdirSync(path.join(runs, selfTest));
    fs.writeFileSync(
      path.join(runs, selfTest, "run.json"),
      JSON.stringify({ id: selfTest, startedAt: "", seed: 1, host: { platform: "linux-x64", cpus: 2, memGiB: 8, node: "v24.1.0" }, topology: { openclawVersion: "2026.9.6" }, timings: {}, scenarios: [], repro: { scenario: "repro-155359", asked: 1, until: false, aimOff: true, caught: 1, ran: 1, reproduced: 0, newSignature: 0, failedOtherwise: 0, notReproduced: 0, unknown: 1, hits: [] } }),
    );
    const text = issueReport(f, { ...excerpt, run }, measure(f, { ...excerpt, run }, runs));
    expect(text).not.toContain("could not tell 1");
    expect(text).toContain("Regression (worked before, now fails)");
    expect(text).toContain("| 2026.9.5 | affected (variant 2026.9.5) |");
    expect(text).toContain("Affected: 2026.9.5, 2026.9.6. Not affected: 2026.9.4.");
    expect(text).toContain("make repro NAME=repro-155359 N=10 OPENCLAW_VERSION=2026.9.6");
    expect(text).toContain("reproduced 7/10 (registered signature), not reproduced 3");
    expect(text).toContain("Last known good version 2026.9.4, first known bad version 2026.9.5");
    expect(text).toContain("linux-x64, Docker 28.1.1 (API 1.49), Node v24.1.0");
    // What a machine measured is between the markers, and only there.
    expect(withoutMeasured(text)).not.toContain("7/10");
    expect(withoutMeasured(text)).not.toContain(MEASURED);
    expect(withoutMeasured(text)).toBe(withoutMeasured(issueReport(f, { ...excerpt, run }, {})));
  });

  it("the header comment is the first block of two or more // lines, after the imports or not", () => {
    expect(headerComment('import x from "y";\n// a\n//\n// b\nconst z = 1;\n// c\n')).toEqual(["a", "", "b"]);
    expect(headerComment("// one\nimport x;\n")).toEqual([]);
  });
});

describe("a report knows the tracker", () => {
  const rec: FindingRecord = {
    id: "R-x-dropped",
    expectation: "while the gateway is still sending a large frame to a node, the gateway does not close that connection: the frame arrives whole and the invoke returns the node's answer",
    signature: { connectionEnded: "dropped by the gateway" },
    versions: ["2026.9.4"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-x-dropped.json",
  };
  const upstream: Upstream = {
    issue: 145189,
    title: "Control UI disconnects while WebSocket pings are queued behind outgoing data",
    status: "fixed",
    fixPr: 145191,
    fixedIn: "2026.9.5",
    fixedInSource: "the release notes of 2026.9.5",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/145189",
  };
  const excerpt = (version: string, frames: unknown[] = []): Excerpt => ({
    id: rec.id,
    scenario: "repro-145189",
    version,
    run: "20261201-000000-abcd",
    outcome: "known-finding",
    expectation: rec.expectation,
    observed: rec.signature,
    scenarioLog: [],
    logs: [],
    frames,
    needles: [],
  });
  const f = { record: rec, scenario: "repro-145189", upstream };
  const lines = (text: string) => text.split("\n");

  it("a finding of an issue fixed in a later release says so first: known upstream, fixed in X by the PR, not a new report", () => {
    const text = issueReport(f, excerpt("2026.9.4"));
    expect(lines(text)[0]).toBe("# [Bug]: openclaw#145189 (fixed in 2026.9.5 by PR #145191) on openclaw@2026.9.4: while the gateway is still sending a large frame to a node, the gateway does not…");
    expect(lines(text)[2]).toMatch(/^> \*\*Known upstream as openclaw#145189, fixed in 2026\.9\.5 by PR #145191; not a new report\.\*\* This evidence is from 2026\.9\.4, older than the fix/);
    expect(lines(text)[2]).toContain("How 2026.9.5 is known: the release notes of 2026.9.5.");
    expect(text).toContain("Fixed upstream in 2026.9.5 (PR #145191): 2026.9.4, the version of this evidence, is older than the fix.");
    expect(text).toContain('Upstream: [openclaw#145189](https://github.com/openclaw/openclaw/issues/145189) "Control UI disconnects while WebSocket pings are queued behind outgoing data": fixed in 2026.9.5 by PR #145191 (read 2026-12-03).');
  });

  it("a finding seen on the release that carries the fix, or a newer one, reads as a regression of it", () => {
    const text = issueReport(f, excerpt("2026.9.6"));
    expect(lines(text)[0]).toMatch(/^# \[Bug\]: regression of openclaw#145189 \(fixed in 2026\.9\.5 by PR #145191\) on openclaw@2026\.9\.6: /);
    expect(lines(text)[2]).toContain("**A regression of openclaw#145189, fixed in 2026.9.5 by PR #145191: seen here on 2026.9.6, which carries that fix**");
    expect(text).toContain("Regression (worked before, now fails): of openclaw#145189's fix, shipped in 2026.9.5.");
    expect(text).toContain("2026.9.6 carries the fix, so this is a regression of it.");
    expect(issueReport(f, excerpt("2026.9.5"))).toContain("regression of openclaw#145189");
  });

  it("a fixed issue whose release the thread does not state: known, fixed by the PR, a regression only if the version carries it", () => {
    const text = issueReport({ ...f, upstream: { ...upstream, fixedIn: undefined, fixedInSource: undefined } }, excerpt("2026.9.6"));
    expect(lines(text)[0]).toMatch(/^# \[Bug\]: openclaw#145189 \(fixed by PR #145191\) still seen on openclaw@2026\.9\.6: /);
    expect(lines(text)[2]).toContain("if 2026.9.6 carries #145191, this is a regression of it; the thread does not say which release shipped it");
  });

  it("an open issue: its status and pending fix PR in the title, the report a reproduction for that thread", () => {
    const open: Upstream = { ...upstream, issue: 148693, status: "open", fixPr: 148770, fixPrState: "open", fixedIn: undefined, fixedInSource: undefined, source: "https://github.com/openclaw/openclaw/issues/148693" };
    const text = issueReport({ ...f, upstream: open }, excerpt("2026.9.6"));
    expect(lines(text)[0]).toMatch(/^# \[Bug\]: openclaw#148693 \(open, fix PR #148770 open\) reproduced on openclaw@2026\.9\.6: /);
    expect(lines(text)[2]).toBe("> **Known upstream as openclaw#148693, open, fix PR #148770 open.** This adds a reproduction to that thread; not a new report (tracker read 2026-12-03: https://github.com/openclaw/openclaw/issues/148693).");
  });

  it("an unknown status says so and guesses nothing: no fix, no release", () => {
    const unknown: Upstream = { issue: 145189, title: upstream.title, status: "unknown", checked: "2026-12-03", source: upstream.source };
    const text = issueReport({ ...f, upstream: unknown }, excerpt("2026.9.4"));
    expect(lines(text)[0]).toMatch(/^# \[Bug\]: openclaw#145189 \(status unknown\) on openclaw@2026\.9\.4: /);
    expect(lines(text)[2]).toContain("its status could not be read");
    expect(text).not.toMatch(/fixed in|fix PR|regression of/);
  });

  it("a finding of no known thread says none is known, and keeps the plain title", () => {
    const text = issueReport({ record: rec, scenario: "repro-145189" }, excerpt("2026.9.4"));
    expect(lines(text)[0]).toMatch(/^# \[Bug\]: not met on openclaw@2026\.9\.4: /);
    expect(lines(text)[2]).toContain("no thread is known to fleetlab for this finding");
  });

  it("a differs-from-reference finding does not read as a bug against OpenClaw's contract, upstream thread or not", () => {
    const differs = { ...rec, kind: "differs-from-reference" as const };
    for (const g of [{ ...f, record: differs }, { record: differs, scenario: "repro-145189" }]) {
      const text = issueReport(g, excerpt("2026.9.6"));
      expect(lines(text)[0]).toMatch(/^# \[Differs from reference\]: openclaw@2026\.9\.6/);
      expect(text).not.toContain("[Bug]");
      expect(text).not.toContain("A regression of");
      expect(text).not.toContain("Regression (worked before");
      expect(text).not.toContain("published contract");
      expect(text).toContain("recorded as a difference, not filed as a bug against its contract");
    }
    expect(lines(issueReport({ ...f, record: differs }, excerpt("2026.9.6")))[0]).toContain("related to openclaw#145189 (fixed in 2026.9.5 by PR #145191)");
  });

  it("the steps: at the protocol level first (the repro's protocolSteps, then the requests the excerpt recorded), then the lab's command", () => {
    const sent = { file: "operator.jsonl", t: Date.parse("2026-12-01T00:00:00Z"), conn: "operator#2", dir: "out", method: "node.invoke", text: '{"type":"req","id":"1","method":"node.invoke","params":{"command":"system.which"}}' };
    const answer = { file: "operator.jsonl", t: Date.parse("2026-12-01T00:00:01Z"), dir: "in", method: "node.invoke", text: '{"type":"res","id":"1","ok":false}' };
    const steps = (text: string) => text.slice(text.indexOf("### Steps to reproduce"), text.indexOf("### Expected behavior"));
    const declared = steps(issueReport({ ...f, protocolSteps: ["Pair a node.", "Send `node.invoke` with a large parameter."] }, excerpt("2026.9.4", [sent, answer])));
    expect(declared.indexOf("At the protocol level")).toBeGreaterThan(0);
    expect(declared.indexOf("At the protocol level")).toBeLessThan(declared.indexOf("make repro NAME=repro-145189"));
    expect(declared).toContain("1. Pair a node.\n2. Send `node.invoke` with a large parameter.");
    expect(declared).toContain('- 2026-12-01T00:00:00.000Z `node.invoke`: `{"type":"req","id":"1","method":"node.invoke","params":{"command":"system.which"}}`');
    expect(declared).not.toContain('"type":"res"');
    // Without declared steps, the requests the excerpt recorded are the protocol steps.
    const derived = steps(issueReport(f, excerpt("2026.9.4", [sent, answer])));
    expect(derived).toContain("1. Connect as an operator: `connect` with `role: \"operator\"`");
    expect(derived).toContain('2. Send `node.invoke`: `{"type":"req","id":"1","method":"node.invoke","params":{"command":"system.which"}}`');
    expect(derived.indexOf("2. Send `node.invoke`")).toBeLessThan(derived.indexOf("make repro"));
    // The excerpt's requests (every one the lab sent in the scenario's window) are the steps when it has them, a poll said as one.
    const withRequests = { ...excerpt("2026.9.4", [answer]), requests: [{ t: Date.parse("2026-12-01T00:00:00Z"), method: "chat.send", params: '{"sessionKey":"agent:main:s","message":"hi"}' }, { t: Date.parse("2026-12-01T00:00:01Z"), method: "agent.wait", params: '{"runId":"r"}', times: 3 }] };
    const fromRequests = steps(issueReport(f, withRequests));
    expect(fromRequests).toContain('2. Send `chat.send`: `{"type":"req","method":"chat.send","params":{"sessionKey":"agent:main:s","message":"hi"}}`');
    expect(fromRequests).toContain('3. Send `agent.wait`: `{"type":"req","method":"agent.wait","params":{"runId":"r"}}` (sent 3 times in a row: a poll)');
    expect(fromRequests.indexOf("3. Send `agent.wait`")).toBeLessThan(fromRequests.indexOf("make repro"));
    // Neither: said so, and the scenario's header (after the command) is what there is.
    const neither = steps(issueReport(f, excerpt("2026.9.4")));
    expect(neither).toContain("At the protocol level: not written down for this scenario yet");
    expect(neither.indexOf("make repro")).toBeLessThan(neither.indexOf("its header"));
  });

  it("a title is cut at a word boundary with an ellipsis, never mid-word, within its length", () => {
    expect(cutAtWord("short enough", 20)).toBe("short enough");
    expect(cutAtWord("every patch succeeds, however slowly", 22)).toBe("every patch succeeds…");
    expect(cutAtWord("every patch succeeds however slowly", 21)).toBe("every patch succeeds…");
    expect(cutAtWord("on slow state storage (100 ms per write) succeeds", 28)).toBe("on slow state storage…");
    expect(cutAtWord("word  with\n spaces", 100)).toBe("word with spaces");
    for (let max = 10; max < 60; max++) {
      const cut = cutAtWord(rec.expectation, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(rec.expectation.startsWith(cut.slice(0, -1))).toBe(true);
      expect(rec.expectation[cut.length - 1]).toMatch(/[\s,:]/);
    }
  });
});

describe("fleetlab issue", () => {
  it("an unknown id is refused, naming the close ones; an id is also known by its file name", () => {
    expect(() => findFinding(all, "F-midturn-loss-slot")).toThrow(LabError);
    expect(() => findFinding(all, "F-midturn-loss-slot")).toThrow(/no finding is registered as 'F-midturn-loss-slot'\. Close ones: F-midturn-loss-slot-reserved/);
    expect(findFinding(all, "F-protocol-drift-event-agent-lane").record.id).toBe("F-protocol-drift event agent lane");
    expect(closeIds(["R-155359-patch-beside-slow-write", "F-capacity-turn-fails-while-slots-full"], "155359 patch")).toEqual(["R-155359-patch-beside-slow-write"]);
  });

  it("ID writes and prints one report; --all writes every one; neither, or both, is bad input", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "reports-"));
    const runs = fs.mkdtempSync(path.join(tmp, "runs-"));
    let out = "";
    expect(issueCommand(["R-155359-patch-beside-slow-write"], false, scenarios, (t) => void (out += t), { dir, runs })).toBe(0);
    expect(out).toMatch(/^# \[Bug\]: openclaw#155359 \(open, no fix PR\) reproduced on openclaw@2026\.9\.6: every sessions\.patch/);
    expect(fs.readdirSync(dir)).toEqual(["R-155359-patch-beside-slow-write.md"]);
    out = "";
    issueCommand([], true, scenarios, (t) => void (out += t), { dir, runs });
    expect(fs.readdirSync(dir)).toHaveLength(all.length);
    expect(out).toContain(`${all.length} report(s) in`);
    expect(() => issueCommand([], false, scenarios, () => {})).toThrow(/issue needs one finding id or --all/);
    expect(() => issueCommand(["x"], true, scenarios, () => {})).toThrow(/issue needs one finding id or --all/);
  });
});
