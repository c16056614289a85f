// repro-155333's checks on hand-made histories (no Docker): each one holding and not, with the
// exact signature it reads, and the registered findings read as known findings.
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-155333.ts";
import { historyOf, premiseOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const derived = (o: Observed, id: string) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === id);
/** Check `id` over `o`: whether it holds and exactly what it observed. */
const reads = (o: Observed, id: string) => {
  const c = derived(o, id);
  return c && { holds: c.holds, observed: c.observed };
};

type Outcome = NonNullable<Observed["outcome"]>;
const T = 1_764_720_000_000;
const WANT = "fleetlab-ok: tok-95 long task started on the gateway";

/** As 2026.9.6 was seen to do (run 20261203-235947): aborted 1392 ms after the dispatch call, the bundle install at the tap 1546 ms, the placement active at 21677 ms, the task never answered. */
const reported: Outcome = {
  dispatch: { ok: true, key: "agent:main:s1", sessionId: "3f0c8f9e-6a61-4b8e-9d77-0f5b1c7a2d10", placement: { state: "active", generation: 2 }, ms: 21_677 },
  dispatchAt: T,
  settledAt: T + 21_677,
  model: { status: "aborted", endedAt: new Date(T + 1_392).toISOString(), abortedSeenAt: T + 1_500 },
  bundleInstallsAt: [T + 1_546],
  launchesAt: [],
  run: { status: "error", stopReason: "restart", text: null, chat: "aborted" },
  expected: WANT,
  answered: false,
  modelRequestsWithTask: ["aborted"],
};

/** The turn waited for the worker: completed on the gateway, the task answered, a launch on the node. */
const waited: Outcome = {
  ...reported,
  model: { status: "completed", endedAt: new Date(T + 22_000).toISOString(), abortedSeenAt: null },
  launchesAt: [T + 21_500],
  run: { status: "ok", stopReason: "stop", text: WANT, chat: "final" },
  answered: true,
  modelRequestsWithTask: ["completed"],
};

/** The held turn ran on the gateway (P-155333-turn-on-gateway), as in every run that gets to the dispatch. */
const onGateway = { onGateway: true } as const;

describe("R-155333-abort-before-ready", () => {
  const id = "R-155333-abort-before-ready";
  const expectation = "a turn running on the gateway is not aborted by sessions.dispatch before the replacement worker is ready (placement active), or the dispatch is refused and the turn completes";

  it("does not hold when the held turn is aborted before the bundle install reached the node: the registered signature", () => {
    expect(derived({ outcome: reported }, id)).toEqual({
      id,
      expectation,
      holds: false,
      observed: { stall_s: 15, within_s: 90, dispatch: "active", modelRequest: "aborted", abortedBefore: "bundle-install", run: { status: "error", stopReason: "restart", error: null, chat: "aborted" } },
    });
  });

  it("the abort time is the model request's end, else when the poll first saw it aborted; after the install but before the placement was active: placement-active", () => {
    const after: Outcome = { ...reported, model: { status: "aborted", endedAt: null, abortedSeenAt: T + 5_000 }, run: { ...reported.run, error: { code: "ABORTED", runId: "run-0a1b2c3d" } } };
    expect(reads({ outcome: after }, id)).toEqual({
      holds: false,
      observed: { stall_s: 15, within_s: 90, dispatch: "active", modelRequest: "aborted", abortedBefore: "placement-active", run: { status: "error", stopReason: "restart", error: '{"code":"ABORTED","runId":"run-<id>"}', chat: "aborted" } },
    });
    // The request's own end time comes first: 1392 ms, before the install at 1546 ms.
    const seenLate: Outcome = { ...reported, model: { ...reported.model, abortedSeenAt: T + 3_000 } };
    expect(reads({ outcome: seenLate }, id)?.observed).toMatchObject({ abortedBefore: "bundle-install" });
  });

  it("holds when the turn is not aborted before the worker is ready", () => {
    expect(reads({ outcome: waited }, id)).toEqual({
      holds: true,
      observed: { stall_s: 15, within_s: 90, dispatch: "active", modelRequest: "completed", abortedBefore: null, run: { status: "ok", stopReason: "stop", error: null, chat: "final" } },
    });
    // Aborted once the placement was active, and the task answered on the worker: no shortfall.
    const handedOver: Outcome = { ...reported, model: { status: "aborted", endedAt: new Date(T + 22_000).toISOString(), abortedSeenAt: null }, answered: true };
    expect(reads({ outcome: handedOver }, id)).toEqual({
      holds: true,
      observed: { stall_s: 15, within_s: 90, dispatch: "active", modelRequest: "aborted", abortedBefore: null, run: { status: "error", stopReason: "restart", error: null, chat: "aborted" } },
    });
  });

  it("a refused dispatch holds only when the turn completes", () => {
    const refused: Outcome = { ...waited, dispatch: { ok: false, code: "INVALID_REQUEST", message: "session agent:main:3f0c8f9e-6a61-4b8e-9d77-0f5b1c7a2d10 has an active run" }, settledAt: T + 40 };
    expect(reads({ outcome: refused }, id)).toEqual({
      holds: true,
      observed: { stall_s: 15, within_s: 90, dispatch: "INVALID_REQUEST: session agent:main:<uuid> has an active run", modelRequest: "completed", abortedBefore: null, run: { status: "ok", stopReason: "stop", error: null, chat: "final" } },
    });
    const refusedAborted: Outcome = { ...refused, model: reported.model, run: reported.run };
    expect(reads({ outcome: refusedAborted }, id)).toEqual({
      holds: false,
      observed: { stall_s: 15, within_s: 90, dispatch: "INVALID_REQUEST: session agent:main:<uuid> has an active run", modelRequest: "aborted", abortedBefore: "bundle-install", run: { status: "error", stopReason: "restart", error: null, chat: "aborted" } },
    });
  });
});

describe("R-155333-task-kept", () => {
  const id = "R-155333-task-kept";

  it("does not hold when the task was never answered: the registered signature", () => {
    expect(derived({ outcome: reported }, id)).toEqual({
      id,
      expectation: "the task of the turn running when the session was dispatched is not lost: its answer is in the session's history within 60 s of the dispatch settling",
      holds: false,
      observed: { within_s: 60, dispatch: "active", run: "error", answered: false, modelRequestsWithTask: ["aborted"], launches: 0 },
    });
  });

  it("holds when the task's answer is in the session's history", () => {
    expect(reads({ outcome: waited }, id)).toEqual({
      holds: true,
      observed: { within_s: 60, dispatch: "active", run: "ok", answered: true, modelRequestsWithTask: ["completed"], launches: 1 },
    });
  });
});

describe("repro-155333 judged", () => {
  it("the registered signatures read known-finding", () => {
    expect(judgeHistory(hist({ firstTurn: onGateway, outcome: reported }), scenario, []).verdict).toBe("known-finding");
  });

  it("a turn that waited for the worker: the registered findings read fixed?", () => {
    expect(judgeHistory(hist({ firstTurn: onGateway, outcome: waited }), scenario, []).verdict).toBe("fixed?");
  });

  it("nothing observed once the body returned: the lab could not tell", () => {
    expect(deriveChecks(scenario.checks ?? [], {}, true).notes.map((n) => n.verdict)).toEqual(["unknown", "unknown"]);
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});

describe("P-155333-turn-on-gateway (the body stops there when it is not met)", () => {
  const id = "P-155333-turn-on-gateway";
  it("met when the held turn runs on the gateway (no placement, or a local one)", () => {
    expect(premiseOf(scenario, id, { firstTurn: onGateway })).toEqual({ id, met: true, observed: { onGateway: true } });
  });

  it("not met when the session was already placed elsewhere, the placement's state named; nothing observed: not judged", () => {
    expect(premiseOf(scenario, id, { firstTurn: { onGateway: false, placement: "active" } })).toEqual({ id, met: false, observed: { onGateway: false, placement: "active" } });
    expect(premiseOf(scenario, id, {})).toBeUndefined();
  });

  it("a body that stopped there: unknown, the registered findings neither judged nor unexercised", () => {
    const j = judgeHistory({ ...hist({ firstTurn: { onGateway: false, placement: "pending" } }), stopped: id }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toBe(`the lab could not tell: premise ${id} not met (${scenario.premises![0]!.what}): observed {"onGateway":false,"placement":"pending"}`);
    expect(j.checks).toEqual([]);
    expect(j.unexercised).toEqual([]);
  });

  it("a body that returned without proving it: unknown (never proven), though its checks read the registered findings", () => {
    expect(judgeHistory(hist({ outcome: reported }), scenario, [])).toMatchObject({ verdict: "unknown", detail: expect.stringContaining(`premise ${id} was never proven`) });
  });
});
