// midturn-kill-at-launch's checks as pure functions of what its body observed: judged on
// hand-made histories, with no Docker.
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../lab/judge/history.ts";
import type { LaunchSeen, TurnSeen } from "../lab/kits/proof.ts";
import { historyOf } from "../lab/testing/histories.ts";
import scenario, { type Observed } from "./midturn-kill-at-launch.ts";

const hist = (observations: Observed, more: Partial<ScenarioHistory> = {}): ScenarioHistory => ({ ...historyOf(scenario, observations), ...more });
const derived = (observations: Observed) => deriveChecks(scenario.checks!, observations as Observations, true);
const check = (id: string, observations: Observed) => {
  const c = derived(observations).checks.find((x) => x.id === id);
  expect(c, `${id} judged`).toBeDefined();
  return { holds: c!.holds, observed: c!.observed };
};

const launch = (seq: number, environmentId = "env-1"): LaunchSeen => ({ seq, t: 1_000 + seq, conn: "c1", launchId: `l-${seq}`, environmentId });
// The marker's placement is env-1; the node reconnected at tap seq 50.
const seen = (over: Partial<TurnSeen> = {}): TurnSeen => ({
  alias: "node-1",
  marker: { nonce: "mark-1a2b", reply: "fleetlab-ok: read returned: mark-1a2b written only on node-1", environmentId: "env-1" },
  reply: "fleetlab-ok: read returned: mark-1a2b written only on node-1",
  launches: [launch(40), launch(60)],
  launchCount: 2,
  launchAfter: 50,
  ...over,
});
const responses = (round: number, status: "completed" | "failed" | "aborted" = "completed") => ({ method: "POST", path: "/v1/responses", round, status }) as const;
const passing: Observed = {
  dispatch: { alias: "node-1", state: "active", deviceId: "id-1" },
  turn: { status: "ok", seen: seen() },
  requests: [responses(0), responses(1)],
  after: { free: { slots: { total: 2, available: 2 } }, workers: [] },
};

describe("midturn-kill-at-launch: the declared checks over what the body observed", () => {
  it("declares its four checks in the order the body called them", () => {
    expect(scenario.checks!.map((c) => c.id)).toEqual(["R-kill-at-launch-dispatch", "R-kill-at-launch-completes", "R-kill-at-launch-once", "R-kill-at-launch-slots"]);
  });

  it("R-kill-at-launch-dispatch: the session must be placed on the node; a body that stopped there fails on it, nothing after it is judged", () => {
    expect(check("R-kill-at-launch-dispatch", passing)).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local: Observed = { dispatch: { alias: "node-1", state: "local" } };
    expect(check("R-kill-at-launch-dispatch", local)).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    const j = judgeHistory(hist(local, { stopped: "R-kill-at-launch-dispatch" }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-kill-at-launch-dispatch: expectation not met and no finding is registered as R-kill-at-launch-dispatch"]);
    expect(j.checks.map((c) => c.findingId)).toEqual(["R-kill-at-launch-dispatch"]);
  });

  it("R-kill-at-launch-completes holds: the turn ended ok with the node-only answer, two launches for its placement, the last after the reconnect", () => {
    // A launch for another placement on the same node is not the turn's.
    const obs: Observed = { turn: { status: "ok", seen: seen({ launches: [launch(40), launch(45, "env-other"), launch(60)] }) } };
    expect(check("R-kill-at-launch-completes", obs)).toEqual({ holds: true, observed: { status: "ok", reply: "node-only marker", launches: 2, launchAfterMark: true } });
  });

  it("R-kill-at-launch-completes does not hold: no relaunch after the reconnect, or the turn failed with no reply", () => {
    expect(check("R-kill-at-launch-completes", { turn: { status: "ok", seen: seen({ launches: [launch(40)] }) } })).toEqual({
      holds: false,
      observed: { status: "ok", reply: "node-only marker", launches: 1, launchAfterMark: false },
    });
    expect(check("R-kill-at-launch-completes", { turn: { status: "error", seen: seen({ reply: null }) } })).toEqual({
      holds: false,
      observed: { status: "error", reply: "none", launches: 2, launchAfterMark: true },
    });
    // A reply from a gateway-local run: the nonce is normalised out of the observed reply.
    expect(check("R-kill-at-launch-completes", { turn: { status: "ok", seen: seen({ reply: "fleetlab-ok: read failed for mark-1a2b" }) } }).observed).toEqual({
      status: "ok",
      reply: "fleetlab-ok: read failed for <nonce>",
      launches: 2,
      launchAfterMark: true,
    });
  });

  it("R-kill-at-launch-once holds: the turn's Responses calls are round 0 then round 1, both completed (other calls carrying the message are not counted)", () => {
    const obs: Observed = { requests: [responses(0), { method: "GET", path: "/v1/models", status: "completed" }, responses(1)] };
    expect(check("R-kill-at-launch-once", obs)).toEqual({
      holds: true,
      observed: [
        { round: 0, status: "completed" },
        { round: 1, status: "completed" },
      ],
    });
  });

  it("R-kill-at-launch-once does not hold: the model asked twice from the start, or a request did not complete", () => {
    expect(check("R-kill-at-launch-once", { requests: [responses(0), responses(0), responses(1)] })).toEqual({
      holds: false,
      observed: [
        { round: 0, status: "completed" },
        { round: 0, status: "completed" },
        { round: 1, status: "completed" },
      ],
    });
    expect(check("R-kill-at-launch-once", { requests: [responses(0), responses(1, "aborted")] })).toEqual({
      holds: false,
      observed: [
        { round: 0, status: "completed" },
        { round: 1, status: "aborted" },
      ],
    });
    expect(check("R-kill-at-launch-once", { requests: [] })).toEqual({ holds: false, observed: [] });
  });

  it("R-kill-at-launch-slots holds: every slot free and no worker process left", () => {
    expect(check("R-kill-at-launch-slots", { after: { free: { slots: { total: 2, available: 2 } }, workers: [] } })).toEqual({ holds: true, observed: { slots: { total: 2, available: 2 }, workers: 0 } });
  });

  it("R-kill-at-launch-slots does not hold: the slots were not all free within the window, or a worker process is left", () => {
    expect(check("R-kill-at-launch-slots", { after: { free: { error: "node-1: every worker slot free: not within 60000 ms" }, workers: [] } })).toEqual({
      holds: false,
      observed: { error: "node-1: every worker slot free: not within 60000 ms", workers: 0 },
    });
    const worker = { pid: 812, cwd: "/home/lab/.openclaw/node-host/w1", args: "node worker.mjs --internal-worker-session s1" };
    expect(check("R-kill-at-launch-slots", { after: { free: { slots: { total: 2, available: 2 } }, workers: [worker] } })).toEqual({
      holds: false,
      observed: { slots: { total: 2, available: 2 }, workers: 1 },
    });
  });

  it("judged as a whole: all four hold -> pass; one short -> fail (no finding is registered); nothing observed after the body returned -> unknown", () => {
    expect(judgeHistory(hist(passing), scenario, [])).toMatchObject({ verdict: "pass" });
    const short = judgeHistory(hist({ ...passing, requests: [responses(0), responses(0), responses(1)] }), scenario, []);
    expect(short.verdict).toBe("fail");
    expect(short.checks.filter((c) => c.outcome !== "pass").map((c) => c.findingId)).toEqual(["R-kill-at-launch-once"]);
    const none = judgeHistory(hist({}), scenario, []);
    expect(none.verdict).toBe("unknown");
    expect(none.detail).toContain("check R-kill-at-launch-completes had nothing to judge");
    // The body ended before its checks (it threw): nothing to judge is no note of the checks'.
    expect(derived({}).checks).toEqual([]);
    expect(deriveChecks(scenario.checks!, {}, false).notes).toEqual([]);
  });
});
