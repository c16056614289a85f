import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-cancel-discovery.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";

const ID = "R-mcp-cancel-discovery";
type AfterAbort = NonNullable<Observed["afterAbort"]>;
const afterAbort = (more: Partial<AfterAbort> = {}): AfterAbort => ({
  chat: "aborted",
  modelCalls: 0,
  toolCalls: { north: 0, south: 0 },
  slowListCancelReason: "AbortError: This operation was aborted",
  cancelAfterAbortMs: 40,
  slowSessionClosed: true,
  listedSessionClosed: true,
  ...more,
});
/** What 2026.9.6 showed: the pending list cut only by the gateway's 1.5 s listing timeout. */
const timedOut = afterAbort({ slowListCancelReason: "Error: MCP tool listing timed out after 1500ms", cancelAfterAbortMs: 1_382, listedSessionClosed: false });
const judged = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === ID);
const history = (o: Observed) => ({ ...emptyHistory("mcp-cancel-discovery", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-cancel-discovery's check over what its body observed", () => {
  it("south's pending list cancelled by the abort within 1 s, the turn aborted, no tool or model call: holds", () => {
    expect(judged({ afterAbort: afterAbort() })).toEqual({
      id: ID,
      expectation: "cancelling while the second server is still being discovered stops both servers' work promptly: its pending tools/list is cancelled by the abort, no tool or model call follows",
      holds: true,
      kind: "differs-from-reference",
      observed: {
        within_s: 3,
        cancelWithin_s: 1,
        chat: "aborted",
        modelCalled: false,
        toolCalls: { north: 0, south: 0 },
        slowListCancelReason: "AbortError: This operation was aborted",
        slowSessionClosed: true,
        listedSessionClosed: true,
      },
    });
  });

  it("the list cut by a time-out, or by the abort but later than 1 s, or a model call: short", () => {
    expect(judged({ afterAbort: timedOut })?.holds).toBe(false);
    expect(judged({ afterAbort: timedOut })?.observed).toEqual({
      within_s: 3,
      cancelWithin_s: 1,
      chat: "aborted",
      modelCalled: false,
      toolCalls: { north: 0, south: 0 },
      slowListCancelReason: "Error: MCP tool listing timed out after 1500ms",
      slowSessionClosed: true,
      listedSessionClosed: false,
    });
    expect(judged({ afterAbort: afterAbort({ cancelAfterAbortMs: 1_000 }) })?.holds).toBe(false);
    expect(judged({ afterAbort: afterAbort({ slowListCancelReason: null, cancelAfterAbortMs: null }) })).toMatchObject({ holds: false, observed: { slowListCancelReason: null } });
    expect(judged({ afterAbort: afterAbort({ modelCalls: 1 }) })).toMatchObject({ holds: false, observed: { modelCalled: true } });
  });

  it("the registered signature (the 1.5 s listing timeout) reads known-finding", () => {
    const j = judgeHistory(history({ afterAbort: timedOut }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-cancel-discovery"]);
  });

  it("nothing observed after a body that returned: unknown", () => {
    expect(judgeHistory(history({}), scenario, []).verdict).toBe("unknown");
  });
});
