// repro-145189's premise and check over hand-made histories (no Docker): the wire while the large
// frame drained (the tap's byte samples, the frame's completion, the pings, the close), and what
// the node and the operator got.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-145189.ts";
import { historyOf } from "../../lab/testing/histories.ts";

/** As the runner keeps them: JSON. */
const recorded = (o: Observed): Observations => JSON.parse(JSON.stringify(o)) as Observations;
const check = (o: Observed) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === "R-145189-connection-survives");
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-145189-frame-in-flight-at-deadline");
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));

/** The send; the keepalive tick 3 s after it, so its deadline 28 s after it. */
const T0 = Date.parse("2026-12-02T03:15:17.000Z");
const TICK = T0 + 3_000;
const TOTAL = 2_816_000;
/** A sample every 500 ms from the send; `bytes(k)` at the k-th (null: the connection gone from the tap's table). */
const samples = (count: number, bytes: (k: number) => number | null, state = (k: number) => (bytes(k) === null ? "gone" : "open")) =>
  Array.from({ length: count }, (_, i) => ({ t: T0 + 500 * (i + 1), bytes: bytes(i + 1), state: state(i + 1) }));
/** At the fault's rate (512 kbit = 64000 B/s): 32000 bytes a sample, whole at 44 s. */
const atRate = (k: number) => Math.min(TOTAL, 32_000 * k);
const NEAR_DEADLINE = [1_600_000, 1_632_000, 1_664_000, 1_696_000, 1_728_000, 1_760_000, 1_792_000];

type Wire = NonNullable<Observed["wire"]>;
type User = NonNullable<Observed["user"]>;
/** 2026.9.6: the frame drained at the limit, whole after 44.1 s, the queued ping after it, the connection open. */
const fixedWire = (more: Partial<Wire> = {}): Wire => ({
  limited: "gateway",
  tick: TICK,
  tReq: T0,
  samples: samples(90, atRate),
  frameWholeAt: T0 + 44_100,
  pings: [{ seq: 41, t: T0 + 44_200 }],
  tapClosedAt: null,
  closed: null,
  ...more,
});
/** 2026.9.4: the gateway dropped the connection at the deadline (28.7 s), the frame never whole. */
const droppedWire = (): Wire => ({ ...fixedWire(), samples: samples(60, (k) => (k <= 57 ? atRate(k) : null)), frameWholeAt: null, pings: [], tapClosedAt: T0 + 28_700 });

const PADDING = { chars: 3_560_000, sha256: "5d41402abc4b2a76b9719d911017c592".repeat(2) };
const answered = (more: Partial<User> = {}): User => ({
  closed: null,
  tap: { state: "open", closedAt: null },
  sent: PADDING,
  arrived: PADDING,
  operatorGot: { payload: { fleetlab: "repro-145189", paddingChars: PADDING.chars } },
  ...more,
});
const DISCONNECTED = { ok: false as const, code: "UNAVAILABLE", message: "DISCONNECTED: node disconnected (system.which)" };
const dropped = (): User => answered({ tap: { state: "closed", closedAt: T0 + 28_700 }, arrived: null, operatorGot: DISCONNECTED });

describe("P-145189-frame-in-flight-at-deadline", () => {
  it("met: begun before the tick, moving and not whole at the deadline, no ping past it, drained at the fault's rate", () => {
    expect(premise({ wire: fixedWire() })).toEqual({
      id: "P-145189-frame-in-flight-at-deadline",
      met: true,
      observed: {
        limited: "gateway",
        rateBytesS: 64_000,
        tapRateBytesS: 64_000,
        tapBytes: TOTAL,
        startedBeforeTick: true,
        firstBytesAfterTickMs: -2_500,
        movingAtDeadline: true,
        bytesNearDeadline: NEAR_DEADLINE,
        incompleteAtDeadline: true,
        wholeAtTapAfterMs: 44_100,
        deadlineAfterMs: 28_000,
        pingPastFrame: null,
        labWatchClosed: false,
      },
    });
    // 2026.9.4's drop: not whole, the tap's close after the deadline.
    expect(premise({ wire: droppedWire() })).toMatchObject({ met: true, observed: { incompleteAtDeadline: true, wholeAtTapAfterMs: null, tapBytes: 57 * 32_000 } });
  });

  it("not met aimed off: the limit on the tap, the gateway's frame whole at the tap at once and its ping written in time", () => {
    const o = { wire: fixedWire({ limited: "tap-scripted-1", samples: samples(90, () => TOTAL), frameWholeAt: T0 + 400, pings: [{ seq: 12, t: TICK + 10 }] }) };
    expect(premise(o)).toEqual({
      id: "P-145189-frame-in-flight-at-deadline",
      met: false,
      observed: {
        limited: "tap-scripted-1",
        rateBytesS: 64_000,
        tapRateBytesS: 5_632_000,
        tapBytes: TOTAL,
        startedBeforeTick: true,
        firstBytesAfterTickMs: -2_500,
        movingAtDeadline: false,
        bytesNearDeadline: NEAR_DEADLINE.map(() => TOTAL),
        incompleteAtDeadline: false,
        wholeAtTapAfterMs: 400,
        deadlineAfterMs: 28_000,
        pingPastFrame: { seq: 12, afterMs: 3_010 },
        labWatchClosed: false,
      },
    });
  });

  it("not met when the lab client's own tick watch closed the connection (4000)", () => {
    expect(premise({ wire: fixedWire({ closed: { code: 4000, reason: "tick timeout", t: T0 + 30_000 } }) })).toMatchObject({ met: false, observed: { labWatchClosed: true } });
  });
});

describe("R-145189-connection-survives", () => {
  const EXPECTATION =
    "while the gateway is still sending a large frame to a node (its bytes reaching the node's side the whole time, past the gateway's 25 s keepalive deadline), the gateway does not close that connection: the frame arrives whole, the node answers, and the operator's node.invoke returns that answer";

  it("holds: the connection open, the padding arrived whole, the operator got the node's answer", () => {
    expect(check({ user: answered() })).toEqual({
      id: "R-145189-connection-survives",
      expectation: EXPECTATION,
      holds: true,
      observed: { connectionEnded: null, frameArrivedWhole: true, operatorGot: "the node's answer" },
    });
  });

  it("does not hold: the gateway dropped the node at the deadline; the registered signature reads known-finding", () => {
    expect(check({ user: dropped() })).toEqual({
      id: "R-145189-connection-survives",
      expectation: EXPECTATION,
      holds: false,
      observed: { connectionEnded: "dropped by the gateway", frameArrivedWhole: false, operatorGot: "UNAVAILABLE: DISCONNECTED: node disconnected (system.which)" },
    });
    const j = judgeHistory(hist({ wire: droppedWire(), user: dropped() }), scenario, []);
    expect(j.verdict).toBe("known-finding");
    expect(j.checks.find((c) => c.findingId === "R-145189-connection-survives")?.outcome).toBe("known-finding");
  });

  it("does not hold: closed on the node's side or at the tap, a padding that differs, no answer or another answer", () => {
    expect(check({ user: answered({ closed: { code: 1006, reason: "", t: T0 + 30_000 }, operatorGot: null }) })).toMatchObject({
      holds: false,
      observed: { connectionEnded: "closed", frameArrivedWhole: true, operatorGot: "no answer" },
    });
    expect(check({ user: answered({ tap: { state: "closed", closedAt: T0 + 30_000 } }) })).toMatchObject({ holds: false, observed: { connectionEnded: "closed" } });
    expect(check({ user: answered({ arrived: { chars: PADDING.chars, sha256: "0".repeat(64) }, operatorGot: { payload: { paddingChars: 12 } } }) })).toMatchObject({
      holds: false,
      observed: { connectionEnded: null, frameArrivedWhole: false, operatorGot: "another answer" },
    });
    expect(check({ user: answered({ operatorGot: { ok: false, code: "UNAVAILABLE", detailsCode: "TIMEOUT", message: "node invoke timed out" } }) })?.observed).toEqual({
      connectionEnded: null,
      frameArrivedWhole: true,
      operatorGot: "UNAVAILABLE/TIMEOUT: node invoke timed out",
    });
  });

  it("2026.9.6's run, premise and check together: pass (the lab reads fixed? against the 2026.9.4 record)", () => {
    expect(judgeHistory(hist({ wire: fixedWire(), user: answered() }), scenario, []).verdict).toBe("fixed?");
  });
});
