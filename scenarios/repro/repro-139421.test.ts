// repro-139421's premise and check over hand-made histories (no Docker): the node's requests
// around the revocation, the connection's close, and a reconnect with the stored token.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-139421.ts";
import { historyOf } from "../../lab/testing/histories.ts";

/** As the runner keeps them: JSON. */
const recorded = (o: Observed): Observations => JSON.parse(JSON.stringify(o)) as Observations;
const check = (o: Observed) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === "R-139421-revoked-connection-ends");
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-139421-token-revoked");
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));

const T0 = Date.parse("2026-12-02T02:46:39.000Z");
/** A node.event every 20 ms from T0; served up to (not including) `servedUntil`, then refused or unanswered. */
const requests = (count: number, servedUntil: number, after: boolean | undefined = undefined) =>
  Array.from({ length: count }, (_, n) => ({ n, t: T0 + n * 20, ...(T0 + n * 20 < servedUntil ? { served: true } : after === undefined ? {} : { served: after }) }));

/** 2026.9.6: revoked at T0+500 (answered 3 ms later), nothing served after, closed 4001 17 ms after the answer. */
const fixedRun = (): NonNullable<Observed["revoke"]> => ({
  answeredAt: T0 + 503,
  revokedAtMs: T0 + 500,
  // Served up to n = 24 (sent at T0+480, before the cut: not judged); n = 25, sent at the cut, unanswered.
  requests: requests(26, T0 + 500),
  closed: { code: 4001, reason: "device removed", t: T0 + 520 },
});
const EXPECTATION = "once device.token.revoke of a node's token has answered, no request the node's open connection sends is served, and the gateway closes that connection within 5 s";

describe("P-139421-token-revoked", () => {
  it("met: the stored token's reconnect refused for the token (an AUTH_* details code)", () => {
    const refused = { code: "INVALID_REQUEST", detailsCode: "AUTH_DEVICE_TOKEN_MISMATCH" };
    expect(premise({ reconnect: refused })).toEqual({ id: "P-139421-token-revoked", met: true, observed: { reconnectWithStoredToken: refused } });
  });

  it("not met aimed off: the stored token still admitted the node", () => {
    expect(premise({ reconnect: "admitted" })).toEqual({ id: "P-139421-token-revoked", met: false, observed: { reconnectWithStoredToken: "admitted" } });
  });

  it("not met when the reconnect failed for something else than its token (a time-out on a loaded machine)", () => {
    expect(premise({ reconnect: { code: "TIMEOUT", detailsCode: null } })).toEqual({ id: "P-139421-token-revoked", met: false, observed: { reconnectWithStoredToken: { code: "TIMEOUT", detailsCode: null } } });
  });
});

describe("R-139421-revoked-connection-ends", () => {
  it("holds: nothing sent at or after revokedAtMs served, the connection closed within 5 s", () => {
    expect(check({ revoke: fixedRun() })).toEqual({ id: "R-139421-revoked-connection-ends", expectation: EXPECTATION, holds: true, observed: { within_s: 5, servedAfterRevoke: 0, closedByGateway: 4001, closedWithin: true } });
    expect(judgeHistory(hist({ reconnect: { code: "INVALID_REQUEST", detailsCode: "AUTH_DEVICE_TOKEN_MISMATCH" }, revoke: fixedRun() }), scenario, []).verdict).toBe("pass");
  });

  it("does not hold: requests sent after the revocation served and the connection left open", () => {
    expect(check({ revoke: { ...fixedRun(), requests: requests(40, T0 + 700, false), closed: null } })).toEqual({
      id: "R-139421-revoked-connection-ends",
      expectation: EXPECTATION,
      holds: false,
      observed: { within_s: 5, servedAfterRevoke: 10, closedByGateway: null, closedWithin: false },
    });
  });

  it("without revokedAtMs the cut is the revoke's answer; a close past 5 s does not hold", () => {
    // No revokedAtMs in the answer (JSON drops the undefined).
    const noGatewayTime = { ...fixedRun(), revokedAtMs: undefined };
    // Served up to T0+503: n = 25 (sent at T0+500) is after the gateway's time but before the answer: not judged here.
    expect(check({ revoke: { ...noGatewayTime, requests: requests(30, T0 + 503, false) } })?.observed).toEqual({ within_s: 5, servedAfterRevoke: 0, closedByGateway: 4001, closedWithin: true });
    expect(check({ revoke: { ...noGatewayTime, closed: { code: 4001, reason: "device removed", t: T0 + 503 + 6_000 } } })).toMatchObject({
      holds: false,
      observed: { within_s: 5, servedAfterRevoke: 0, closedByGateway: 4001, closedWithin: false },
    });
  });
});
