// repro-68187's premise and checks on hand-made histories (no Docker): each met / holding and
// not, with exactly what it observed. No finding is registered (not reproduced on 2026.9.6).
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-68187.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-68187-call-on-forgotten-session");
const reads = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((x) => x.id === id);
  return c && { holds: c.holds, observed: c.observed };
};

type North = NonNullable<Observed["north"]>;
type Rec = North["records"][number];
const call = (seq: number, sessionId: string | null, text: string): Rec => ({ seq, kind: "rpc", rpcMethod: "tools/call", tool: "example_echo", sessionId, args: { text } });
/** As 2026.9.6 did: after-1 POSTed once on the dropped session (404), a new session (one initialize), after-2 works on it. */
const north: North = {
  dropped: ["sess-old"],
  records: [
    call(10, "sess-old", "after-1"),
    { seq: 11, kind: "event", event: "unknown-session", sessionId: "sess-old" },
    { seq: 12, kind: "rpc", rpcMethod: "initialize", sessionId: null },
    { seq: 13, kind: "event", event: "session-created", sessionId: "sess-new" },
    { seq: 14, kind: "rpc", rpcMethod: "tools/list", sessionId: "sess-new" },
    call(15, "sess-new", "after-2"),
  ],
};
const recovery: NonNullable<Observed["recovery"]> = {
  held: true,
  texts: ["after-1", "after-2"],
  last: { text: "after-2", run: "ok", resultIsError: false, result: "north echoed: after-2" },
};
/** Stale for good: every call POSTed on the dropped session, 404, no new session within RECOVER_S. */
const stale: Observed = {
  north: { dropped: ["sess-old"], records: [call(10, "sess-old", "after-1"), { seq: 11, kind: "event", event: "unknown-session", sessionId: "sess-old" }, call(12, "sess-old", "after-2"), { seq: 13, kind: "event", event: "unknown-session", sessionId: "sess-old" }] },
  recovery: { held: false, texts: ["after-1", "after-2"], last: { text: "after-2", run: "ok", resultIsError: true, result: "Streamable HTTP error: Error POSTing to endpoint: Session not found" } },
};

describe("P-68187-call-on-forgotten-session", () => {
  it("met when a request reached north on a session it had dropped", () => {
    expect(premise({ north, recovery })).toEqual({ id: "P-68187-call-on-forgotten-session", met: true, observed: { requestsOnDroppedSessions: 2, unknownSession404s: 1 } });
  });
  it("not met when nothing was dropped (aimed off) or the gateway opened a new session first", () => {
    expect(premise({ north: { dropped: [], records: [call(10, "sess-old", "after-1")] } })).toEqual({ id: "P-68187-call-on-forgotten-session", met: false, observed: { requestsOnDroppedSessions: 0, unknownSession404s: 0 } });
    expect(premise({ north: { dropped: ["sess-old"], records: north.records.slice(2) } })).toEqual({ id: "P-68187-call-on-forgotten-session", met: false, observed: { requestsOnDroppedSessions: 0, unknownSession404s: 0 } });
  });
  it("not observed: not judged (never proven)", () => {
    expect(premise({})).toBeUndefined();
  });
});

describe("R-68187-recovers", () => {
  const id = "R-68187-recovers";
  it("holds when a later call worked on a new session after a new initialize", () => {
    expect(reads({ north, recovery }, id)).toEqual({
      holds: true,
      observed: { within_s: 30, succeeded: true, newInitialize: true, successOnNewSession: true, last: { run: "ok", resultIsError: false, result: "north echoed: after-2" } },
    });
  });
  it("does not hold when no call worked within the bound, or the one that worked was not on a new session", () => {
    expect(reads(stale, id)).toEqual({
      holds: false,
      observed: { within_s: 30, succeeded: false, newInitialize: false, successOnNewSession: false, last: { run: "ok", resultIsError: true, result: "Streamable HTTP error: Error POSTing to endpoint: Session not found" } },
    });
    const onOld: North = { ...north, records: [...north.records.slice(0, 5), call(15, "sess-old", "after-2")] };
    expect(reads({ north: onOld, recovery }, id)).toEqual({
      holds: false,
      observed: { within_s: 30, succeeded: true, newInitialize: true, successOnNewSession: false, last: { run: "ok", resultIsError: false, result: "north echoed: after-2" } },
    });
  });
});

describe("R-68187-no-replay", () => {
  const id = "R-68187-no-replay";
  it("holds when each call reached north at most once", () => {
    expect(reads({ north, recovery }, id)).toEqual({ holds: true, observed: { replayed: [] } });
    expect(reads(stale, id)).toEqual({ holds: true, observed: { replayed: [] } });
  });
  it("does not hold when the call refused on the dead session was POSTed again on the new one", () => {
    const replayed: North = { ...north, records: [...north.records, call(16, "sess-new", "after-1")] };
    expect(reads({ north: replayed, recovery }, id)).toEqual({ holds: false, observed: { replayed: [{ text: "after-1", posts: 2, on: ["dropped session", "new session"] }] } });
  });
});

describe("repro-68187 judged", () => {
  it("recovered without a replay, the premise met: pass", () => {
    expect(judgeHistory(hist({ north, recovery }), scenario, []).verdict).toBe("pass");
  });
  it("stale for good: fail (no finding registered)", () => {
    expect(judgeHistory(hist(stale), scenario, []).verdict).toBe("fail");
  });
  it("aimed off (nothing dropped): unknown", () => {
    expect(judgeHistory(hist({ north: { dropped: [], records: [call(10, "sess-old", "after-1")] }, recovery: { ...recovery, texts: ["after-1"], last: { ...recovery.last, text: "after-1", result: "north echoed: after-1" } } }), scenario, []).verdict).toBe("unknown");
  });
});
