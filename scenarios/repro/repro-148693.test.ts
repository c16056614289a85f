// repro-148693's premise and check over hand-made histories (no Docker): the second connection's
// admission, then connection A's answers and close during the RETIRE_S watch.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-148693.ts";
import { historyOf } from "../../lab/testing/histories.ts";

/** As the runner keeps them: JSON. */
const recorded = (o: Observed): Observations => JSON.parse(JSON.stringify(o)) as Observations;
const check = (o: Observed) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === "R-148693-stale-connection-retired");
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-148693-second-connection");
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));

const EXPECTATION =
  "once a second connection with the same device identity is admitted, the first connection (whose pairing state is no longer current) is retired: closed by the gateway within 10 s, so the node's reconnect can run; left open (its requests refused with any code, served, or unanswered) does not hold";
const admitted: Observed["second"] = { admitted: true, aClosed: null };
/** The report's loop: every node.event on A refused PAIRING_CHANGED (retryable), A never closed. */
const fenced = (n: number) => ({ n, ok: false as const, code: "UNAVAILABLE", detailsCode: "PAIRING_CHANGED", message: "node pairing changed before request dispatch", retryable: true });
const reproduced = (): Observed => ({ second: admitted, watch: { closed: null, answers: Array.from({ length: 10 }, (_, i) => fenced(i + 1)) } });

describe("P-148693-second-connection", () => {
  it("met: B admitted while A was open", () => {
    expect(premise({ second: admitted })).toEqual({ id: "P-148693-second-connection", met: true, observed: { secondAdmitted: true, aOpenWhenAdmitted: true } });
  });

  it("not met aimed off: no second connection", () => {
    expect(premise({ second: { admitted: false, aClosed: null } })).toEqual({ id: "P-148693-second-connection", met: false, observed: { secondAdmitted: false, aOpenWhenAdmitted: true } });
  });

  it("not met when A was already closed when B was admitted", () => {
    expect(premise({ second: { admitted: true, aClosed: { code: 4001, reason: "pairing changed", afterMs: -1 } } })).toEqual({
      id: "P-148693-second-connection",
      met: false,
      observed: { secondAdmitted: true, aOpenWhenAdmitted: false },
    });
  });
});

describe("R-148693-stale-connection-retired", () => {
  it("holds: the gateway closed A within the watch (the fix's 4001)", () => {
    const o: Observed = { second: admitted, watch: { closed: { code: 4001, reason: "pairing changed", afterMs: 14 }, answers: [fenced(1)] } };
    expect(check(o)).toEqual({
      id: "R-148693-stale-connection-retired",
      expectation: EXPECTATION,
      holds: true,
      observed: { within_s: 10, aClosedByGateway: 4001, answers: ["UNAVAILABLE/PAIRING_CHANGED retryable"] },
    });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("fixed?");
  });

  it("does not hold: A left open with every node.event refused PAIRING_CHANGED; the registered signature reads known-finding", () => {
    expect(check(reproduced())).toEqual({
      id: "R-148693-stale-connection-retired",
      expectation: EXPECTATION,
      holds: false,
      observed: { within_s: 10, aClosedByGateway: null, answers: ["UNAVAILABLE/PAIRING_CHANGED retryable"] },
    });
    const j = judgeHistory(hist(reproduced()), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-148693-stale-connection-retired"]);
  });

  it("does not hold: closed by the lab's own tick watch (4000), or left open with answers served or timed out: each its own signature", () => {
    const o: Observed = {
      second: admitted,
      watch: {
        closed: { code: 4000, reason: "tick timeout", afterMs: 9_000 },
        answers: [{ n: 1, ok: true, answer: { ok: true, handled: false } }, { n: 2, ok: false, code: "TIMEOUT", message: "request timed out", retryable: null }, { n: 3, ok: true, answer: {} }],
      },
    };
    expect(check(o)).toMatchObject({ holds: false, observed: { within_s: 10, aClosedByGateway: null, answers: ["served", "TIMEOUT/-"] } });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("fail");
  });
});
