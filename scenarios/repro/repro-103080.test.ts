// repro-103080's checks and premises on hand-made histories (no Docker): each holds on one and not
// on another, with the exact signature; the registered finding reads known on its signature.
import { describe, expect, it } from "vitest";
import { judgeHistory, type Observations } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-103080.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf as premiseOfScenario } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);
const premiseOf = (id: string, obs: Observations) => premiseOfScenario(scenario, id, obs);

const NODE_ID = "54b5a44f843a5853112165492720a49ad7db3e2a82bd1dec30d57f87c0b4a5ae";
/** The gateway's answer to node.invoke, as 2026.9.6 sends it (fixtures/findings/R-103079-oversized-timeout-clamped.json). */
const answer = (command: string, payload: unknown) => ({ ok: true, nodeId: NODE_ID, command, payload, payloadJSON: JSON.stringify(payload) });
const LATE = { fleetlab: "late answer", heldS: 40 };
const WHICH = { path: "/usr/bin/git", fleetlab: "oversized" };
const timedOut = { ok: false as const, code: "UNAVAILABLE", detailsCode: "TIMEOUT", message: "node invoke timed out" };

const zeroHold = { requestSeq: 21, node: { timeoutMs: 0, outcome: "withheld" as const }, endedDuringHold: null };
const zeroAnswer = { ack: { ok: true }, final: { answer: answer("system.notify", LATE) } };
const oversized = { node: { timeoutMs: 2_147_483_647, outcome: "answered" as const }, operatorGot: answer("system.which", WHICH) };
const pong = {
  dir: "node->gw" as const,
  ruleFirstFired: { seq: 41, t: 1796342960000, conn: "c2" },
  control: [
    { seq: 40, dir: "gw->node" as const, opcode: 9, action: "forward" as const },
    { seq: 41, dir: "node->gw" as const, opcode: 10, action: "drop" as const },
    { seq: 55, dir: "gw->node" as const, opcode: 9, action: "forward" as const },
    { seq: 60, dir: "gw->node" as const, opcode: 8, action: "forward" as const },
  ],
  entry: { connected: false, paired: true },
  closed: { code: 1006, reason: "" },
};
/** A run where every check holds and both premises are met. */
const good = { zeroHold, zeroAnswer, oversized, pong } satisfies Observed;

describe("repro-103080: timeoutMs 0 has no deadline", () => {
  const id = "R-103079-zero-timeout-no-deadline";
  it("holds: the invoke reached the node with no deadline, stayed open through the hold and ended with the node's late answer", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ hold_s: 40, within_s: 10, nodeGotDeadline: "none", duringHold: "open", afterAnswer: "the node's answer", ackIgnored: false });
    // No timeoutMs at all on the node is no deadline either.
    expect(checkOf(id, { ...good, zeroHold: { ...zeroHold, node: { outcome: "withheld" } } })?.holds).toBe(true);
  });

  it("does not hold: cut by a default bound during the hold, with a deadline on the node", () => {
    const cut = { answer: timedOut };
    const c = checkOf(id, { ...good, zeroHold: { ...zeroHold, node: { timeoutMs: 30_000, outcome: "withheld" }, endedDuringHold: cut }, zeroAnswer: { ack: null, final: cut } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ hold_s: 40, within_s: 10, nodeGotDeadline: "a deadline", duringHold: "UNAVAILABLE/TIMEOUT", afterAnswer: "ended before", ackIgnored: false });
  });

  it("does not hold: still open after the node answered, its answer ignored by the gateway", () => {
    const c = checkOf(id, { ...good, zeroAnswer: { ack: { ok: true, ignored: true }, final: null } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ hold_s: 40, within_s: 10, nodeGotDeadline: "none", duringHold: "open", afterAnswer: "open", ackIgnored: true });
  });

  it("does not hold: another answer than the node's", () => {
    const c = checkOf(id, { ...good, zeroAnswer: { ack: null, final: { answer: answer("system.notify", { other: 1 }) } } });
    expect([c?.holds, (c?.observed as { afterAnswer: string }).afterAnswer]).toEqual([false, "another answer"]);
  });
});

describe("repro-103080: an oversized timeoutMs reaches the node timer-safe", () => {
  const id = "R-103079-oversized-timeout-clamped";
  it("holds: clamped to the timer range and the node's answer came back", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ nodeGot: "timer-safe", operatorGot: "the node's answer" });
  });

  it("holds: refused before dispatch", () => {
    const c = checkOf(id, { ...good, oversized: { node: null, operatorGot: { ok: false, code: "INVALID_REQUEST", message: "timeoutMs too large" } } });
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ nodeGot: "nothing", operatorGot: "INVALID_REQUEST/-" });
  });

  it("does not hold: sent to the node unclamped (the registered finding's signature), known-finding", () => {
    const unclamped = { ...good, oversized: { node: { timeoutMs: 2_999_999_955, outcome: "answered" as const }, operatorGot: answer("system.which", WHICH) } };
    const c = checkOf(id, unclamped);
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ nodeGot: "above the timer range", operatorGot: "the node's answer" });
    const j = judgeHistory(hist(unclamped), scenario, []);
    expect(j.checks.find((x) => x.findingId === id)?.outcome).toBe("known-finding");
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-103079-oversized-timeout-clamped"]);
  });

  it("does not hold: a refusal after dispatch", () => {
    const c = checkOf(id, { ...good, oversized: { node: { timeoutMs: 2_999_999_955, outcome: "answered" as const }, operatorGot: timedOut } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ nodeGot: "above the timer range", operatorGot: "UNAVAILABLE/TIMEOUT" });
  });
});

describe("repro-103080: a node that misses pongs is shown offline", () => {
  const id = "R-103093-missed-pong-offline";
  it("holds: node.list shows it disconnected and still paired, the gateway ended the connection", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 90, shownDisconnected: true, connection: "ended by the gateway", paired: true });
  });

  it("does not hold: still connected at the bound, the connection open", () => {
    const c = checkOf(id, { ...good, pong: { ...pong, entry: { connected: true, paired: true }, closed: null } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 90, shownDisconnected: false, connection: "open", paired: true });
  });

  it("does not hold: the node closed the connection itself, and it is not listed", () => {
    const c = checkOf(id, { ...good, pong: { ...pong, control: [...pong.control, { seq: 61, dir: "node->gw" as const, opcode: 8, action: "forward" as const }], entry: null } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 90, shownDisconnected: false, connection: "closed by the node", paired: null });
  });
});

describe("repro-103080: premises", () => {
  it("P-103079-invoke-withheld: met when the invoke was on the tap and the node withheld it; unmet when it answered at once", () => {
    expect(premiseOf("P-103079-invoke-withheld", good)).toEqual({ id: "P-103079-invoke-withheld", met: true, observed: { onTap: true, nodeGotIt: true, nodeOutcome: "withheld" } });
    expect(premiseOf("P-103079-invoke-withheld", { ...good, zeroHold: { ...zeroHold, node: { timeoutMs: 0, outcome: "answered" } } })).toEqual({
      id: "P-103079-invoke-withheld",
      met: false,
      observed: { onTap: true, nodeGotIt: true, nodeOutcome: "answered" },
    });
    expect(premiseOf("P-103079-invoke-withheld", { ...good, zeroHold: { requestSeq: null, node: null, endedDuringHold: null } })?.observed).toEqual({ onTap: false, nodeGotIt: false, nodeOutcome: null });
  });

  it("P-103093-pongs-withheld: met when pings came and the node's pongs were dropped; unmet when the rule dropped nothing (aimed off)", () => {
    expect(premiseOf("P-103093-pongs-withheld", good)).toEqual({ id: "P-103093-pongs-withheld", met: true, observed: { pings: true, pongsDropped: true, nodeClosedItself: false } });
    const aimedOff = { ...pong, dir: "gw->node" as const, ruleFirstFired: null, control: pong.control.map((f) => ({ ...f, action: "forward" as const })) };
    expect(premiseOf("P-103093-pongs-withheld", { ...good, pong: aimedOff })).toEqual({ id: "P-103093-pongs-withheld", met: false, observed: { pings: true, pongsDropped: false, nodeClosedItself: false } });
  });

  it("a run where all hold reads fixed? (the registered finding did not show); nothing observed reads unknown, never pass", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("fixed?");
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});
