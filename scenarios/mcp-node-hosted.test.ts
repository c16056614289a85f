import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-node-hosted.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";

type Through = NonNullable<Observed["through"]>;
type Lost = NonNullable<Observed["lost"]>;
type Returned = NonNullable<Observed["returned"]>;
const TOOL = "east_example_echo";
const through = (more: Partial<Through> = {}): Through => ({
  run: "ok",
  result: "east echoed: via-node",
  resultIsError: false,
  eastToolCalls: [{ tool: "example_echo", args: { text: "via-node" } }],
  tapInvokeRequests: [{ dir: "gw->node", command: "mcp.tools.call.v1", params: { server: "east", tool: "example_echo", arguments: { text: "via-node" } } }],
  tapInvokeResults: [{ dir: "node->gw", ok: true }],
  ...more,
});
const lost = (more: Partial<Lost> = {}): Lost => ({ run: "ok", toolItems: ["failed"], toolResultIsError: true, error: "node node-1 disconnected", failedSpentMs: 800, endedMs: 1_500, ...more });
const returned = (more: Partial<Returned> = {}): Returned => ({
  toolName: TOOL,
  offered: [TOOL],
  run: "ok",
  result: "east echoed: back",
  resultIsError: false,
  eastToolCalls: [{ tool: "example_echo", args: { text: "back" } }],
  tapInvokeRequests: 1,
  ...more,
});
const all = (more: Observed = {}): Observed => ({ through: through(), peers: { members: ["node-1"], gateway: "gateway" }, lost: lost(), gone: { tools: [] }, returned: returned(), ...more });
const derived = (o: Observed) => deriveChecks(scenario.checks!, { ...o }, true);
const judged = (o: Observed) => Object.fromEntries(derived(o).checks.map((c) => [c.id, c]));
const history = (o: Observed) => ({ ...emptyHistory("mcp-node-hosted", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-node-hosted's checks over what its body observed", () => {
  it("through the node, the node the only peer, the call failed fast, the tools withdrawn and back: every check holds, in the body's order", () => {
    expect(derived(all()).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-mcp-node-hosted-through-node", true],
      ["R-mcp-node-hosted-peer-is-node", true],
      ["R-mcp-node-hosted-loss-fails-call", true],
      ["R-mcp-node-hosted-loss-withdraws", true],
      ["R-mcp-node-hosted-return", true],
    ]);
    expect(judgeHistory(history(all()), scenario, []).verdict).toBe("pass");
  });

  it("through-node: the observation is the signature; a call not carried by the node's link is short", () => {
    expect(judged(all())["R-mcp-node-hosted-through-node"]!.observed).toEqual(through());
    const direct = through({ tapInvokeRequests: [], tapInvokeResults: [] });
    expect(judged({ through: direct })["R-mcp-node-hosted-through-node"]!.holds).toBe(false);
    expect(judged({ through: direct })["R-mcp-node-hosted-through-node"]!.observed).toEqual(direct);
    expect(judged({ through: through({ result: "north echoed: via-node" }) })["R-mcp-node-hosted-through-node"]!.holds).toBe(false);
  });

  it("peer-is-node: the gateway among east's peers is short; not observed (ss failed) it is not judged and adds no unknown", () => {
    expect(judged({ peers: { members: ["gateway", "node-1"], gateway: "gateway" } })["R-mcp-node-hosted-peer-is-node"]).toEqual({
      id: "R-mcp-node-hosted-peer-is-node",
      expectation: "while a call is open at a node-hosted server, its MCP client is the node host, not the gateway",
      holds: false,
      observed: { members: ["gateway", "node-1"] },
    });
    const { peers: _none, ...withoutPeers } = all();
    void _none;
    const d = derived(withoutPeers);
    expect(d.checks.map((c) => c.id)).not.toContain("R-mcp-node-hosted-peer-is-node");
    expect(d.notes).toEqual([]);
  });

  it("loss-fails-call: failed within 2 s at the reference pace and the turn ended within 10 s: holds, with both as booleans", () => {
    expect(judged({ lost: lost() })["R-mcp-node-hosted-loss-fails-call"]).toEqual({
      id: "R-mcp-node-hosted-loss-fails-call",
      expectation: "a call open at a node-hosted server when its node is killed fails within 2 s (at the reference machine's pace) with an error result, and the turn ends",
      holds: true,
      observed: { run: "ok", toolItems: ["failed"], toolResultIsError: true, error: "node node-1 disconnected", failedWithin2s: true, turnEndedWithin10s: true },
    });
  });

  it("loss-fails-call: 2 s spent (the bound), no tool end seen, or a run still going after 10 s: short", () => {
    expect(judged({ lost: lost({ failedSpentMs: 2_000 }) })["R-mcp-node-hosted-loss-fails-call"]!.holds).toBe(false);
    expect(judged({ lost: lost({ failedSpentMs: 2_000 }) })["R-mcp-node-hosted-loss-fails-call"]!.observed).toEqual({ run: "ok", toolItems: ["failed"], toolResultIsError: true, error: "node node-1 disconnected", failedWithin2s: false, turnEndedWithin10s: true });
    expect(judged({ lost: lost({ failedSpentMs: null, toolItems: [], toolResultIsError: null, error: null }) })["R-mcp-node-hosted-loss-fails-call"]).toMatchObject({ holds: false, observed: { failedWithin2s: false, toolItems: [] } });
    expect(judged({ lost: lost({ run: "timeout", endedMs: 30_000 }) })["R-mcp-node-hosted-loss-fails-call"]).toMatchObject({ holds: false, observed: { run: "timeout", turnEndedWithin10s: false } });
    expect(judged({ lost: lost({ endedMs: 10_001 }) })["R-mcp-node-hosted-loss-fails-call"]!.holds).toBe(false);
  });

  it("loss-withdraws: still offered east's tool after the loss is short", () => {
    expect(judged({ gone: { tools: [] } })["R-mcp-node-hosted-loss-withdraws"]).toMatchObject({ holds: true, observed: { offered: [] } });
    expect(judged({ gone: { tools: [TOOL] } })["R-mcp-node-hosted-loss-withdraws"]).toEqual({
      id: "R-mcp-node-hosted-loss-withdraws",
      expectation: "once the node is lost, the next turn is not offered its MCP tools",
      holds: false,
      observed: { offered: [TOOL] },
    });
  });

  it("return: the observed leaves the tool's name out; the tool not offered again, or a call not through the node, is short", () => {
    const { toolName: _name, ...view } = returned();
    void _name;
    expect(judged({ returned: returned() })["R-mcp-node-hosted-return"]!.holds).toBe(true);
    expect(judged({ returned: returned() })["R-mcp-node-hosted-return"]!.observed).toEqual(view);
    expect(judged({ returned: returned({ offered: [] }) })["R-mcp-node-hosted-return"]!.holds).toBe(false);
    expect(judged({ returned: returned({ offered: [] }) })["R-mcp-node-hosted-return"]!.observed).toEqual({ offered: [], run: "ok", result: "east echoed: back", resultIsError: false, eastToolCalls: [{ tool: "example_echo", args: { text: "back" } }], tapInvokeRequests: 1 });
    expect(judged({ returned: returned({ tapInvokeRequests: 0 }) })["R-mcp-node-hosted-return"]!.holds).toBe(false);
  });

  it("a body that returned before the node came back: the return check reads unknown", () => {
    const { returned: _r, ...early } = all();
    void _r;
    expect(judgeHistory(history(early), scenario, []).verdict).toBe("unknown");
  });
});
