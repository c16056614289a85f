// repro-111961's checks on hand-made histories (no Docker): each holds on one and not on another,
// with the exact signature.
import { describe, expect, it } from "vitest";
import { judgeHistory, type Observations } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-111961.ts";
import { checkOf as checkOfScenario, historyOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);

const rpc = (seq: number, rpcMethod: string) => ({ seq, kind: "rpc" as const, rpcMethod });
const worked = { text: "back-5", observed: { run: "ok", offered: true, southCalls: 1, resultIsError: false, result: "south echoed: back-5" } };
const notOffered = { text: "back-9", observed: { run: "ok", offered: false, southCalls: 0, resultIsError: true, result: "Tool south__example_echo not found" } };
const good = {
  recovery: { last: worked, south: [rpc(7, "initialize"), rpc(8, "notifications/initialized"), rpc(9, "tools/list"), rpc(10, "tools/call")] },
  north: [{ seq: 30, kind: "http" as const, rpcMethod: null }],
} satisfies Observed;

describe("repro-111961: the failed server's tool is offered and works once it is back", () => {
  const id = "R-111961-recovers";
  it("holds: a turn was offered south__example_echo, its call reached south once and returned south's answer", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ within_s: 30, offered: true, southCalls: 1, result: "south echoed: back-5", southListedAfterReturn: true });
  });

  it("does not hold: the last turn at the bound was still not offered the tool, south never re-listed", () => {
    const c = checkOf(id, { ...good, recovery: { last: notOffered, south: [] } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 30, offered: false, southCalls: 0, result: "Tool south__example_echo not found", southListedAfterReturn: false });
  });

  it("does not hold: offered, but the answer is not this turn's (or south saw the call twice)", () => {
    expect(checkOf(id, { ...good, recovery: { ...good.recovery, last: { ...worked, text: "back-6" } } })?.holds).toBe(false);
    expect(checkOf(id, { ...good, recovery: { ...good.recovery, last: { ...worked, observed: { ...worked.observed, southCalls: 2 } } } })?.holds).toBe(false);
  });
});

describe("repro-111961: the healthy server is not re-listed", () => {
  const id = "R-111961-north-not-relisted";
  it("holds: no initialize or tools/list at north after south's return", () => {
    const c = checkOf(id, good);
    expect(c?.holds).toBe(true);
    expect(c?.observed).toEqual({ northInitialize: 0, northToolsList: 0 });
  });

  it("does not hold: north initialized and listed again", () => {
    const c = checkOf(id, { ...good, north: [rpc(31, "initialize"), rpc(32, "tools/list"), rpc(33, "tools/call"), rpc(34, "tools/list")] });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ northInitialize: 1, northToolsList: 2 });
  });
});

describe("repro-111961: verdicts", () => {
  it("a run where both hold reads pass; one the body ended before (nothing observed) reads unknown when it returned", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("pass");
    expect(judgeHistory(hist({ recovery: good.recovery }), scenario, [])).toMatchObject({ verdict: "unknown", detail: "check R-111961-north-not-relisted had nothing to judge: the body returned without observing what it reads" });
  });
});
