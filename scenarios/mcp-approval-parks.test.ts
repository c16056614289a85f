import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-approval-parks.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import { historyOf } from "../lab/testing/histories.ts";

const ID = "R-mcp-approval-parks";
const during = { within_ms: 2_000, run: "timeout", approval: "pending", serverCalls: 0, effects: 0 };
const after = (more: Partial<NonNullable<Observed["after"]>> = {}): NonNullable<Observed["after"]> => ({
  run: "ok",
  firstResolve: "applied",
  secondResolve: "INVALID_REQUEST",
  secondResolveWatched_ms: 0,
  beforeAllow: 5,
  calls: [{ seq: 9, tool: "write_file", args: { path: "parks.txt", content: "parked" } }],
  effects: [{ path: "parks.txt", bytes: 6 }],
  result: [{ tool: "south__write_file", text: "south wrote 6 bytes to parks.txt", isError: false }],
  approval: "allowed",
  ...more,
});
const judged = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === ID);
const history = (o: Observed) => historyOf(scenario, o);

describe("mcp-approval-parks's check over what its body observed", () => {
  it("parked with nothing at south, one allow-once, then one call and one write: holds", () => {
    expect(judged({ during, after: after() })).toEqual({
      id: ID,
      expectation: "a call needing approval waits with the turn waiting; nothing executes before the operator approves once; then it runs (once)",
      holds: true,
      observed: { whileParked: during, afterApproval: { run: "ok", callsBeforeAllow: 0, serverCalls: 1, effects: 1, secondResolve: "INVALID_REQUEST", secondResolveWatched_ms: 0 } },
    });
    expect(judgeHistory(history({ during, after: after() }), scenario, []).verdict).toBe("pass");
  });

  it("a call at or before south's position read before the allow-once did not wait: short", () => {
    expect(judged({ during, after: after({ calls: [{ seq: 5, tool: "write_file", args: {} }] }) })).toMatchObject({
      holds: false,
      observed: { afterApproval: { callsBeforeAllow: 1, serverCalls: 1 } },
    });
  });

  it("a second allow-once that ran the call again, or a turn still running while parked had ended: short", () => {
    const twice = after({ secondResolve: "applied", secondResolveWatched_ms: 1_000, calls: [{ seq: 9, tool: "write_file", args: {} }, { seq: 12, tool: "write_file", args: {} }] });
    expect(judged({ during, after: twice })).toEqual({
      id: ID,
      expectation: expect.any(String) as string,
      holds: false,
      observed: { whileParked: during, afterApproval: { run: "ok", callsBeforeAllow: 0, serverCalls: 2, effects: 1, secondResolve: "applied", secondResolveWatched_ms: 1_000 } },
    });
    expect(judged({ during: { ...during, run: "ok" }, after: after() })?.holds).toBe(false);
  });

  it("R-mcp-approval-parks-allow-once: the allow-once accepted holds; a refused one is short and fails the run", () => {
    const allowOnce = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === "R-mcp-approval-parks-allow-once");
    expect(allowOnce({ during, after: after() })).toEqual({ id: "R-mcp-approval-parks-allow-once", expectation: "the operator's allow-once of the parked call is accepted (plugin.approval.resolve)", holds: true, observed: { firstResolve: "applied" } });
    const refused = after({ firstResolve: "INVALID_REQUEST", run: "timeout", calls: [], effects: [], result: [], approval: "pending" });
    expect(allowOnce({ during, after: refused })).toMatchObject({ holds: false, observed: { firstResolve: "INVALID_REQUEST" } });
    const j = judgeHistory(history({ during, after: refused }), scenario, []);
    expect(j.verdict).toBe("fail");
    expect(j.checks.filter((c) => c.outcome === "fail").map((c) => c.findingId)).toEqual(["R-mcp-approval-parks-allow-once", "R-mcp-approval-parks"]);
  });

  it("nothing observed after a body that returned: unknown, never a pass", () => {
    expect(judgeHistory(history({ during }), scenario, []).verdict).toBe("unknown");
  });
});
