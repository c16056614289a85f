import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-routing.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import { historyOf } from "../lab/testing/histories.ts";

const ID = "R-mcp-same-name-routing";
const token = "rabc123";
const echo = (text: string) => ({ tool: "example_echo", args: { text } });
const results = {
  north__example_echo: { text: `north echoed: to-north-${token}`, isError: false },
  south__example_echo: { text: `south echoed: to-south-${token}`, isError: false },
};
const judged = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === ID);
const history = (o: Observed) => historyOf(scenario, o);

describe("mcp-routing's check over what its body observed", () => {
  it("each call at its own server only, each result from its server: holds, the signature without the run's token", () => {
    const o: Observed = { end: { status: "ok" }, routed: { token, seen: { north: [echo(`to-north-${token}`)], south: [echo(`to-south-${token}`)] }, results } };
    expect(judged(o)).toEqual({
      id: ID,
      expectation: "a call to north's and to south's example_echo each reach only their own server; the results say which",
      holds: true,
      observed: {
        north: ['example_echo {"text":"to-north-<token>"}'],
        south: ['example_echo {"text":"to-south-<token>"}'],
        results: { north__example_echo: "north echoed: to-north-<token>", south__example_echo: "south echoed: to-south-<token>" },
      },
    });
    expect(judgeHistory(history(o), scenario, []).verdict).toBe("pass");
  });

  it("both calls routed to north, south's result answered by north: short, with what each server saw", () => {
    const o: Observed = {
      routed: {
        token,
        seen: { north: [echo(`to-north-${token}`), echo(`to-south-${token}`)], south: [] },
        results: { ...results, south__example_echo: { text: `north echoed: to-south-${token}`, isError: false } },
      },
    };
    expect(judged(o)).toEqual({
      id: ID,
      expectation: "a call to north's and to south's example_echo each reach only their own server; the results say which",
      holds: false,
      observed: {
        north: ['example_echo {"text":"to-north-<token>"}', 'example_echo {"text":"to-south-<token>"}'],
        south: [],
        results: { north__example_echo: "north echoed: to-north-<token>", south__example_echo: "north echoed: to-south-<token>" },
      },
    });
  });

  it("R-mcp-same-name-routing-turn: the turn finished holds; one that did not is short, and a body that stopped there fails on it without judging the routing", () => {
    const turnCheck = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true).checks.find((c) => c.id === "R-mcp-same-name-routing-turn");
    expect(turnCheck({ end: { status: "ok" } })).toEqual({ id: "R-mcp-same-name-routing-turn", expectation: "the turn that calls north's and south's example_echo finishes (agent.wait status ok)", holds: true, observed: { status: "ok" } });
    expect(turnCheck({ end: { status: "timeout" } })).toMatchObject({ holds: false, observed: { status: "timeout" } });
    const j = judgeHistory({ ...history({ end: { status: "timeout" } }), stopped: "R-mcp-same-name-routing-turn" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-mcp-same-name-routing-turn: expectation not met and no finding is registered as R-mcp-same-name-routing-turn"]);
    expect(j.checks.map((c) => c.findingId)).toEqual(["R-mcp-same-name-routing-turn"]);
  });

  it("nothing observed after a body that returned: unknown", () => {
    expect(judgeHistory(history({}), scenario, []).verdict).toBe("unknown");
  });
});
