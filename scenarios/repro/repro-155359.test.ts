// repro-155359's premises and check on hand-made histories (no Docker): each met / holding and
// not, with exactly what it observed, and the registered finding read as a known finding.
import { describe, expect, it } from "vitest";
import { asRecorded, deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-155359.ts";
import { historyOf } from "../../lab/testing/histories.ts";

const recorded = (o: Observed): Observations => asRecorded({ ...o });
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));
const premise = (o: Observed, id: string) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === id);
const check = (o: Observed, id: string) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === id);
/** Check `id` over `o`: whether it holds and exactly what it observed. */
const reads = (o: Observed, id: string) => {
  const c = check(o, id);
  return c && { holds: c.holds, observed: c.observed };
};

type Patch = NonNullable<Observed["patches"]>["patches"][number];
const UNAVAILABLE = { ok: false as const, code: "UNAVAILABLE", message: "Session patch failed unexpectedly. Retry the request." };
const ok = (n: number, phase: Patch["phase"], ms = 3_400): Patch => ({ n, phase, ms });
const refused = (n: number): Patch => ({ n, phase: "during", ms: 5_010, refused: UNAVAILABLE });

const T = 1_764_720_000_000;
/** As 2026.9.6 was seen to do: three patches in a row waited SQLite's 5 s busy timeout and were refused (the loop stops at the first). */
const seen: Observed = {
  slowDisk: { delayedCalls: 1_843 },
  patches: { turn: { status: "ok" }, patches: [ok(1, "during"), ok(2, "during"), refused(3), ok(4, "after"), ok(5, "after"), ok(6, "after")] },
  gatewayLog: {
    patchedUntil: T + 70_000,
    lockLines: [
      { at: T + 64_000, line: '[sqlite] SQLite transaction lock wait failed {"operation":"session.entry-replacements","waitedMs":5003}' },
      { at: T + 64_001, line: "[gateway] sessions.patch failed: Error: database is locked operation=session.entry-replacements" },
      // The abort's own writes after the last patch are not the signature's.
      { at: T + 75_000, line: "[sqlite] SQLITE_BUSY: database is locked operation=agent.abort" },
    ],
  },
};
const healthy: Observed = {
  slowDisk: { delayedCalls: 1_210 },
  patches: { turn: { status: "ok" }, patches: [ok(1, "during"), ok(2, "during"), ok(3, "after"), ok(4, "after"), ok(5, "after")] },
  gatewayLog: { patchedUntil: T + 60_000, lockLines: [] },
};

describe("P-155359-writes-delayed", () => {
  const id = "P-155359-writes-delayed";
  it("met when strace counted delayed writes", () => {
    expect(premise(seen, id)).toEqual({ id, met: true, observed: { delayedCalls: 1_843, delayMs: 100 } });
  });
  it("not met with no write delayed (aimed off) or no count reported", () => {
    expect(premise({ slowDisk: { delayedCalls: 0 } }, id)).toEqual({ id, met: false, observed: { delayedCalls: 0, delayMs: 100 } });
    expect(premise({ slowDisk: { delayedCalls: null } }, id)).toEqual({ id, met: false, observed: { delayedCalls: null, delayMs: 100 } });
  });
  it("not observed: not judged (never proven)", () => {
    expect(premise({}, id)).toBeUndefined();
  });
});

describe("P-155359-patches-beside-turn", () => {
  const id = "P-155359-patches-beside-turn";
  it("met when a patch ran while the turn was in flight", () => {
    expect(premise(seen, id)).toEqual({ id, met: true, observed: { patchesDuringTurn: 3, turn: "ok" } });
  });
  it("not met when the patches all came after the turn's end (aimed off); a failed wait is said", () => {
    const behind: Observed = { patches: { turn: { status: "ok" }, patches: [ok(1, "after"), ok(2, "after"), ok(3, "after")] } };
    expect(premise(behind, id)).toEqual({ id, met: false, observed: { patchesDuringTurn: 0, turn: "ok" } });
    expect(premise({ patches: { turn: { waitFailed: "agent.wait timed out after 110000 ms" }, patches: [] } }, id)).toEqual({ id, met: false, observed: { patchesDuringTurn: 0, turn: "agent.wait failed: agent.wait timed out after 110000 ms" } });
    expect(premise({ patches: { turn: { waitFailed: null }, patches: [ok(1, "during")] } }, id)).toEqual({ id, met: true, observed: { patchesDuringTurn: 1, turn: "agent.wait failed: ?" } });
  });
});

describe("R-155359-patch-beside-slow-write", () => {
  const id = "R-155359-patch-beside-slow-write";
  it("does not hold when a patch was refused: the registered signature (the gateway's log up to 1 s after the last patch)", () => {
    expect(check(seen, id)).toEqual({
      id,
      expectation: "every sessions.patch during and right after an agent turn on slow state storage (100 ms per write) succeeds, however slowly; none is refused because another write held the database past SQLite's 5 s busy timeout",
      holds: false,
      observed: {
        refused: [{ code: "UNAVAILABLE", message: "Session patch failed unexpectedly. Retry the request." }],
        gatewayLog: { says: ["SQLite transaction lock wait failed", "database is locked"], operations: ["session.entry-replacements"] },
      },
    });
  });
  it("each distinct refusal once, its details code kept; no lock line logged is said", () => {
    const twice: Observed = {
      patches: { turn: { status: "ok" }, patches: [refused(1), refused(2), { n: 3, phase: "after", ms: 5_000, refused: { ok: false, code: "UNAVAILABLE", detailsCode: "SQLITE_BUSY", message: "busy" } }] },
      gatewayLog: { patchedUntil: T, lockLines: [] },
    };
    expect(reads(twice, id)).toEqual({
      holds: false,
      observed: { refused: [{ code: "UNAVAILABLE", message: "Session patch failed unexpectedly. Retry the request." }, { code: "UNAVAILABLE", detailsCode: "SQLITE_BUSY", message: "busy" }], gatewayLog: "no lock failure logged" },
    });
  });
  it("holds when every patch succeeded", () => {
    expect(reads(healthy, id)).toEqual({ holds: true, observed: { refused: [], gatewayLog: "no lock failure logged" } });
    // A lock line without a refused patch: said, but every patch succeeded.
    const logged: Observed = { ...healthy, gatewayLog: { patchedUntil: T, lockLines: [{ at: T - 10, line: "SQLITE_BUSY operation: agent.write" }] } };
    expect(reads(logged, id)).toEqual({ holds: true, observed: { refused: [], gatewayLog: { says: ["SQLITE_BUSY"], operations: ["agent.write"] } } });
  });
});

describe("repro-155359 judged", () => {
  it("the registered signature, with both premises met, reads known-finding", () => {
    expect(judgeHistory(hist(seen), scenario, []).verdict).toBe("known-finding");
  });
  it("every patch succeeded: the registered finding reads fixed?", () => {
    expect(judgeHistory(hist(healthy), scenario, []).verdict).toBe("fixed?");
  });
  it("a premise not met makes it unknown", () => {
    expect(judgeHistory(hist({ ...seen, slowDisk: { delayedCalls: 0 } }), scenario, []).verdict).toBe("unknown");
  });
});
