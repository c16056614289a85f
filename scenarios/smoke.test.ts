// smoke's declared checks, judged on hand-made histories (no Docker): node.list after bring-up,
// the gateway-local turn's reply and the scripted model's requests, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import { checkOf, historyOf } from "../lab/testing/histories.ts";
import scenario, { type Observed } from "./smoke.ts";

const READY = { approvalState: "approved", paired: true, connected: true, sessionHost: true };
const MESSAGE = "smoke turn 278617836";
const good = (): Observed => ({
  nodes: { aliases: ["node-1", "node-2"], listed: [{ name: "node-1", ...READY }, { name: "node-2", ...READY }] },
  turn: { message: MESSAGE, reply: `fleetlab-ok: ${MESSAGE}` },
  model: { requests: 3, turn: ["completed"] },
});
const judged = (o: Observed, id: string) => {
  const c = checkOf(scenario, id, o)!;
  return { holds: c.holds, observed: c.observed };
};

describe("smoke", () => {
  it("a run where every node is ready, the scripted model answered and its request completed: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["R-smoke-nodes", true],
      ["R-smoke-reply", true],
      ["R-smoke-model", true],
    ]);
    expect(judgeHistory(historyOf(scenario, good()), scenario, []).verdict).toBe("pass");
  });

  it("R-smoke-nodes: every node listed, paired, approved, connected, a session host; observed names only the nodes short of it", () => {
    expect(judged(good(), "R-smoke-nodes")).toEqual({ holds: true, observed: [] });
    const missing = { ...good(), nodes: { aliases: ["node-1", "node-2"], listed: [{ name: "node-1", ...READY }, { name: null, ...READY }] } };
    expect(judged(missing, "R-smoke-nodes")).toEqual({ holds: false, observed: [{ alias: "node-2", listed: false }] });
    const notHost = { ...good(), nodes: { aliases: ["node-1", "node-2"], listed: [{ name: "node-1", ...READY, connected: false }, { name: "node-2", ...READY, sessionHost: null, approvalState: "pending" }] } };
    expect(judged(notHost, "R-smoke-nodes")).toEqual({
      holds: false,
      observed: [
        { alias: "node-1", listed: true, paired: true, approvalState: "approved", connected: false, sessionHost: true },
        { alias: "node-2", listed: true, paired: true, approvalState: "pending", connected: true, sessionHost: null },
      ],
    });
    const unpaired = { ...good(), nodes: { aliases: ["node-1"], listed: [{ name: "node-1", ...READY, paired: false }] } };
    expect(judged(unpaired, "R-smoke-nodes")).toEqual({ holds: false, observed: [{ alias: "node-1", listed: true, paired: false, approvalState: "approved", connected: true, sessionHost: true }] });
    expect(judgeHistory(historyOf(scenario, missing), scenario, []).verdict).toBe("fail");
  });

  it("R-smoke-reply: the default script's fleetlab-ok answer; any other reply does not hold, with the message masked", () => {
    expect(judged(good(), "R-smoke-reply")).toEqual({ holds: true, observed: { reply: "fleetlab-ok: <message>" } });
    const other = { ...good(), turn: { message: MESSAGE, reply: `I cannot help with ${MESSAGE}` } };
    expect(judged(other, "R-smoke-reply")).toEqual({ holds: false, observed: { reply: "I cannot help with <message>" } });
    expect(judgeHistory(historyOf(scenario, other), scenario, []).verdict).toBe("fail");
  });

  it("R-smoke-model: the turn's request reached the model and its last one completed; none, or a failed one, does not hold", () => {
    expect(judged(good(), "R-smoke-model")).toEqual({ holds: true, observed: { received: 1, lastStatus: "completed" } });
    const never = { ...good(), model: { requests: 2, turn: [] } };
    expect(judged(never, "R-smoke-model")).toEqual({ holds: false, observed: { received: 0, lastStatus: null } });
    const failed = { ...good(), model: { requests: 4, turn: ["completed" as const, "failed" as const] } };
    expect(judged(failed, "R-smoke-model")).toEqual({ holds: false, observed: { received: 2, lastStatus: "failed" } });
    expect(judgeHistory(historyOf(scenario, never), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { model: _model, ...rest } = good();
    expect(judgeHistory(historyOf(scenario, rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-smoke-model had nothing to judge: the body returned without observing what it reads" });
  });
});
