import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-partial-start.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";

const ID = "R-mcp-partial-start";
type PartialStart = NonNullable<Observed["partialStart"]>;
const partial = (north: Partial<PartialStart["north"]>, more: Partial<PartialStart> = {}): PartialStart => ({
  offered: ["north__example_echo"],
  north: { session: "s1", toolCalls: 0, stopped: true, ...north },
  run: "error",
  ...more,
});
const judged = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === ID);
const history = (o: Observed) => ({ ...emptyHistory("mcp-partial-start", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-partial-start's check over what its body observed", () => {
  it("no tool call at north and its session stopped: holds (fails closed)", () => {
    expect(judged({ partialStart: partial({}, { offered: [] }) })).toEqual({
      id: ID,
      expectation: "if one of two servers cannot start, no tool runs and the server that did start is stopped (within 10 s of the run's end)",
      holds: true,
      kind: "differs-from-reference",
      observed: { within_s: 10, mcpToolsOffered: [], northToolCalls: 0, northSessionStopped: true, run: "error" },
    });
  });

  it("a tool ran at north, or north's session left open: short", () => {
    expect(judged({ partialStart: partial({ toolCalls: 1 }) })).toMatchObject({ holds: false });
    expect(judged({ partialStart: partial({ toolCalls: 1 }) })?.observed).toEqual({ within_s: 10, mcpToolsOffered: ["north__example_echo"], northToolCalls: 1, northSessionStopped: true, run: "error" });
    expect(judged({ partialStart: partial({ stopped: false }, { offered: null }) })).toMatchObject({ holds: false, observed: { mcpToolsOffered: null, northToolCalls: 0, northSessionStopped: false } });
  });

  it("the registered signature (south left out, the turn goes on with north's tools) reads known-finding", () => {
    const j = judgeHistory(history({ partialStart: partial({ toolCalls: 1, stopped: false }, { run: "ok" }) }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-partial-start"]);
  });

  it("nothing observed after a body that returned: unknown", () => {
    expect(judgeHistory(history({}), scenario, []).verdict).toBe("unknown");
  });
});
