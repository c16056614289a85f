// repro-78351's premises and checks on hand-made histories (no Docker): each met / holding and
// not, with exactly what it observed. No finding is registered (the PR's fix is in 2026.9.x).
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-78351.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const premise = (o: Observed, id: string) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === id);
const reads = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((x) => x.id === id);
  return c && { holds: c.holds, observed: c.observed };
};

const T = 1_764_720_000_000;
const ANSWER = { found: { sh: "/bin/sh" }, from: "connection B" };
/** The fixed behaviour: the invoke withheld on A, B admitted while A was open, A cut; the gateway ends A's invoke, keeps B connected and serving. */
const fixed: Required<Observed> = {
  invokeA: { conn: "scripted-1#1", outcome: "withheld", connA: "scripted-1#1", operatorAnswer: null, connectSentAt: T, bAdmittedAt: T + 40 },
  connections: { aOpenBefore: true, aOpenAtB: true, bConnected: true },
  nodeList: { disconnectedSeen: false, last: { ms: 5_010, connected: true }, bOpen: true },
  secondInvoke: { result: { ok: true, payload: { ok: true, nodeId: "n-1", command: "system.which", payload: ANSWER } }, reachedOn: ["scripted-1#2"], connB: "scripted-1#2", answer: ANSWER },
  firstInvoke: { endedWithin: true, end: { ok: false, code: "UNAVAILABLE", message: "node connection closed", at: T + 120 } as NonNullable<Observed["firstInvoke"]>["end"] },
};
/** Before the fix: the stale close unregistered B. */
const broken: Observed = {
  ...fixed,
  nodeList: { disconnectedSeen: true, last: { ms: 260, connected: false }, bOpen: true },
  secondInvoke: { result: { ok: false, code: "UNAVAILABLE", message: "node not connected" }, reachedOn: [], connB: "scripted-1#2", answer: ANSWER },
  firstInvoke: { endedWithin: false, end: null },
};

describe("P-78351-invoke-pending-on-a", () => {
  const id = "P-78351-invoke-pending-on-a";
  it("met when the invoke was withheld on A and unanswered when B's connect was sent", () => {
    expect(premise(fixed, id)).toEqual({ id, met: true, observed: { invokeConn: "scripted-1#1", connA: "scripted-1#1", outcome: "withheld", operatorAnswered: null } });
    // The gateway ended it as it admitted B: after the connect was sent, still met.
    const endedAtB = { invokeA: { ...fixed.invokeA, operatorAnswer: { ok: false, at: T + 10 } } };
    expect(premise(endedAtB, id)).toEqual({ id, met: true, observed: { invokeConn: "scripted-1#1", connA: "scripted-1#1", outcome: "withheld", operatorAnswered: { ok: false, atMsAfterConnectSent: 10, atMsAfterB: -30 } } });
  });
  it("not met when the node answered at once (aimed off), or the invoke came on another connection", () => {
    const answered = { invokeA: { ...fixed.invokeA, outcome: "answered", operatorAnswer: { ok: true, at: T - 900 } } };
    expect(premise(answered, id)).toEqual({ id, met: false, observed: { invokeConn: "scripted-1#1", connA: "scripted-1#1", outcome: "answered", operatorAnswered: { ok: true, atMsAfterConnectSent: -900, atMsAfterB: -940 } } });
    expect(premise({ invokeA: { ...fixed.invokeA, conn: "scripted-1#0" } }, id)).toEqual({ id, met: false, observed: { invokeConn: "scripted-1#0", connA: "scripted-1#1", outcome: "withheld", operatorAnswered: null } });
  });
});

describe("P-78351-second-connection", () => {
  const id = "P-78351-second-connection";
  it("met when B was admitted while A was open", () => {
    expect(premise(fixed, id)).toEqual({ id, met: true, observed: { aOpenBefore: true, aOpenAtB: true, bConnected: true } });
  });
  it("not met when A was cut before B connected (aimed off)", () => {
    expect(premise({ connections: { aOpenBefore: false, aOpenAtB: false, bConnected: true } }, id)).toEqual({ id, met: false, observed: { aOpenBefore: false, aOpenAtB: false, bConnected: true } });
  });
});

describe("R-78351-new-session-kept", () => {
  const id = "R-78351-new-session-kept";
  it("holds when node.list showed the node connected at every read", () => {
    expect(reads(fixed, id)).toEqual({ holds: true, observed: { within_s: 5, listedDisconnected: false, listed: "connected", bOpen: true } });
  });
  it("does not hold when a read showed it disconnected, or not listed", () => {
    expect(reads(broken, id)).toEqual({ holds: false, observed: { within_s: 5, listedDisconnected: true, listed: "disconnected", bOpen: true } });
    expect(reads({ nodeList: { disconnectedSeen: true, last: { ms: 300, connected: null }, bOpen: true } }, id)).toEqual({ holds: false, observed: { within_s: 5, listedDisconnected: true, listed: "absent", bOpen: true } });
    expect(reads({ nodeList: { ...fixed.nodeList, bOpen: false } }, id)).toEqual({ holds: false, observed: { within_s: 5, listedDisconnected: false, listed: "connected", bOpen: false } });
  });
});

describe("R-78351-new-session-serves", () => {
  const id = "R-78351-new-session-serves";
  it("holds when the invoke reached B and B's answer came back unchanged (payload, or payloadJSON)", () => {
    expect(reads(fixed, id)).toEqual({ holds: true, observed: { ok: true, reachedB: true, unchanged: true } });
    const asJson = { secondInvoke: { ...fixed.secondInvoke, result: { ok: true as const, payload: { ok: true, payloadJSON: JSON.stringify(ANSWER) } } } };
    expect(reads(asJson, id)).toEqual({ holds: true, observed: { ok: true, reachedB: true, unchanged: true } });
  });
  it("does not hold when it was refused, reached another connection, or the answer changed", () => {
    expect(reads(broken, id)).toEqual({ holds: false, observed: { ok: false, code: "UNAVAILABLE", message: "node not connected", reachedB: false } });
    expect(reads({ secondInvoke: { ...fixed.secondInvoke, reachedOn: ["scripted-1#1"] } }, id)).toEqual({ holds: false, observed: { ok: true, reachedB: false, unchanged: true } });
    const changed = { secondInvoke: { ...fixed.secondInvoke, result: { ok: true as const, payload: { ok: true, payload: { found: {} } } } } };
    expect(reads(changed, id)).toEqual({ holds: false, observed: { ok: true, reachedB: true, unchanged: false } });
  });
});

describe("R-78351-stale-invoke-ends", () => {
  const id = "R-78351-stale-invoke-ends";
  it("holds when A's invoke ended with an error within the bound", () => {
    expect(reads(fixed, id)).toEqual({ holds: true, observed: { within_s: 5, endedWithin: true, end: { code: "UNAVAILABLE", message: "node connection closed" } } });
  });
  it("does not hold when it never ended, ended late, or ended ok", () => {
    expect(reads(broken, id)).toEqual({ holds: false, observed: { within_s: 5, endedWithin: false, end: "never" } });
    expect(reads({ firstInvoke: { endedWithin: false, end: fixed.firstInvoke.end } }, id)).toEqual({ holds: false, observed: { within_s: 5, endedWithin: false, end: { code: "UNAVAILABLE", message: "node connection closed" } } });
    expect(reads({ firstInvoke: { endedWithin: true, end: { ok: true, payload: {} } } }, id)).toEqual({ holds: false, observed: { within_s: 5, endedWithin: true, end: "ok" } });
  });
});

describe("repro-78351 judged", () => {
  it("the fixed behaviour with both premises met: pass", () => {
    expect(judgeHistory(hist(fixed), scenario, []).verdict).toBe("pass");
  });
  it("the stale close unregistering B: fail (no finding registered)", () => {
    expect(judgeHistory(hist(broken), scenario, []).verdict).toBe("fail");
  });
  it("a premise not met: unknown", () => {
    expect(judgeHistory(hist({ ...fixed, connections: { aOpenBefore: false, aOpenAtB: false, bConnected: true } }), scenario, []).verdict).toBe("unknown");
  });
});
