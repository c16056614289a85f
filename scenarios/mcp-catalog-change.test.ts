import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-catalog-change.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import type { McpRecord } from "../lab/clients/mcp.ts";
import { historyOf, premiseOf } from "../lab/testing/histories.ts";

type Changed = NonNullable<Observed["redefined"]>;
const rec = (seq: number, rpcMethod: string, tool?: string): McpRecord => ({ seq, time: `2026-12-04T00:00:${String(seq).padStart(2, "0")}.000Z`, server: "south", kind: "rpc", httpMethod: "POST", sessionId: "s1", rpcMethod, ...(tool ? { tool, args: { path: "x.txt", content: "x" } } : {}) });
/** The gateway re-listed (seq 11), then sent the parked call (seq 12). */
const relistedThenCalled = [rec(11, "tools/list"), rec(12, "tools/call", "write_file")];
const changed = (more: Partial<Changed> = {}): Changed => ({ approvalResolved: true, requestsAfterNotification: relistedThenCalled, effects: 1, run: "ok", toolResult: { isError: false, text: "south wrote 1 bytes to redefined.txt" }, ...more });
/** What 2026.9.6 showed for each change. */
const seen: Required<Pick<Observed, "redefined" | "removed">> = {
  redefined: changed(),
  removed: changed({ effects: 0, toolResult: { isError: true, text: '{"status":"error","tool":"south__write_file","error":"Tool write_file not found"}' } }),
};
/** The reference: the parked call never sent, nothing written, the turn failed. */
const stopped = changed({ requestsAfterNotification: [rec(11, "tools/list")], effects: 0, run: "error", toolResult: null });
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, { ...o }, true).checks.map((c) => [c.id, c]));
/** Each change notified the gateway's MCP sessions at south. */
const notified: NonNullable<Observed["notified"]> = [
  { variant: "redefined", sessions: 2 },
  { variant: "removed", sessions: 2 },
];
const history = (o: Observed) => historyOf(scenario, o);

describe("mcp-catalog-change's checks over what its body observed", () => {
  it("one check per change, in the order the body made them, each naming its change", () => {
    expect(Object.values(judged({ redefined: stopped, removed: stopped })).map((c) => [c.id, c.expectation, c.holds, c.kind])).toEqual([
      ["R-mcp-catalog-change-redefined", "if a server's catalog changes after the approval was parked (tool redefined), the parked call does not execute and the turn fails", true, "differs-from-reference"],
      ["R-mcp-catalog-change-removed", "if a server's catalog changes after the approval was parked (tool removed), the parked call does not execute and the turn fails", true, "differs-from-reference"],
    ]);
  });

  it("the parked call never sent, nothing written, the turn failed: holds", () => {
    expect(judged({ removed: stopped })["R-mcp-catalog-change-removed"]!.observed).toEqual({
      approvalResolved: true,
      gatewayRelistedBeforeCall: true,
      serverSawCall: false,
      executed: false,
      run: "error",
      toolResultIsError: null,
      serverAnswer: "none",
    });
  });

  it("redefined: the approved call sent after the re-list and run against the new definition: short", () => {
    expect(judged(seen)["R-mcp-catalog-change-redefined"]!.holds).toBe(false);
    expect(judged(seen)["R-mcp-catalog-change-redefined"]!.observed).toEqual({ approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: true, run: "ok", toolResultIsError: false, serverAnswer: "success" });
  });

  it("removed: the call sent anyway and stopped only by the server's own answer: short; a call before any re-list says so", () => {
    expect(judged(seen)["R-mcp-catalog-change-removed"]!.holds).toBe(false);
    expect(judged(seen)["R-mcp-catalog-change-removed"]!.observed).toEqual({ approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: false, run: "ok", toolResultIsError: true, serverAnswer: "Tool write_file not found" });
    const noRelist = changed({ requestsAfterNotification: [rec(12, "tools/call", "write_file"), rec(13, "tools/list")], toolResult: { isError: true, text: "boom" } });
    expect(judged({ removed: noRelist })["R-mcp-catalog-change-removed"]).toMatchObject({ holds: false, observed: { gatewayRelistedBeforeCall: false, serverAnswer: "other error" } });
  });

  it("a call of another tool is not the parked call", () => {
    const other = changed({ requestsAfterNotification: [rec(11, "tools/list"), rec(12, "tools/call", "read_file")], effects: 0, run: "error", toolResult: null });
    expect(judged({ redefined: other })["R-mcp-catalog-change-redefined"]).toMatchObject({ holds: true, observed: { serverSawCall: false } });
  });

  it("the registered signatures of both changes read known-finding", () => {
    const j = judgeHistory(history({ ...seen, notified }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-catalog-change-redefined, known-finding R-mcp-catalog-change-removed"]);
  });

  it("the reference outcome of both changes, each notified: every check holds, so both registered findings read fixed?", () => {
    expect(judgeHistory(history({ redefined: stopped, removed: stopped, notified }), scenario, []).verdict).toBe("fixed?");
  });

  it("a body that returned without the second change: that check reads unknown", () => {
    expect(judgeHistory(history({ redefined: seen.redefined, notified }), scenario, []).verdict).toBe("unknown");
  });

  it("P-mcp-catalog-change-notified: every change reached at least one MCP session; one that reached none stops the body and the lab could not tell", () => {
    expect(premiseOf(scenario, "P-mcp-catalog-change-notified", { notified })).toEqual({ id: "P-mcp-catalog-change-notified", met: true, observed: notified });
    const none = [{ variant: "redefined" as const, sessions: 2 }, { variant: "removed" as const, sessions: 0 }];
    expect(premiseOf(scenario, "P-mcp-catalog-change-notified", { notified: none })).toEqual({ id: "P-mcp-catalog-change-notified", met: false, observed: none });
    // Stopped at the second change: the first change's check is judged, the second's was not reached.
    const j = judgeHistory({ ...history({ redefined: seen.redefined, notified: none }), stopped: "P-mcp-catalog-change-notified" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-mcp-catalog-change-notified not met");
    expect(j.detail).not.toContain("R-mcp-catalog-change-removed had nothing to judge");
  });
});
