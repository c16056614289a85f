// repro-137088's checks and premise on hand-made histories (no Docker): each holds (is met) on one
// and not on another, with the exact signature.
import { describe, expect, it } from "vitest";
import { derivePremises, judgeHistory, type Observations } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-137088.ts";
import { checkOf as checkOfScenario, historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);
const premiseOf = (obs: Observations) => derivePremises(scenario.premises, obs).premises.find((p) => p.id === "P-137088-runner-offline");

const NODE_ID = "54b5a44f843a5853112165492720a49ad7db3e2a82bd1dec30d57f87c0b4a5ae";
const placement = (environmentId: string, more: Record<string, unknown> = {}) => ({
  state: "active",
  generation: 2,
  environmentId,
  activeOwnerEpoch: 1,
  runner: { kind: "device", status: "offline", deviceId: NODE_ID },
  ...more,
});
const envB = { id: "env-b", type: "worker", status: "ready", worker: { providerId: "device", state: "attached", attachedSessionIds: ["agent:main:b"], tunnelStatus: "stopped" } };
/** 2026.9.6 as run 20261204-031824 saw it: both hold, the premise met. */
const good = {
  nodeId: NODE_ID,
  beforeMove: { a: placement("env-a"), b: placement("env-b") },
  move: { answer: { ok: true, placement: { state: "local", generation: 3 } }, placementAfter: { state: "local", generation: 3 } },
  destroy: { answer: { ok: true, environmentId: "env-b" }, environmentAfter: envB, placementAfter: placement("env-b", { state: "failed", recoveryError: "Worker result abandoned by forced operator teardown" }) },
} satisfies Observed;
const refused = { ok: false as const, code: "UNAVAILABLE", message: `device worker node is not connected with the supervisor dialect: ${NODE_ID}` };

describe("repro-137088: Continue on Gateway abandons the placement on the gone device", () => {
  const id = "R-137088-abandon-offline-device";
  it("holds: sessions.move answered ok with the placement local, and it reads local afterwards", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 10, move: { placement: "local" }, placementAfter: { state: "local" } });
  });

  it("does not hold: refused as not connected, the placement left failed with the fence recorded (before the fix)", () => {
    const failed = placement("env-a", { state: "failed", recoveryError: `forced teardown fence recorded for ${NODE_ID}` });
    const c = checkOf(id, { ...good, move: { answer: refused, placementAfter: failed } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({
      within_s: 10,
      move: { code: "UNAVAILABLE", message: "device worker node is not connected with the supervisor dialect: <nodeId>" },
      placementAfter: { state: "failed", recoveryError: "forced teardown fence recorded for <nodeId>" },
    });
  });

  it("does not hold: answered ok, but the placement never read local within the bound", () => {
    const c = checkOf(id, { ...good, move: { answer: good.move.answer, placementAfter: placement("env-a") } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 10, move: { placement: "local" }, placementAfter: { state: "active" } });
  });
});

describe("repro-137088: environments.destroy {force} on the gone device", () => {
  const id = "R-137088-destroy-force";
  it("holds: answered ok (what it shows afterwards is observed, not asserted)", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 10, destroy: "ok", environmentAfter: { status: "ready", worker: { state: "attached", tunnelStatus: "stopped", attached: 1 } }, placementAfter: "failed" });
  });

  it("does not hold: refused, the environment no longer listed", () => {
    const c = checkOf(id, { ...good, destroy: { answer: refused, environmentAfter: null, placementAfter: placement("env-b") } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 10, destroy: { code: "UNAVAILABLE", message: "device worker node is not connected with the supervisor dialect: <nodeId>" }, environmentAfter: "not listed", placementAfter: "active" });
  });
});

describe("repro-137088: premise and verdicts", () => {
  it("P-137088-runner-offline: met when both placements are active on the node with runner offline; unmet when the runner stayed available (aimed off)", () => {
    expect(premiseOf(good)).toEqual({
      id: "P-137088-runner-offline",
      met: true,
      observed: [
        { state: "active", runner: "offline", onNode: true },
        { state: "active", runner: "offline", onNode: true },
      ],
    });
    const available = { kind: "device", status: "available", deviceId: NODE_ID };
    expect(premiseOf({ ...good, beforeMove: { a: placement("env-a", { runner: available }), b: null } })).toEqual({
      id: "P-137088-runner-offline",
      met: false,
      observed: [
        { state: "active", runner: "available", onNode: true },
        { state: null, runner: null, onNode: false },
      ],
    });
  });

  it("all hold reads pass; the premise unmet reads unknown", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("pass");
    expect(judgeHistory(hist({ ...good, beforeMove: { a: placement("env-a"), b: placement("env-b", { runner: { kind: "device", status: "available", deviceId: NODE_ID } }) } }), scenario, []).verdict).toBe("unknown");
  });
});
