import { describe, expect, it } from "vitest";
import type { FindingRecord } from "../findings/findings.ts";
import { addJudged, addLabWideUnexercised, asRecorded, attemptsDetail, deriveChecks, emptyHistory, judgeHistory, whyChanged, type CheckDef, type JudgedScenario, type ScenarioHistory } from "./history.ts";

const V = "2026.9.6";
const rec = (id: string, signature: unknown, more: Partial<FindingRecord> = {}): FindingRecord => ({ id, expectation: "e", signature, versions: [V], kind: "shortfall", evidence: "x", ...more });
// As the runner records it: with the checks and premises the tests' scenarios declare.
const DECLARED = { checks: ["R-turn-on-node", "R-x", "R-dispatch"], premises: ["P-in-flight", "P-fresh"] };
const hist = (more: Partial<ScenarioHistory> = {}): ScenarioHistory => ({ ...emptyHistory("s", V, { own: [], labWide: [] }), bodyReturned: true, declared: DECLARED, ...more });
const scen = (more: Partial<JudgedScenario> = {}): JudgedScenario => ({ name: "s", ...more });

interface Turn {
  turn?: { ok: boolean; ranOn: string };
}
const turnCheck: CheckDef<Turn> = {
  id: "R-turn-on-node",
  expectation: (h) => `the turn completes on ${h.turn?.ranOn ?? "?"}`,
  judge: (h) => h.turn && { holds: h.turn.ok && h.turn.ranOn === "node-1", observed: { ok: h.turn.ok, ranOn: h.turn.ranOn } },
};
const checks = (...c: CheckDef<Turn>[]) => c as CheckDef<never>[];

describe("judgeHistory: a recorded history to its verdict, the one rule for a run and a judging again", () => {
  it("the body's raw checks are judged against the scenario's records: pass, fail, known finding", () => {
    const h = hist({ body: [{ id: "R-a", expectation: "a", holds: true }, { id: "F-b", expectation: "b", holds: false, observed: { code: 1 } }] });
    expect(judgeHistory(h, scen(), [])).toMatchObject({ verdict: "fail", detail: "F-b: expectation not met and no finding is registered as F-b" });
    const known = judgeHistory(h, scen({ findings: [rec("F-b", { code: 1 })] }), []);
    expect([known.verdict, known.detail]).toEqual(["known-finding", "known-finding F-b"]);
    expect(known.checks.map((c) => c.outcome)).toEqual(["pass", "known-finding"]);
  });

  it("declared checks are functions of the observations, judged after the body's own; their expectation may name what the run used", () => {
    const j = judgeHistory(hist({ observations: { turn: { ok: true, ranOn: "node-1" } } }), scen({ checks: checks(turnCheck) }), []);
    expect(j.verdict).toBe("pass");
    expect(j.derived).toEqual([{ id: "R-turn-on-node", expectation: "the turn completes on node-1", holds: true, observed: { ok: true, ranOn: "node-1" } }]);
    expect(judgeHistory(hist({ observations: { turn: { ok: true, ranOn: "gateway" } } }), scen({ checks: checks(turnCheck) }), [])).toMatchObject({ verdict: "fail" });
  });

  it("a declared check with nothing to read after the body returned, or one that throws, is the lab's: unknown, never a pass", () => {
    const none = judgeHistory(hist(), scen({ checks: checks(turnCheck) }), []);
    expect([none.verdict, none.detail]).toEqual(["unknown", "check R-turn-on-node had nothing to judge: the body returned without observing what it reads"]);
    // The body ended early (it threw): its problem says so; the check not reached adds nothing.
    const cut = judgeHistory(hist({ bodyReturned: false, problems: [{ verdict: "fail", text: "boom" }] }), scen({ checks: checks(turnCheck) }), []);
    expect([cut.verdict, cut.detail]).toEqual(["fail", "boom"]);
    const throws: CheckDef<never> = {
      id: "R-x",
      expectation: "x",
      judge: () => {
        throw new Error("no field y");
      },
    };
    expect(judgeHistory(hist(), scen({ checks: [throws] }), [])).toMatchObject({ verdict: "unknown", detail: "check R-x could not judge what was observed (the lab's own check): no field y" });
  });

  it("a run recorded before a check was declared (it kept the check raw, with ctx.check) is judged from the raw check, with no unknown added", () => {
    const h = hist({ body: [{ id: "R-turn-on-node", expectation: "e", holds: true }] });
    expect(judgeHistory(h, scen({ checks: checks(turnCheck) }), [])).toMatchObject({ verdict: "pass", detail: undefined });
  });

  it("premises as functions of the observations: not met makes the checks moot (unknown); not observed reads never proven", () => {
    const premises = [{ id: "P-in-flight", what: "the turn was in flight", judge: (h: { inFlight?: number }) => (h.inFlight === undefined ? undefined : { met: h.inFlight > 0, observed: { inFlight: h.inFlight } }) }];
    const s = scen({ premises: premises as JudgedScenario["premises"], checks: checks(turnCheck) });
    const met = judgeHistory(hist({ observations: { inFlight: 1, turn: { ok: false, ranOn: "node-1" } } }), s, []);
    expect(met.verdict).toBe("fail");
    expect(met.premises).toEqual([{ id: "P-in-flight", what: "the turn was in flight", met: true, observed: { inFlight: 1 } }]);
    const missed = judgeHistory(hist({ observations: { inFlight: 0, turn: { ok: false, ranOn: "node-1" } } }), s, []);
    expect([missed.verdict, missed.detail]).toEqual(["unknown", 'the lab could not tell: premise P-in-flight not met (the turn was in flight): observed {"inFlight":0}; also moot (premise not met): fail R-turn-on-node']);
    expect(judgeHistory(hist({ observations: { turn: { ok: true, ranOn: "node-1" } } }), s, [])).toMatchObject({ verdict: "unknown", detail: "the lab could not tell: premise P-in-flight was never proven (the turn was in flight)" });
  });

  it("a body that stopped at a step (ctx.proceed): the step's check decides; the checks after it were not reached, not unknown", () => {
    const step: CheckDef<{ dispatch?: string }> = { id: "R-dispatch", expectation: "the dispatch is active", judge: (h) => h.dispatch !== undefined ? { holds: h.dispatch === "active", observed: { state: h.dispatch } } : undefined };
    const s = scen({ checks: [step, turnCheck] as CheckDef<never>[], findings: [rec("F-unused", { x: 1 })] });
    const stopped = judgeHistory(hist({ observations: { dispatch: "local" }, stopped: "R-dispatch" }), s, []);
    expect([stopped.verdict, stopped.detail]).toEqual(["fail", "R-dispatch: expectation not met and no finding is registered as R-dispatch"]);
    expect(stopped.unexercised).toEqual([]); // a body that stopped early exercised nothing after the step
    // The step's shortfall is a registered finding: that finding, not a fail.
    const known = judgeHistory(hist({ observations: { dispatch: "local" }, stopped: "R-dispatch" }), scen({ checks: [step, turnCheck] as CheckDef<never>[], findings: [rec("R-dispatch", { state: "local" })] }), []);
    expect(known.verdict).toBe("known-finding");
    // Judged again with a check that now holds (or reads nothing): nothing decides: unknown, never a pass.
    const corrected = judgeHistory(hist({ observations: { dispatch: "active" }, stopped: "R-dispatch" }), s, []);
    expect([corrected.verdict, corrected.detail]).toEqual(["unknown", "the lab could not tell: the body stopped at R-dispatch, which holds as judged now, so what came after it was never run"]);
    // A premise the body stopped at: unmet is unknown (the lab could not set the scene).
    const premises = [{ id: "P-fresh", what: "the node had no bundle", judge: (h: { bundles?: number }) => (h.bundles === undefined ? undefined : { met: h.bundles === 0, observed: { bundles: h.bundles } }) }];
    const p = judgeHistory(hist({ observations: { bundles: 1 }, stopped: "P-fresh" }), scen({ premises: premises as JudgedScenario["premises"], checks: checks(turnCheck) }), []);
    expect([p.verdict, p.detail]).toEqual(["unknown", 'the lab could not tell: premise P-fresh not met (the node had no bundle): observed {"bundles":1}']);
  });

  it("a check or premise declared after the run was recorded has nothing to read: not judged, and said (a stored run judged again keeps its verdict)", () => {
    const s = scen({ checks: checks(turnCheck), premises: [{ id: "P-fresh", what: "fresh", judge: () => undefined }] });
    const old = judgeHistory(hist({ declared: { checks: [], premises: [] } }), s, []);
    expect([old.verdict, old.detail]).toEqual(["pass", "declared after this run was recorded, so not judged: R-turn-on-node, P-fresh"]);
    // A history kept before `declared` was recorded: what it judged then counts as declared then.
    const legacy = { ...hist({ derived: [{ id: "R-turn-on-node", expectation: "e", holds: true }] }), declared: undefined, format: 1 as const };
    // A current history with no `declared` (a hand-made one): everything declared now counts.
    expect(judgeHistory({ ...hist(), declared: undefined }, s, [])).toMatchObject({ verdict: "unknown" });
    expect(judgeHistory(legacy, s, [])).toMatchObject({ verdict: "unknown", detail: "check R-turn-on-node had nothing to judge: the body returned without observing what it reads; also declared after this run was recorded, so not judged: P-fresh" });
  });

  it("a premise proven with ctx.premise that the scenario does not declare is not met", () => {
    const j = judgeHistory(hist({ premises: [{ id: "P-stray", met: true }] }), scen(), []);
    expect(j.premises).toEqual([{ id: "P-stray", what: "not declared in the scenario's premises", met: false, observed: undefined }]);
    expect(j.verdict).toBe("unknown");
  });

  it("a starved machine turns a fail or a fixed? into unknown; an interrupted run a fail; a stall is said last", () => {
    const failing = hist({ body: [{ id: "R-a", expectation: "a", holds: false, observed: 1 }] });
    expect(judgeHistory({ ...failing, busy: "load 9 on 2 cores" }, scen(), []).detail).toMatch(/^the lab could not tell: load 9 on 2 cores while it ran, so its fail is not charged to OpenClaw: R-a: /);
    expect(judgeHistory({ ...failing, interrupted: true }, scen(), []).verdict).toBe("unknown");
    expect(judgeHistory({ ...hist({ body: [{ id: "F-a", expectation: "a", holds: true }] }), busy: "b" }, scen({ findings: [rec("F-a", 1)] }), []).verdict).toBe("unknown");
    expect(judgeHistory({ ...hist(), stall: "a stall of 2 s" }, scen(), []).detail).toBe("a stall of 2 s");
  });

  it("evidence checks: judged against the scenario's and the lab-wide records; a lab-wide record not seen in one window is no fixed?", () => {
    const j = judgeHistory(hist({ evidence: [{ check: "protocol", id: "E-drift", expectation: "d", holds: true }] }), scen(), [rec("E-drift", 1)]);
    expect(j.checks[0]).toMatchObject({ findingId: "E-drift", outcome: "pass", source: "evidence", scope: "lab" });
    expect(j.verdict).toBe("pass");
  });

  it("a record no check judged is unexercised only when the body returned", () => {
    const s = scen({ findings: [rec("F-gone", 1)] });
    expect(judgeHistory(hist(), s, []).unexercised.map((f) => f.id)).toEqual(["F-gone"]);
    expect(judgeHistory(hist({ bodyReturned: false }), s, []).unexercised).toEqual([]);
  });

  it("what a body records is kept as JSON, so a check reads the same now and from the stored history", () => {
    expect(asRecorded({ at: new Date(0), gone: undefined, n: 1 })).toEqual({ at: "1970-01-01T00:00:00.000Z", n: 1 });
    expect(deriveChecks(checks(turnCheck), { turn: { ok: true, ranOn: "node-1" } }, true).checks[0]!.holds).toBe(true);
  });
});

describe("whyChanged: why a verdict reads differently now", () => {
  it("a record added, changed or removed, and a check that reads the history differently now", () => {
    const h = hist({ body: [{ id: "F-b", expectation: "b", holds: false, observed: 2 }], observations: { turn: { ok: true, ranOn: "gateway" } } });
    const stored = { ...h, derived: judgeHistory(h, scen({ checks: checks(turnCheck) }), []).derived };
    const added = scen({ findings: [rec("F-b", 2)], checks: checks(turnCheck) });
    expect(whyChanged(stored, judgeHistory(stored, added, []), added, [])).toEqual(["F-b: fail -> known-finding (record F-b added)"]);
    const looser: CheckDef<Turn> = { ...turnCheck, judge: (x) => x.turn && { holds: x.turn.ok, observed: { ok: x.turn.ok, ranOn: x.turn.ranOn } } };
    const changed = scen({ checks: checks(looser) });
    expect(whyChanged(stored, judgeHistory(stored, changed, []), changed, [])).toEqual(["R-turn-on-node: fail -> pass (check R-turn-on-node reads the history differently now (holds false -> true))"]);
    const withRecord = { ...stored, registry: { own: [rec("F-b", 2)], labWide: [] } };
    const resigned = scen({ findings: [rec("F-b", 3)], checks: checks(turnCheck) });
    expect(whyChanged(withRecord, judgeHistory(withRecord, resigned, []), resigned, [])).toEqual(["F-b: known-finding -> fail (record F-b changed)"]);
  });

  it("no check reads differently but the lab's own notes do: they are said, before and now", () => {
    const h = hist();
    const s = scen({ checks: checks(turnCheck) });
    expect(whyChanged(h, judgeHistory(h, s, []), s, [])).toEqual(['no check\'s outcome changed; the lab\'s own notes did: before "", now "check R-turn-on-node had nothing to judge: the body returned without observing what it reads"']);
  });

  it("nothing changed: nothing said", () => {
    const h = hist({ body: [{ id: "R-a", expectation: "a", holds: true }] });
    expect(whyChanged(h, judgeHistory(h, scen(), []), scen(), [])).toEqual([]);
  });

  it("a premise whose judge reads the history differently now than the run recorded it is named", () => {
    const premises = [{ id: "P-in-flight", what: "in flight", judge: (x: { inFlight?: number }) => (x.inFlight === undefined ? undefined : { met: x.inFlight > 0 }) }] as JudgedScenario["premises"];
    const h = hist({ observations: { inFlight: 1 } });
    const s = scen({ premises });
    const why = whyChanged(h, judgeHistory(h, s, []), s, [], { verdict: "unknown", detail: "the lab could not tell: premise P-in-flight not met", premises: [{ id: "P-in-flight", met: false }] });
    expect(why).toEqual(["premise P-in-flight: not met -> met (its judge reads the history differently now)"]);
  });
});

describe("addJudged / addLabWideUnexercised: a judged scenario into its run's record", () => {
  it("checks that did not pass are findings; a lab-wide record counts as exercised only where seen; own records no check judged are unexercised; lab-wide ones no scenario saw, once", () => {
    const rec0 = { id: "r", startedAt: "t", plan: ["s"], scenarios: [{ name: "s", verdict: "fail" as const, seconds: 1 }] } as unknown as Parameters<typeof addJudged>[0];
    const j = judgeHistory(hist({ body: [{ id: "R-a", expectation: "a", holds: false }], evidence: [{ check: "c", id: "E-held", expectation: "e", holds: true }] }), scen({ findings: [rec("F-unused", 1)] }), [rec("E-held", 1)]);
    addJudged(rec0, "s", j);
    expect([rec0.findings?.map((f) => f.findingId), rec0.exercised, rec0.unexercised]).toEqual([["R-a"], ["R-a"], [{ id: "F-unused", scenario: "s" }]]);
    expect(addLabWideUnexercised(rec0, [rec("E-held", 1)]).map((f) => f.id)).toEqual(["E-held"]);
    expect(addLabWideUnexercised(rec0, [rec("E-held", 1)])).toEqual([]); // once
    expect(rec0.unexercised).toEqual([{ id: "F-unused", scenario: "s" }, { id: "E-held" }]);
  });
});

describe("attemptsDetail", () => {
  it("each earlier attempt's verdict and first line, then this one's detail", () => {
    expect(attemptsDetail(2, 2, [{ verdict: "unknown", detail: "busy\nmore" }], "known-finding F-a")).toBe("attempt 2 of 2: attempt 1 read unknown (busy); known-finding F-a");
  });
});
