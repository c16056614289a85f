// scripted-node's declared checks, judged on hand-made histories (no Docker): its pairing, the
// operator's invoke it answers, the invoke it withholds, and its close, as the body observes them.
import { describe, expect, it } from "vitest";
import { deriveChecks, emptyHistory, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import scenario, { type Observed } from "./scripted-node.ts";

const hist = (observations: Observed): ScenarioHistory => ({ ...emptyHistory("scripted-node", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations });
const judged = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks!, o, true).checks.find((x) => x.id === id)!;
  return { holds: c.holds, observed: c.observed };
};

const STEPS = ["connect refused", "device approved", "connected", "node pairing approved", "listed approved"];
const PARAMS = { bins: ["git"] };
const ANSWER = { path: "/usr/bin/git", fleetlab: "scripted" };
const good = (): Observed => ({
  pairing: {
    steps: [
      { step: "connect refused", detail: { detailsCode: "PAIRING_REQUIRED", reason: "not-paired" } },
      { step: "device approved", detail: { requestId: "5d0c8e2a-8b0e-4f37-9d4c-2f0b7f1d9e11" } },
      { step: "connected" },
      { step: "node pairing approved" },
      { step: "listed approved" },
    ],
    entry: { connected: true, approvalState: "approved", paired: true },
  },
  invoke: {
    params: PARAMS,
    answer: ANSWER,
    request: { seq: 40, invokeId: "inv-1" },
    result: { seq: 42, t: 1_796_000_000_100, ok: true, payload: ANSWER, error: null },
    received: { params: PARAMS },
    got: { ok: true, nodeId: "n", command: "system.which", payloadJSON: JSON.stringify(ANSWER) },
  },
  withheld: { nodeGotIt: true, answer: { ok: false, code: "UNAVAILABLE", detailsCode: "NODE_INVOKE_TIMEOUT", message: "node invoke timed out" }, endedMs: 3_020 },
  close: { disconnected: { paired: true }, entry: { connected: false, paired: true } },
});

describe("scripted-node", () => {
  it("a run where it paired, its invokes went as they should and its close showed: pass", () => {
    expect(deriveChecks(scenario.checks!, good(), true).checks.map((c) => [c.id, c.holds])).toEqual([
      ["S-node-pairs", true],
      ["S-invoke-round-trip", true],
      ["S-invoke-withheld-ends", true],
      ["S-close-seen", true],
    ]);
    expect(judgeHistory(hist(good()), scenario, []).verdict).toBe("pass");
  });

  it("S-node-pairs: the steps in order and node.list connected and approved (ids normalised)", () => {
    expect(judged(good(), "S-node-pairs")).toEqual({ holds: true, observed: { steps: STEPS, refusal: { detailsCode: "PAIRING_REQUIRED", reason: "not-paired" }, entry: { connected: true, approvalState: "approved", paired: true } } });
    // Already paired: no refusal first.
    const already = { ...good(), pairing: { steps: [{ step: "connected", detail: { already: "paired" } }, { step: "node pairing approved" }, { step: "listed approved" }], entry: { connected: true, approvalState: "approved", paired: true } } };
    expect(judged(already, "S-node-pairs")).toEqual({ holds: false, observed: { steps: ["connected", "node pairing approved", "listed approved"], refusal: { already: "paired" }, entry: { connected: true, approvalState: "approved", paired: true } } });
    const pending = { ...good(), pairing: { ...good().pairing!, entry: { connected: true, approvalState: "pending", paired: true } } };
    expect(judged(pending, "S-node-pairs")).toEqual({ holds: false, observed: { steps: STEPS, refusal: { detailsCode: "PAIRING_REQUIRED", reason: "not-paired" }, entry: { connected: true, approvalState: "pending", paired: true } } });
    expect(judgeHistory(hist(pending), scenario, []).verdict).toBe("fail");
  });

  it("S-invoke-round-trip: on the node's tap, its params at the node, its answer unchanged at the operator (payload or payloadJSON)", () => {
    const ok = { onTap: { request: true, result: true }, nodeGotParams: PARAMS, operatorGot: ANSWER };
    expect(judged(good(), "S-invoke-round-trip")).toEqual({ holds: true, observed: ok });
    const asPayload = { ...good(), invoke: { ...good().invoke!, got: { ok: true, payload: ANSWER } } };
    expect(judged(asPayload, "S-invoke-round-trip")).toEqual({ holds: true, observed: ok });
    // The answer changed on the way.
    const changed = { ...good(), invoke: { ...good().invoke!, got: { ok: true, payload: { path: "/usr/bin/git" } } } };
    expect(judged(changed, "S-invoke-round-trip")).toEqual({ holds: false, observed: { ...ok, operatorGot: { path: "/usr/bin/git" } } });
    // Refused before the node: nothing on its tap, nothing received.
    const refused = { ...good(), invoke: { ...good().invoke!, request: null, result: null, received: null, got: { ok: false as const, code: "UNAVAILABLE", message: "node not connected" } } };
    expect(judged(refused, "S-invoke-round-trip")).toEqual({ holds: false, observed: { onTap: { request: false, result: false }, nodeGotParams: null, operatorGot: "UNAVAILABLE: node not connected" } });
    // The node got other params.
    const params = { ...good(), invoke: { ...good().invoke!, received: { params: { bins: [] } } } };
    expect(judged(params, "S-invoke-round-trip")).toEqual({ holds: false, observed: { ...ok, nodeGotParams: { bins: [] } } });
    expect(judgeHistory(hist(refused), scenario, []).verdict).toBe("fail");
  });

  it("S-invoke-withheld-ends: an error other than the lab's TIMEOUT, in time, after the node got it", () => {
    expect(judged(good(), "S-invoke-withheld-ends")).toEqual({ holds: true, observed: { nodeGotIt: true, answer: { code: "UNAVAILABLE", detailsCode: "NODE_INVOKE_TIMEOUT" }, within: true } });
    const hung = { ...good(), withheld: { nodeGotIt: true, answer: { ok: false as const, code: "TIMEOUT", message: "request timed out" }, endedMs: 13_000 } };
    expect(judged(hung, "S-invoke-withheld-ends")).toEqual({ holds: false, observed: { nodeGotIt: true, answer: { code: "TIMEOUT", detailsCode: null }, within: false } });
    const result = { ...good(), withheld: { nodeGotIt: false, answer: { ok: true, payload: null }, endedMs: 10 } };
    expect(judged(result, "S-invoke-withheld-ends")).toEqual({ holds: false, observed: { nodeGotIt: false, answer: "a result", within: true } });
    expect(judgeHistory(hist(hung), scenario, []).verdict).toBe("fail");
  });

  it("S-close-seen: disconnected within the slack and still paired", () => {
    expect(judged(good(), "S-close-seen")).toEqual({ holds: true, observed: { disconnected: true, paired: true } });
    const late = { ...good(), close: { disconnected: null, entry: { connected: true, paired: true } } };
    expect(judged(late, "S-close-seen")).toEqual({ holds: false, observed: { disconnected: false, paired: true } });
    const unpaired = { ...good(), close: { disconnected: { paired: false }, entry: { connected: false, paired: false } } };
    expect(judged(unpaired, "S-close-seen")).toEqual({ holds: false, observed: { disconnected: true, paired: false } });
    expect(judged({ ...good(), close: { disconnected: null, entry: null } }, "S-close-seen")).toEqual({ holds: false, observed: { disconnected: false, paired: null } });
    expect(judgeHistory(hist(late), scenario, []).verdict).toBe("fail");
  });

  it("what the body never observed once it returned: the lab could not tell", () => {
    const { close: _close, ...rest } = good();
    expect(judgeHistory(hist(rest), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check S-close-seen had nothing to judge: the body returned without observing what it reads" });
  });
});
