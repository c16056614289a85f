// repro-137355's checks (one per restart kind) on hand-made histories (no Docker): each holds on one
// and not on another, with the exact signature; the registered findings read known on theirs.
import { describe, expect, it } from "vitest";
import { judgeHistory, type Observations } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-137355.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf } from "../../lab/testing/histories.ts";

const hist = (observations: Observations) => historyOf(scenario, observations);
const checkOf = (id: string, obs: Observations) => checkOfScenario(scenario, id, obs);

const want = "fleetlab-ok: tok-5e1f0a9c new message after the restart";
const retryWant = "fleetlab-ok: tok-77b2c3d4 retry after the refused message";
const answered = {
  accepted: { runId: "run-1", status: "started", sentAt: 1796342932790 },
  end: { status: "ok", text: want },
  want,
  assistantTexts: ["fleetlab-ok: tok-0a1b2c3d task in flight when the gateway goes down", want],
  retry: null,
};
/** 2026.9.4 (run 20261130-124642-d013): accepted, its run ends ok, nothing answers it; a retry is answered. */
const dropped = {
  ...answered,
  assistantTexts: ["fleetlab-ok: tok-0a1b2c3d task in flight when the gateway goes down"],
  retry: { want: retryWant, sent: { runId: "run-2", status: "started" }, end: { status: "ok", text: retryWant } },
};
const changed = { ok: false as const, code: "UNAVAILABLE", message: 'Session "agent:main:fleetlab-3fa2c1" changed while starting work. Retry.' };
/** Both variants' first turn in flight when the gateway went down (P-137355-in-flight). */
const inFlight = { restart: { listed: true, completed: false }, sigkill: { listed: true, completed: false } };
const good = { restart: answered, sigkill: answered, inFlight } satisfies Observed;
const signature = { within_s: 60, chatSend: "started", run: "ok", runError: null, answered: false, changedWhileStartingWork: false, retry: "answered" };

describe("repro-137355: the new message after a restart is answered", () => {
  for (const v of ["restart", "sigkill"] as const) {
    const id = `R-137355-${v}-next-message`;
    it(`${v}: holds when it is accepted and its answer is in the history`, () => {
      const c = checkOf(id, good);
      expect(c?.holds).toBe(true);
      expect(c?.observed).toEqual({ within_s: 60, chatSend: "started", run: "ok", runError: null, answered: true, changedWhileStartingWork: false });
    });

    it(`${v}: does not hold when it is dropped (the registered signature)`, () => {
      const c = checkOf(id, { ...good, [v]: dropped });
      expect(c?.holds).toBe(false);
      expect(c?.observed).toEqual(signature);
    });

    it(`${v}: does not hold when refused "changed while starting work" (#137355), its retry refused too`, () => {
      const refusedRun = { ...answered, accepted: changed, end: null, assistantTexts: [], retry: { want: retryWant, sent: changed, end: null } };
      const c = checkOf(id, { ...good, [v]: refusedRun });
      expect(c?.holds).toBe(false);
      const said = 'UNAVAILABLE: Session "agent:main:fleetlab-<id>" changed while starting work. Retry.';
      expect(c?.observed).toEqual({ within_s: 60, chatSend: said, run: null, runError: null, answered: false, changedWhileStartingWork: true, retry: said });
    });
  }

  it("the run's error counts: 'changed while starting work' there, though the answer came", () => {
    const c = checkOf("R-137355-restart-next-message", { ...good, restart: { ...answered, end: { status: "error", error: { message: "Session changed while starting work. Retry." } } } });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toEqual({ within_s: 60, chatSend: "started", run: "error", runError: '{"message":"Session changed while starting work. Retry."}', answered: true, changedWhileStartingWork: true });
  });

  it("a retry that ends otherwise is said with its status and error", () => {
    const c = checkOf("R-137355-sigkill-next-message", { ...good, sigkill: { ...dropped, retry: { ...dropped.retry, end: { status: "timeout" } } } });
    expect((c?.observed as { retry: string }).retry).toBe("timeout: null");
  });
});

describe("repro-137355: verdicts", () => {
  it("both variants showing the registered signature read known-finding", () => {
    const j = judgeHistory(hist({ restart: dropped, sigkill: dropped, inFlight }), scenario, []);
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      ["R-137355-restart-next-message", "known-finding"],
      ["R-137355-sigkill-next-message", "known-finding"],
    ]);
    expect(j.verdict).toBe("known-finding");
  });

  it("both answered on 2026.9.6 reads fixed? (registered for 2026.9.4 only); nothing observed reads unknown", () => {
    expect(judgeHistory(hist(good), scenario, []).verdict).toBe("fixed?");
    expect(judgeHistory(hist({}), scenario, []).verdict).toBe("unknown");
  });
});

describe("repro-137355: P-137355-in-flight (the body stops there when it is not met)", () => {
  const id = "P-137355-in-flight";
  it("met when each variant's held model request is listed after the restart and had not completed", () => {
    expect(premiseOf(scenario, id, good)).toEqual({ id, met: true, observed: inFlight });
    // Judged after the first variant alone, as the body proceeds after it.
    expect(premiseOf(scenario, id, { inFlight: { restart: inFlight.restart } })).toEqual({ id, met: true, observed: { restart: { listed: true, completed: false } } });
  });

  it("not met when a variant's held request completed before the restart, or is not listed; nothing observed: not judged", () => {
    const completed = { restart: inFlight.restart, sigkill: { listed: true, completed: true } };
    expect(premiseOf(scenario, id, { inFlight: completed })).toEqual({ id, met: false, observed: completed });
    expect(premiseOf(scenario, id, { inFlight: { restart: { listed: false, completed: false } } })).toEqual({ id, met: false, observed: { restart: { listed: false, completed: false } } });
    expect(premiseOf(scenario, id, {})).toBeUndefined();
  });

  it("a body that stopped there (the restart variant's turn had completed): unknown, the checks not reached", () => {
    const j = judgeHistory({ ...hist({ inFlight: { restart: { listed: true, completed: true } } }), stopped: id }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toBe(`the lab could not tell: premise ${id} not met (${scenario.premises![0]!.what}): observed {"restart":{"listed":true,"completed":true}}`);
    expect(j.checks).toEqual([]);
    expect(j.unexercised).toEqual([]);
  });

  it("a body that returned without proving it: unknown (never proven)", () => {
    const { inFlight: _, ...unproven } = good;
    expect(judgeHistory(hist(unproven), scenario, [])).toMatchObject({ verdict: "unknown", detail: expect.stringContaining(`premise ${id} was never proven`) });
  });
});
