// offline-runner-stop's checks and premise as pure functions of what its body observed, on hand-made histories (no Docker).
import { describe, expect, it } from "vitest";
import { deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { TurnSeen } from "../../lab/kits/proof.ts";
import scenario, { RUNNER_OFFLINE, type Observed } from "./offline-runner-stop.ts";
import { historyOf, premiseOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observed): ScenarioHistory => historyOf(scenario, observations);
/** The declared checks over `observations`, by id (a check with nothing to read is absent). */
const derived = (observations: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, observations as Observations, true).checks.map((c) => [c.id, c]));
/** One declared check over `observations`: holds and the exact observed (undefined: nothing to read). */
const judged = (observations: Observed, id: string) => {
  const c = derived(observations)[id];
  return c && { holds: c.holds, observed: c.observed };
};

const MARKER = { nonce: "mark-0a1b2c3d", reply: "fleetlab-ok: read returned: mark-0a1b2c3d written only on node-1", environmentId: "env-1" };
const retryOnNode: TurnSeen = { alias: "node-1", marker: MARKER, reply: MARKER.reply, launches: [{ seq: 40, t: 1000, conn: "c2", launchId: "l-2", environmentId: "env-1" }] };
const placement = { state: "active", generation: 1, runner: { kind: "device", status: "offline", deviceId: "dev-1" } };
const localMessage = "local-0a1b2c while the runner is stopped";

/** What qa-lab expects: every check holds. */
const asExpected: Observed = {
  dispatch: { alias: "node-1", state: "active", deviceId: "dev-1" },
  shutdown: { graceful: true },
  offlineTurn: { status: "error", error: `WorkerRunnerUnavailableError: ${RUNNER_OFFLINE}`, chat: "error" },
  placementAfter: placement,
  localTurn: { message: localMessage, status: "ok", text: "fleetlab-ok: local-0a1b2c while the runner is stopped" },
  afterReturn: { launches: [], status: "error" },
  retry: retryOnNode,
};
/** What 2026.9.6 was seen to do (run 20261130-141727-8d01): the turn waits and is launched once the node is back. */
const seenOn2026_9_6: Observed = {
  ...asExpected,
  offlineTurn: { status: "timeout", error: null, chat: null },
  afterReturn: { launches: [{ seq: 41, t: 1001 }], status: "ok" },
};

describe("offline-runner-stop: its checks over what the body observed", () => {
  it("declares its checks in the order the body made them", () => {
    expect(scenario.premises!.map((p) => p.id)).toEqual(["P-offline-runner-stop-clean-stop"]);
    expect(scenario.checks!.map((c) => c.id)).toEqual([
      "R-offline-runner-stop-dispatch",
      "R-offline-runner-stop-turn-error",
      "R-offline-runner-stop-placement-kept",
      "R-offline-runner-stop-local-turn",
      "R-offline-runner-stop-no-launch",
      "R-offline-runner-stop-retry",
    ]);
  });

  it("R-offline-runner-stop-dispatch: the session is placed on the node; a body that stopped there fails on it", () => {
    expect(judged(asExpected, "R-offline-runner-stop-dispatch")).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    const local: Observed = { dispatch: { alias: "node-1", state: "local" } };
    expect(judged(local, "R-offline-runner-stop-dispatch")).toEqual({ holds: false, observed: [{ alias: "node-1", state: "local" }] });
    const j = judgeHistory({ ...hist(local), stopped: "R-offline-runner-stop-dispatch" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual(["fail", "R-offline-runner-stop-dispatch: expectation not met and no finding is registered as R-offline-runner-stop-dispatch"]);
    expect(j.derived.map((c) => c.id)).toEqual(["R-offline-runner-stop-dispatch"]);
  });

  it("P-offline-runner-stop-clean-stop: the node exited on its own within the grace; killed by the engine, the body stops and the verdict is unknown", () => {
    expect(premiseOf(scenario, "P-offline-runner-stop-clean-stop", asExpected)).toEqual({ id: "P-offline-runner-stop-clean-stop", met: true, observed: { graceful: true } });
    // The fault did not say: taken as clean, as before.
    expect(premiseOf(scenario, "P-offline-runner-stop-clean-stop", { shutdown: { graceful: null } })).toEqual({ id: "P-offline-runner-stop-clean-stop", met: true, observed: { graceful: null } });
    const killed: Observed = { dispatch: asExpected.dispatch, shutdown: { graceful: false } };
    expect(premiseOf(scenario, "P-offline-runner-stop-clean-stop", killed)).toEqual({ id: "P-offline-runner-stop-clean-stop", met: false, observed: { graceful: false } });
    const j = judgeHistory({ ...hist(killed), stopped: "P-offline-runner-stop-clean-stop" }, scenario, []);
    expect([j.verdict, j.detail]).toEqual([
      "unknown",
      'the lab could not tell: premise P-offline-runner-stop-clean-stop not met (the node host shut down on its own within 20 s of SIGTERM (a clean stop), not killed by the engine when the grace ran out): observed {"graceful":false}',
    ]);
    // Nothing after the premise was reached: only the dispatch was judged.
    expect(j.derived.map((c) => c.id)).toEqual(["R-offline-runner-stop-dispatch"]);
  });

  it("R-offline-runner-stop-turn-error: status error with the runner-offline text within the bound", () => {
    expect(derived(asExpected)["R-offline-runner-stop-turn-error"]).toEqual({
      id: "R-offline-runner-stop-turn-error",
      expectation: `a turn to a session placed on a cleanly stopped node ends within 10 s with status error and "${RUNNER_OFFLINE}"`,
      holds: true,
      observed: { within_s: 10, status: "error", error: `WorkerRunnerUnavailableError: ${RUNNER_OFFLINE}`, chat: "error" },
    });
    expect(judged(seenOn2026_9_6, "R-offline-runner-stop-turn-error")).toEqual({ holds: false, observed: { within_s: 10, status: "timeout", error: null, chat: null } });
    // An error that is not the offline runner's, normalised (a lab name) in what is observed.
    expect(judged({ offlineTurn: { status: "error", error: "session fleetlab-3fa2c1 busy", chat: "error" } }, "R-offline-runner-stop-turn-error")).toEqual({
      holds: false,
      observed: { within_s: 10, status: "error", error: "session fleetlab-<id> busy", chat: "error" },
    });
  });

  it("R-offline-runner-stop-placement-kept: the placement is still active", () => {
    expect(judged(asExpected, "R-offline-runner-stop-placement-kept")).toEqual({ holds: true, observed: { state: "active", runner: { kind: "device", status: "offline" } } });
    expect(judged({ placementAfter: { ...placement, state: "failed", runner: undefined } }, "R-offline-runner-stop-placement-kept")).toEqual({ holds: false, observed: { state: "failed", runner: null } });
    expect(judged({ placementAfter: null }, "R-offline-runner-stop-placement-kept")).toEqual({ holds: false, observed: { state: null, runner: null } });
  });

  it("R-offline-runner-stop-local-turn: the local turn answers the scripted reply", () => {
    expect(judged(asExpected, "R-offline-runner-stop-local-turn")).toEqual({ holds: true, observed: { status: "ok", reply: "expected" } });
    expect(judged({ localTurn: { message: localMessage, status: "error", text: null } }, "R-offline-runner-stop-local-turn")).toEqual({ holds: false, observed: { status: "error", reply: null } });
    expect(judged({ localTurn: { message: localMessage, status: "ok", text: "something else" } }, "R-offline-runner-stop-local-turn")).toEqual({ holds: false, observed: { status: "ok", reply: "something else" } });
  });

  it("R-offline-runner-stop-no-launch: no worker.launch.v1 carries the offline run", () => {
    expect(judged(asExpected, "R-offline-runner-stop-no-launch")).toEqual({ holds: true, observed: { launches: 0, offlineRunAfterReturn: "error" } });
    expect(judged(seenOn2026_9_6, "R-offline-runner-stop-no-launch")).toEqual({ holds: false, observed: { launches: 1, offlineRunAfterReturn: "ok" } });
  });

  it("R-offline-runner-stop-retry: the retry is proven on the node", () => {
    expect(judged(asExpected, "R-offline-runner-stop-retry")).toEqual({ holds: true, observed: { reply: "node-only marker", launches: 1 } });
    const onGateway: TurnSeen = { ...retryOnNode, reply: "fleetlab-ok: read returned: nothing", launches: [] };
    expect(judged({ retry: onGateway }, "R-offline-runner-stop-retry")).toEqual({ holds: false, observed: { reply: "fleetlab-ok: read returned: nothing", launches: 0 } });
    const failed: TurnSeen = { ...retryOnNode, reply: null, launches: [], error: "agent.wait timeout" };
    expect(judged({ retry: failed }, "R-offline-runner-stop-retry")).toEqual({ holds: false, observed: { reply: "none", launches: 0, error: "agent.wait timeout" } });
  });

  it("a check with nothing to read once the body returned is unknown, never a pass", () => {
    const j = judgeHistory(hist({ ...asExpected, retry: undefined }), scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toMatch(/^check R-offline-runner-stop-retry had nothing to judge: the body returned without observing what it reads/);
  });
});

describe("offline-runner-stop: verdicts from whole histories", () => {
  it("all as qa-lab expects: every check holds, and the registered findings read fixed?", () => {
    const j = judgeHistory(hist(asExpected), scenario, []);
    expect(j.verdict).toBe("fixed?");
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      ["R-offline-runner-stop-dispatch", "pass"],
      ["R-offline-runner-stop-turn-error", "fixed?"],
      ["R-offline-runner-stop-placement-kept", "pass"],
      ["R-offline-runner-stop-local-turn", "pass"],
      ["R-offline-runner-stop-no-launch", "fixed?"],
      ["R-offline-runner-stop-retry", "pass"],
    ]);
  });

  it("what 2026.9.6 was seen to do reads known-finding (both registered signatures)", () => {
    const j = judgeHistory(hist(seenOn2026_9_6), scenario, []);
    expect(j.verdict).toBe("known-finding");
    expect(j.checks.filter((c) => c.outcome === "known-finding").map((c) => c.findingId)).toEqual(["R-offline-runner-stop-turn-error", "R-offline-runner-stop-no-launch"]);
  });

  it("a shortfall other than the registered one fails", () => {
    expect(judgeHistory(hist({ ...seenOn2026_9_6, placementAfter: { ...placement, state: "failed" } }), scenario, []).verdict).toBe("fail");
  });
});
