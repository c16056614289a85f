// repro-137379's premise and checks over hand-made histories (no Docker): the listings as the MCP
// servers recorded them, the run's end and the tools the turn's first model request offered.
import { describe, expect, it } from "vitest";
import type { McpRecord } from "../../lab/clients/mcp.ts";
import { deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-137379.ts";
import { historyOf } from "../../lab/testing/histories.ts";

/** As the runner keeps them: JSON. */
const recorded = (o: Observed): Observations => JSON.parse(JSON.stringify(o)) as Observations;
const checks = (o: Observed) => deriveChecks(scenario.checks ?? [], recorded(o), true);
const check = (id: string, o: Observed) => checks(o).checks.find((c) => c.id === id);
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-137379-lists-delayed");
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));

const T0 = Date.parse("2026-12-02T03:30:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const rec = (more: Partial<McpRecord>): McpRecord => ({ seq: 1, time: at(0), server: "north", kind: "rpc", httpMethod: "POST", sessionId: "s-1", ...more });

/** One tools/list held `ms` by the server (its list-delayed event: answered or cancelled), and the gateway's notifications/cancelled of it when `cancelled` says why. */
function listing(server: string, ms: number, outcome: "answered" | "cancelled", cancelled?: string): McpRecord[] {
  const out = [rec({ server, seq: 4, rpcMethod: "tools/list", rpcId: 2 }), rec({ server, seq: 5, kind: "event", event: "list-delayed", rpcId: 2, ms, reason: outcome, time: at(ms) })];
  if (cancelled) out.push(rec({ server, seq: 6, rpcMethod: "notifications/cancelled", params: { requestId: 2, reason: cancelled }, time: at(1485) }));
  return out;
}

const TIMED_OUT = "Error: MCP tool listing timed out after 1500ms";
const BOTH = ["exec", "north__example_echo", "south__example_echo"];
const quiet = (more: Partial<NonNullable<Observed["first"]>> = {}): Observed => ({
  first: { north: listing("north", 1200, "answered"), south: listing("south", 1600, "answered"), run: "ok", toolNames: BOTH, ...more },
});
/** The registered run: north's listing taken, south's cut at 1500 ms, north's tool only offered. */
const reproduced = (): Observed => quiet({ south: listing("south", 1600, "cancelled", TIMED_OUT), toolNames: ["exec", "north__example_echo"] });

describe("P-137379-lists-delayed", () => {
  it("met: both listings held as set, north's answered and not cancelled by the gateway", () => {
    expect(premise(reproduced())).toEqual({
      id: "P-137379-lists-delayed",
      met: true,
      observed: { delayed: { north: [{ ms: 1200, outcome: "answered", heldMs: 1200 }], south: [{ ms: 1600, outcome: "cancelled", heldMs: 1600 }] }, northListCancelled: [] },
    });
  });

  it("not met aimed off: south recorded no delayed listing (its initialize was slowed)", () => {
    expect(premise({ first: { ...quiet().first!, aimedOff: "P-137379-lists-delayed", south: [] } })).toEqual({
      id: "P-137379-lists-delayed",
      met: false,
      observed: { aimedOff: "P-137379-lists-delayed", delayed: { north: [{ ms: 1200, outcome: "answered", heldMs: 1200 }], south: [] }, northListCancelled: [] },
    });
  });

  it("not met when the gateway cut north's 1.2 s listing too (the machine could not tell 1.2 s from 1.5 s)", () => {
    const p = premise(quiet({ north: listing("north", 1200, "cancelled", TIMED_OUT) }));
    expect(p?.met).toBe(false);
    expect(p?.observed).toEqual({ delayed: { north: [{ ms: 1200, outcome: "cancelled", heldMs: 1200 }], south: [{ ms: 1600, outcome: "answered", heldMs: 1600 }] }, northListCancelled: [TIMED_OUT] });
  });
});

describe("R-137379-both-offered", () => {
  it("holds: the run ended ok and its first model request offered both servers' tools", () => {
    expect(check("R-137379-both-offered", quiet())).toEqual({
      id: "R-137379-both-offered",
      expectation: "both MCP servers' tools are offered to the model when their tools/list answers take 1.2 s and 1.6 s (not cut at 1500 ms)",
      holds: true,
      observed: { northList_s: 1.2, southList_s: 1.6, mcpToolsOffered: ["north__example_echo", "south__example_echo"], southListCancelled: null, run: "ok" },
    });
  });

  it("does not hold: south's listing cut at 1500 ms and only north's tool offered; the registered signature reads known-finding", () => {
    const c = check("R-137379-both-offered", reproduced());
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ northList_s: 1.2, southList_s: 1.6, mcpToolsOffered: ["north__example_echo"], southListCancelled: TIMED_OUT, run: "ok" });
    const j = judgeHistory(hist(reproduced()), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-137379-both-offered"]);
  });

  it("does not hold with no model request for the turn (nothing offered) or a run that did not end ok", () => {
    expect(check("R-137379-both-offered", quiet({ toolNames: null, run: "timeout" }))).toMatchObject({
      holds: false,
      observed: { northList_s: 1.2, southList_s: 1.6, mcpToolsOffered: null, southListCancelled: null, run: "timeout" },
    });
  });

  it("not observed once the body returned: the lab could not tell, never a pass", () => {
    expect(checks({}).notes.map((n) => n.text)).toContain("check R-137379-both-offered had nothing to judge: the body returned without observing what it reads");
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});

describe("R-137379-per-server-timeout (optional: only past the aimed-off return)", () => {
  const perServer = (more: Partial<NonNullable<Observed["perServer"]>> = {}): Observed => ({
    ...reproduced(),
    perServer: { reload: { verdict: "applied", detail: "mcp.servers.south.requestTimeoutMs" }, south: listing("south", 1600, "answered"), run: "ok", toolNames: BOTH, ...more },
  });

  it("holds: the edit hot-reloaded, south's 1.6 s listing was taken and its tools offered", () => {
    expect(check("R-137379-per-server-timeout", perServer())).toMatchObject({
      holds: true,
      expectation:
        "with requestTimeoutMs 5000 in south's config (hot-reloaded), a new session's turn is offered south's tools although its tools/list takes 1.6 s: the per-server timeout, not 1500 ms, bounds the listing",
      // normalise reads requestTimeoutMs as a measured clock value (a key ending in Ms), as it did in the body.
      observed: { requestTimeoutMs: "<n>", southList_s: 1.6, reload: "applied", mcpToolsOffered: ["north__example_echo", "south__example_echo"], southListCancelled: null, run: "ok" },
    });
    // The registered run of 20261204-031824: the first turn's finding, the per-server path passing.
    const j = judgeHistory(hist(perServer()), scenario, []);
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      ["R-137379-both-offered", "known-finding"],
      ["R-137379-per-server-timeout", "pass"],
    ]);
    expect(j.verdict).toBe("known-finding");
  });

  it("does not hold: south's listing cut again though the edit applied", () => {
    expect(check("R-137379-per-server-timeout", perServer({ south: listing("south", 1600, "cancelled", TIMED_OUT), toolNames: ["north__example_echo"] }))).toMatchObject({
      holds: false,
      observed: { requestTimeoutMs: "<n>", southList_s: 1.6, reload: "applied", mcpToolsOffered: ["north__example_echo"], southListCancelled: TIMED_OUT, run: "ok" },
    });
  });

  it("does not hold: the gateway refused the reload (no second turn sent), naming its answer", () => {
    expect(check("R-137379-per-server-timeout", perServer({ reload: { verdict: "refused", detail: "mcp needs a restart" }, south: [], run: null, toolNames: null }))).toMatchObject({
      holds: false,
      observed: { requestTimeoutMs: "<n>", southList_s: 1.6, reload: "refused: mcp needs a restart", mcpToolsOffered: null, southListCancelled: null, run: null },
    });
  });

  it("not observed (aimed off, the body returned before the second phase): not judged, and no unknown of its own", () => {
    const d = checks(quiet());
    expect(d.checks.map((c) => c.id)).toEqual(["R-137379-both-offered"]);
    expect(d.notes).toEqual([]);
  });
});
