// restart-queued-followup's declared checks and premise, judged on hand-made histories (no
// Docker): per restart kind, the followup up to the restart (the premise) and after it (the checks).
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, emptyHistory, judgeHistory, type ScenarioHistory } from "../lab/judge/history.ts";
import type { PendingInput } from "../lab/clients/sessions.ts";
import scenario, { type AfterRestart, type Observed, type QueuedSeen } from "./restart-queued-followup.ts";

const hist = (observations: Observed, version = "2026.9.6"): ScenarioHistory => ({ ...emptyHistory("restart-queued-followup", version, { own: [], labWide: [] }), bodyReturned: true, observations });
const judged = (o: Observed, id: string) => {
  const c = deriveChecks(scenario.checks!, o, true).checks.find((x) => x.id === id);
  return c && { holds: c.holds, observed: c.observed };
};

const pending = (state: string): PendingInput => ({ id: "pi-1", state, runId: "run-2", message: "tok-5e1f queued followup behind the running turn" });
/** Up to the restart, as the premise needs it: accepted, the first turn held, the followup carried by no model request yet. */
const queued = (more: Partial<QueuedSeen> = {}): QueuedSeen => ({ accepted: "started", firstHeldAtRestart: true, carriedBefore: [], pendingBefore: pending("queued"), ...more });
/** After the restart as 2026.9.6 shows it: not answered, not asked of the model, listed as interrupted. */
const after = (more: Partial<AfterRestart> = {}): AfterRestart => ({ within_s: 90, answered: false, asPrompt: [], asContext: [], pendingBefore: pending("queued"), pendingAfter: pending("interrupted"), ...more });
const run = (a: AfterRestart = after(), q: QueuedSeen = queued()): Observed => ({ queued: { stop: q, kill: q }, stop: a, kill: a });

const KEPT = (kind: string) => `E-restart-followup-${kind}-kept`;
const ANSWERED = (kind: string) => `R-restart-followup-${kind}-answered`;

describe("restart-queued-followup: the checks", () => {
  it("2026.9.6: kept (listed as interrupted) holds, answered does not: the registered signature, a known finding for both kinds", () => {
    const o = run();
    expect(deriveChecks(scenario.checks!, o, true).checks.map((c) => [c.id, c.holds])).toEqual([
      [KEPT("stop"), true],
      [ANSWERED("stop"), false],
      [KEPT("kill"), true],
      [ANSWERED("kill"), false],
    ]);
    expect(judged(o, KEPT("stop"))).toEqual({ holds: true, observed: { within_s: 90, answered: false, pendingInput: "interrupted" } });
    const signature = { within_s: 90, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: "interrupted" };
    expect(judged(o, ANSWERED("stop"))).toEqual({ holds: false, observed: signature });
    expect(scenario.findings!.find((f) => f.id === ANSWERED("stop"))!.signature).toEqual(signature);
    const j = judgeHistory(hist(o), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", `known-finding ${ANSWERED("stop")}, known-finding ${ANSWERED("kill")}`]);
  });

  it("answered within the bound: both hold (the model asked it as its own prompt)", () => {
    const o = run(after({ answered: true, asPrompt: ["req-9"], pendingAfter: undefined }));
    expect(judged(o, KEPT("kill"))).toEqual({ holds: true, observed: { within_s: 90, answered: true, pendingInput: null } });
    expect(judged(o, ANSWERED("kill"))).toEqual({ holds: true, observed: { within_s: 90, answered: true, askedAsPrompt: true, onlyAsContext: false, pendingInput: null } });
  });

  it("lost silently (listed before, neither answered nor listed as interrupted after): kept does not hold, a fail", () => {
    const o = run(after({ pendingAfter: undefined, asContext: ["req-3"] }));
    expect(judged(o, KEPT("stop"))).toEqual({ holds: false, observed: { within_s: 90, answered: false, pendingInput: null } });
    expect(judged(o, ANSWERED("stop"))).toEqual({ holds: false, observed: { within_s: 90, answered: false, askedAsPrompt: false, onlyAsContext: true, pendingInput: null } });
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("fail");
  });

  it("2026.9.4: never listed before the restart, so kept is not judged (no note); answered reads the registered 2026.9.4 variant", () => {
    const o = run(after({ pendingBefore: undefined, pendingAfter: undefined }), queued({ pendingBefore: undefined }));
    expect(judged(o, KEPT("stop"))).toBeUndefined();
    expect(deriveChecks(scenario.checks!, o, true).notes).toEqual([]);
    expect(judged(o, ANSWERED("stop"))).toEqual({ holds: false, observed: { within_s: 90, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: null } });
    const j = judgeHistory(hist(o, "2026.9.4"), scenario, []);
    expect(j.verdict).toBe("known-finding");
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      [ANSWERED("stop"), "known-finding"],
      [ANSWERED("kill"), "known-finding"],
    ]);
  });

  it("a chat.history with no pendingInputs field: kept is not judged; the followup's pending state reads so", () => {
    const o = run(after({ pendingBefore: "no pendingInputs field", pendingAfter: "no pendingInputs field" }));
    expect(judged(o, KEPT("kill"))).toBeUndefined();
    expect(judged(o, ANSWERED("kill"))).toEqual({ holds: false, observed: { within_s: 90, answered: false, askedAsPrompt: false, onlyAsContext: false, pendingInput: "no pendingInputs field" } });
  });

  it("a kind never observed once the body returned: answered had nothing to judge (unknown); kept is optional", () => {
    const j = judgeHistory(hist({ queued: { stop: queued() }, stop: after() }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["unknown", `check ${ANSWERED("kill")} had nothing to judge: the body returned without observing what it reads; also known-finding ${ANSWERED("stop")}`]);
  });
});

describe("restart-queued-followup: P-restart-followup-queued", () => {
  it("met when, for every kind run, the first turn was held at the restart and no model request had carried the followup", () => {
    expect(derivePremises(scenario.premises, run())).toEqual({
      premises: [
        {
          id: "P-restart-followup-queued",
          met: true,
          observed: {
            stop: { accepted: "started", firstHeldAtRestart: true, followupModelRequestsBefore: 0, pendingBefore: "queued" },
            kill: { accepted: "started", firstHeldAtRestart: true, followupModelRequestsBefore: 0, pendingBefore: "queued" },
          },
        },
      ],
      notes: [],
    });
  });

  it("not met when one kind's followup reached the model before the restart (the aim-off): unknown, whatever the checks say", () => {
    const o: Observed = { ...run(), queued: { stop: queued(), kill: queued({ firstHeldAtRestart: false, carriedBefore: ["req-1", "req-2"], pendingBefore: undefined }) } };
    expect(derivePremises(scenario.premises, o).premises).toEqual([
      {
        id: "P-restart-followup-queued",
        met: false,
        observed: {
          stop: { accepted: "started", firstHeldAtRestart: true, followupModelRequestsBefore: 0, pendingBefore: "queued" },
          kill: { accepted: "started", firstHeldAtRestart: false, followupModelRequestsBefore: 2, pendingBefore: null },
        },
      },
    ]);
    expect(judgeHistory(hist(o), scenario, []).verdict).toBe("unknown");
  });

  it("proven for the kinds run so far: one kind is its proof alone; none observed is never proven", () => {
    expect(derivePremises(scenario.premises, { queued: { stop: queued({ pendingBefore: "no pendingInputs field" }) } }).premises).toEqual([
      { id: "P-restart-followup-queued", met: true, observed: { stop: { accepted: "started", firstHeldAtRestart: true, followupModelRequestsBefore: 0, pendingBefore: "no pendingInputs field" } } },
    ]);
    expect(derivePremises(scenario.premises, { stop: after() }).premises).toEqual([]);
    const j = judgeHistory(hist({ stop: after(), kill: after() }), scenario, []);
    expect([j.verdict, j.detail]).toMatchObject(["unknown", expect.stringContaining("premise P-restart-followup-queued was never proven")]);
  });
});
