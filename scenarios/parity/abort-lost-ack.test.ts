// abort-lost-ack's checks and premise as pure functions of what its body observed, on hand-made histories (no Docker).
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { TurnSeen } from "../../lab/kits/proof.ts";
import scenario, { type Observed } from "./abort-lost-ack.ts";
import { historyOf, premiseOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
const derived = (observations: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, observations as Observations, true).checks.map((c) => [c.id, c]));
/** One declared check over `observations`: holds and the exact observed (undefined: nothing to read). */
const judged = (observations: Observed, id: string) => {
  const c = derived(observations)[id];
  return c && { holds: c.holds, observed: c.observed };
};

const cancel = { seq: 10, command: "worker.cancel.v1" };
const stopOld = { seq: 12, command: "worker.environment.stop.v1", environmentId: "env-1" };
const status = { seq: 20, command: "worker.status.v1" };
const launchNew = { seq: 30, command: "worker.launch.v1", environmentId: "env-2" };
const MARKER = { nonce: "mark-0a1b2c3d", reply: "fleetlab-ok: read returned: mark-0a1b2c3d written only on node-1", environmentId: "env-2" };
const successorTurn: TurnSeen = { alias: "node-1", marker: MARKER, reply: MARKER.reply, launches: [{ seq: 30, t: 3000, conn: "c1", launchId: "l-2", environmentId: "env-2" }] };

/** What qa-lab expects: every check holds. */
const asExpected: Observed = {
  dispatch: { alias: "node-1", state: "active", deviceId: "dev-1" },
  heldWorkers: { pids: [4242] },
  acksLost: { leaked: [] },
  original: { environmentId: "env-1" },
  abort: { answer: { ok: true, aborted: true, runIds: ["run-0a1b2c3d"] }, status: "error", chat: "aborted" },
  wire: { commands: [cancel, stopOld] },
  workerGone: { left: [] },
  placement: { state: "failed", generation: 2, runner: { kind: "device", status: "available" }, recoveryError: "worker cancel unconfirmed" },
  reclaim: { state: "local" },
  again: { state: "active", environmentId: "env-2" },
  successor: { turn: successorTurn, launches: [launchNew] },
  fence: { commands: [cancel, stopOld, status, launchNew] },
};
/** What 2026.9.6 was seen to do (runs 20261130-143452-95cb, 20261130-144742-b623): no environment stop until the plain reclaim. */
const seenOn2026_9_6: Observed = {
  ...asExpected,
  wire: { commands: [cancel, status] },
  placement: { state: "active", generation: 1, runner: { kind: "device", status: "available" } },
  reclaim: { state: "reclaimed" },
  fence: { commands: [cancel, status, { seq: 25, command: "worker.environment.stop.v1", environmentId: "env-1" }, launchNew] },
};

describe("abort-lost-ack: its checks over what the body observed", () => {
  it("declares its checks in the order the body made them", () => {
    expect(scenario.premises!.map((p) => p.id)).toEqual(["P-abort-lost-ack-acks-lost"]);
    expect(scenario.checks!.map((c) => c.id)).toEqual([
      "R-abort-lost-ack-dispatch",
      "R-abort-lost-ack-worker-running",
      "R-abort-lost-ack-run-ends",
      "R-abort-lost-ack-environment-stop",
      "R-abort-lost-ack-worker-gone",
      "R-abort-lost-ack-placement-failed",
      "R-abort-lost-ack-reclaim",
      "R-abort-lost-ack-new-environment",
      "R-abort-lost-ack-successor",
      "R-abort-lost-ack-fence-order",
    ]);
  });

  it("R-abort-lost-ack-dispatch: the session is placed on the node; a body that stopped there fails on it", () => {
    expect(judged(asExpected, "R-abort-lost-ack-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local: Observed = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local, "R-abort-lost-ack-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    const j = judgeHistory({ ...hist(local), stopped: "R-abort-lost-ack-dispatch" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-abort-lost-ack-dispatch: expectation not met and no finding is registered as R-abort-lost-ack-dispatch"]);
    expect(j.derived.map((c) => c.id)).toEqual(["R-abort-lost-ack-dispatch"]);
  });

  it("R-abort-lost-ack-worker-running: the held turn has a worker process on the node; a body that stopped there fails on it", () => {
    expect(judged(asExpected, "R-abort-lost-ack-worker-running")).toEqual({ holds: true, observed: { workers: 1 } });
    const none: Observed = { dispatch: asExpected.dispatch, original: asExpected.original, heldWorkers: { pids: [] } };
    expect(judged(none, "R-abort-lost-ack-worker-running")).toEqual({ holds: false, observed: { workers: 0 } });
    const j = judgeHistory({ ...hist(none), stopped: "R-abort-lost-ack-worker-running" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-abort-lost-ack-worker-running: expectation not met and no finding is registered as R-abort-lost-ack-worker-running"]);
  });

  it("P-abort-lost-ack-acks-lost: no answer to a cancel passed the tap; one that did stops the body, unknown (after the abort or after the reclaim)", () => {
    expect(premiseOf(scenario, "P-abort-lost-ack-acks-lost", asExpected)).toEqual({ id: "P-abort-lost-ack-acks-lost", met: true, observed: { leaked: 0 } });
    expect(premiseOf(scenario, "P-abort-lost-ack-acks-lost", { acksLost: { leaked: [107, 131] } })).toEqual({ id: "P-abort-lost-ack-acks-lost", met: false, observed: { leaked: 2 } });
    const WHAT = "every answer of the node to worker.cancel.v1 was dropped at its wire tap from the abort through the reclaim: the gateway never heard the cancel acknowledged";
    // Read after agent.wait: nothing after it was observed.
    const early: Observed = { dispatch: asExpected.dispatch, heldWorkers: asExpected.heldWorkers, original: asExpected.original, acksLost: { leaked: [107] } };
    const j = judgeHistory({ ...hist(early), stopped: "P-abort-lost-ack-acks-lost" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", `the lab could not tell: premise P-abort-lost-ack-acks-lost not met (${WHAT}): observed {"leaked":1}`]);
    // Read again after the reclaim: the checks before it are moot, the registered ones too.
    const { again: _again, successor: _successor, fence: _fence, ...upToReclaim } = { ...seenOn2026_9_6, acksLost: { leaked: [131] } };
    const late = judgeHistory({ ...hist(upToReclaim), stopped: "P-abort-lost-ack-acks-lost" }, scenario, []);
    expect(late.verdict).toBe("unknown");
    expect(late.detail).toMatch(/^the lab could not tell: premise P-abort-lost-ack-acks-lost not met \(.*\): observed \{"leaked":1\}/);
  });

  it("R-abort-lost-ack-run-ends: chat.abort answers aborted: true and agent.wait ends", () => {
    expect(derived(asExpected)["R-abort-lost-ack-run-ends"]).toEqual({
      id: "R-abort-lost-ack-run-ends",
      expectation: `chat.abort answers aborted: true and the run ends (agent.wait not "timeout") within 45 s although the node's cancel acknowledgement is lost`,
      holds: true,
      observed: { within_s: 45, aborted: true, status: "error", chat: "aborted" },
    });
    expect(judged({ abort: { answer: { ok: true, aborted: true }, status: "timeout", chat: null } }, "R-abort-lost-ack-run-ends")).toEqual({ holds: false, observed: { within_s: 45, aborted: true, status: "timeout", chat: null } });
    expect(judged({ abort: { answer: { ok: true }, status: "error", chat: "aborted" } }, "R-abort-lost-ack-run-ends")).toEqual({ holds: false, observed: { within_s: 45, aborted: null, status: "error", chat: "aborted" } });
    // A refusal is observed as it came, normalised (the run id).
    expect(judged({ abort: { answer: { ok: false, code: "INVALID_REQUEST", message: "no run run-0a1b2c3d" }, status: "pending", chat: null } }, "R-abort-lost-ack-run-ends")).toEqual({
      holds: false,
      observed: { within_s: 45, aborted: { ok: false, code: "INVALID_REQUEST", message: "no run run-<id>" }, status: "pending", chat: null },
    });
  });

  it("R-abort-lost-ack-environment-stop: worker.environment.stop.v1 of the placement's environment after the cancel", () => {
    expect(judged(asExpected, "R-abort-lost-ack-environment-stop")).toEqual({ holds: true, observed: { within_s: 45, cancel: true, environmentStop: { afterCancel: true, sameEnvironment: true } } });
    expect(judged(seenOn2026_9_6, "R-abort-lost-ack-environment-stop")).toEqual({ holds: false, observed: { within_s: 45, cancel: true, environmentStop: null } });
    const otherEnvironment = { ...asExpected, wire: { commands: [cancel, { ...stopOld, environmentId: "env-9" }] } };
    expect(judged(otherEnvironment, "R-abort-lost-ack-environment-stop")).toEqual({ holds: false, observed: { within_s: 45, cancel: true, environmentStop: { afterCancel: true, sameEnvironment: false } } });
    const beforeCancel = { ...asExpected, wire: { commands: [{ ...stopOld, seq: 5 }, cancel] } };
    expect(judged(beforeCancel, "R-abort-lost-ack-environment-stop")).toEqual({ holds: false, observed: { within_s: 45, cancel: true, environmentStop: { afterCancel: false, sameEnvironment: true } } });
    // No cancel at all: the body ends there (the lost acknowledgement was never exercised), the check is not made.
    expect(judged({ ...asExpected, wire: { commands: [stopOld] } }, "R-abort-lost-ack-environment-stop")).toBeUndefined();
  });

  it("R-abort-lost-ack-worker-gone: no old worker process left", () => {
    expect(judged(asExpected, "R-abort-lost-ack-worker-gone")).toEqual({ holds: true, observed: { within_s: 45, left: 0 } });
    expect(judged({ workerGone: { left: [4242] } }, "R-abort-lost-ack-worker-gone")).toEqual({ holds: false, observed: { within_s: 45, left: 1 } });
  });

  it("R-abort-lost-ack-placement-failed: the placement failed", () => {
    expect(judged(asExpected, "R-abort-lost-ack-placement-failed")).toEqual({ holds: true, observed: { within_s: 45, state: "failed", runner: "available", recoveryError: "worker cancel unconfirmed" } });
    expect(judged(seenOn2026_9_6, "R-abort-lost-ack-placement-failed")).toEqual({ holds: false, observed: { within_s: 45, state: "active", runner: "available", recoveryError: null } });
    expect(judged({ placement: null }, "R-abort-lost-ack-placement-failed")).toEqual({ holds: false, observed: { within_s: 45, state: null, runner: null, recoveryError: null } });
  });

  it("R-abort-lost-ack-reclaim: the reclaim brings the session back local", () => {
    expect(judged(asExpected, "R-abort-lost-ack-reclaim")).toEqual({ holds: true, observed: { placement: "failed", state: "local" } });
    expect(judged(seenOn2026_9_6, "R-abort-lost-ack-reclaim")).toEqual({ holds: false, observed: { placement: "active", state: "reclaimed" } });
    const refused: Observed = { ...asExpected, reclaim: { ok: false, code: "INVALID_REQUEST", message: "session fleetlab-3fa2c1 generation mismatch" } };
    expect(judged(refused, "R-abort-lost-ack-reclaim")).toEqual({ holds: false, observed: { placement: "failed", code: "INVALID_REQUEST", message: "session fleetlab-<id> generation mismatch" } });
  });

  it("R-abort-lost-ack-new-environment: active again on a new environment", () => {
    expect(judged(asExpected, "R-abort-lost-ack-new-environment")).toEqual({ holds: true, observed: { state: "active", newEnvironment: true } });
    expect(judged({ ...asExpected, again: { state: "active", environmentId: "env-1" } }, "R-abort-lost-ack-new-environment")).toEqual({ holds: false, observed: { state: "active", newEnvironment: false } });
    expect(judged({ ...asExpected, again: { state: "active" } }, "R-abort-lost-ack-new-environment")).toEqual({ holds: false, observed: { state: "active", newEnvironment: false } });
    expect(judged({ ...asExpected, again: { ok: false, code: "UNAVAILABLE", message: "node busy" } }, "R-abort-lost-ack-new-environment")).toEqual({ holds: false, observed: { code: "UNAVAILABLE", message: "node busy" } });
  });

  it("R-abort-lost-ack-successor: proven on the node with exactly one launch; only judged when the successor ran", () => {
    expect(judged(asExpected, "R-abort-lost-ack-successor")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1, allLaunches: 1 } });
    const twice: Observed = { ...asExpected, successor: { turn: successorTurn, launches: [launchNew, { ...launchNew, seq: 31 }] } };
    expect(judged(twice, "R-abort-lost-ack-successor")).toEqual({ holds: false, observed: { reply: "node-only marker", launches: 1, allLaunches: 2 } });
    const failed: Observed = { ...asExpected, successor: { turn: { ...successorTurn, reply: null, launches: [], error: "agent.wait timeout" }, launches: [] } };
    expect(judged(failed, "R-abort-lost-ack-successor")).toEqual({ holds: false, observed: { reply: "none", launches: 0, error: "agent.wait timeout", allLaunches: 0 } });
    // The new dispatch refused: no successor turn, nothing to judge, and that is no problem (optional).
    const noSuccessor: Observed = { ...asExpected, again: { ok: false, code: "UNAVAILABLE", message: "node busy" }, successor: undefined, fence: { commands: [cancel, stopOld] } };
    expect(judged(noSuccessor, "R-abort-lost-ack-successor")).toBeUndefined();
    expect(deriveChecks(scenario.checks!, noSuccessor as Observations, true).notes).toEqual([]);
  });

  it("R-abort-lost-ack-fence-order: cancel < environment stop < successor launch", () => {
    expect(judged(asExpected, "R-abort-lost-ack-fence-order")).toEqual({ holds: true, observed: { cancel: true, environmentStop: true, sameEnvironment: true, successorLaunch: true } });
    // 2026.9.6: the stop comes only with the reclaim, still before the successor's launch.
    expect(judged(seenOn2026_9_6, "R-abort-lost-ack-fence-order")).toEqual({ holds: true, observed: { cancel: true, environmentStop: true, sameEnvironment: true, successorLaunch: true } });
    const noSuccessor: Observed = { ...asExpected, successor: undefined };
    expect(judged(noSuccessor, "R-abort-lost-ack-fence-order")).toEqual({ holds: false, observed: { cancel: true, environmentStop: true, sameEnvironment: true, successorLaunch: false } });
    const stopAfterLaunch: Observed = { ...asExpected, fence: { commands: [cancel, status, launchNew, { ...stopOld, seq: 35 }] } };
    expect(judged(stopAfterLaunch, "R-abort-lost-ack-fence-order")).toEqual({ holds: false, observed: { cancel: true, environmentStop: false, sameEnvironment: false, successorLaunch: true } });
  });
});

describe("abort-lost-ack: verdicts from whole histories", () => {
  it("all as qa-lab expects: every check holds, and the registered findings read fixed?", () => {
    const j = judgeHistory(hist(asExpected), scenario, []);
    expect(j.verdict).toBe("fixed?");
    expect(j.checks.filter((c) => c.outcome !== "pass").map((c) => [c.findingId, c.outcome])).toEqual([
      ["R-abort-lost-ack-environment-stop", "fixed?"],
      ["R-abort-lost-ack-placement-failed", "fixed?"],
      ["R-abort-lost-ack-reclaim", "fixed?"],
    ]);
  });

  it("what 2026.9.6 was seen to do reads known-finding (the three registered signatures)", () => {
    const j = judgeHistory(hist(seenOn2026_9_6), scenario, []);
    expect(j.verdict).toBe("known-finding");
    expect(j.checks.filter((c) => c.outcome === "known-finding").map((c) => c.findingId)).toEqual(["R-abort-lost-ack-environment-stop", "R-abort-lost-ack-placement-failed", "R-abort-lost-ack-reclaim"]);
    expect(j.checks.filter((c) => c.outcome === "pass")).toHaveLength(7);
  });

  it("a shortfall other than the registered ones fails", () => {
    expect(judgeHistory(hist({ ...seenOn2026_9_6, workerGone: { left: [4242] } }), scenario, []).verdict).toBe("fail");
  });
});
