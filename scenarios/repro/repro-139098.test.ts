// repro-139098's premise and check over hand-made histories (no Docker): the one-shots' placement
// rows while their runs were held, and each job's sessions after its run and after the delete.
import { describe, expect, it } from "vitest";
import { deriveChecks, derivePremises, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import scenario, { type Observed } from "./repro-139098.ts";
import { historyOf } from "../../lab/testing/histories.ts";

/** As the runner keeps them: JSON. */
const recorded = (o: Observed): Observations => JSON.parse(JSON.stringify(o)) as Observations;
const check = (o: Observed) => deriveChecks(scenario.checks ?? [], recorded(o), true).checks.find((c) => c.id === "R-139098-cron-session-deletable");
const premise = (o: Observed) => derivePremises(scenario.premises, recorded(o)).premises.find((p) => p.id === "P-139098-run-placement");
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, recorded(o));

const BASE_1 = "agent:main:cron:job-1";
const BASE_2 = "agent:main:cron:job-2";
const runRow = (base: string, state = "local") => ({ session_id: "sess-9", session_key: `${base}:run:sess-9`, state, execution_mode: null });
const none = { listed: [], placements: [] };

const during = (held: boolean): Observed["during"] => [
  { name: "delete-after-run", baseKey: BASE_1, held, placements: held ? [runRow(BASE_1)] : [] },
  { name: "keep-session", baseKey: BASE_2, held, placements: held ? [runRow(BASE_2)] : [] },
];

/** 2026.9.6's run: the deleteAfterRun job cleaned itself up; the other's base session was deletable and its run-alias row went with it. */
const deletable = (): NonNullable<Observed["after"]> => [
  { name: "delete-after-run", baseKey: BASE_1, runStatus: "ok", jobRemoved: true, afterRun: none, deleted: "nothing to delete", afterDelete: none },
  { name: "keep-session", baseKey: BASE_2, runStatus: "ok", jobRemoved: false, afterRun: { listed: [BASE_2], placements: [runRow(BASE_2)] }, deleted: { ok: true, deleted: true }, afterDelete: none },
];

const EXPECTATION =
  "once a one-shot isolated automation has run (with deleteAfterRun, and without it), its session is deletable: the job's clean-up removed it, or sessions.delete on its key answers ok; afterwards sessions.list has no row of the job and the gateway's state no placement row of it";

describe("P-139098-run-placement", () => {
  it("met: both runs held, each with a placement row of its job (the reporter's run-alias row)", () => {
    expect(premise({ during: during(true) })).toEqual({
      id: "P-139098-run-placement",
      met: true,
      observed: { "delete-after-run": { runHeld: true, placements: [{ keyShape: "run-alias", state: "local" }] }, "keep-session": { runHeld: true, placements: [{ keyShape: "run-alias", state: "local" }] } },
    });
  });

  it("not met aimed off: no run within the wait, no placement row", () => {
    expect(premise({ during: during(false) })).toEqual({
      id: "P-139098-run-placement",
      met: false,
      observed: { "delete-after-run": { runHeld: false, placements: [] }, "keep-session": { runHeld: false, placements: [] } },
    });
  });

  it("not met when one run was held but its placement row was not there", () => {
    const d = during(true)!;
    d[1] = { ...d[1]!, placements: [] };
    expect(premise({ during: d })?.met).toBe(false);
  });
});

describe("R-139098-cron-session-deletable", () => {
  it("holds: the clean-up removed one job's session, sessions.delete removed the other's, nothing of either left", () => {
    expect(check({ after: deletable() })).toEqual({
      id: "R-139098-cron-session-deletable",
      expectation: EXPECTATION,
      holds: true,
      observed: {
        within_s: 10,
        "delete-after-run": { runStatus: "ok", jobRemoved: true, listedAfterRun: [], placementsAfterRun: [], delete: "nothing to delete", listedAfter: [], placementsAfter: [] },
        "keep-session": { runStatus: "ok", jobRemoved: false, listedAfterRun: ["base"], placementsAfterRun: [{ keyShape: "run-alias", state: "local" }], delete: "ok", listedAfter: [], placementsAfter: [] },
      },
    });
    expect(judgeHistory(hist({ during: during(true), after: deletable() }), scenario, []).verdict).toBe("pass");
  });

  it("does not hold: the report's refusal (placement identity changed), the session and its run-alias row left", () => {
    const after = deletable();
    after[1] = {
      ...after[1]!,
      deleted: { ok: false, code: "UNAVAILABLE", message: `Session ${BASE_2} could not safely stop before deletion: cloud worker placement identity changed` },
      afterDelete: { listed: [BASE_2], placements: [runRow(BASE_2)] },
    };
    const c = check({ after });
    expect(c?.holds).toBe(false);
    expect(c?.observed).toMatchObject({
      "keep-session": {
        delete: { code: "UNAVAILABLE", message: `Session ${BASE_2} could not safely stop before deletion: cloud worker placement identity changed` },
        listedAfter: ["base"],
        placementsAfter: [{ keyShape: "run-alias", state: "local" }],
      },
    });
    expect(judgeHistory(hist({ during: during(true), after }), scenario, []).verdict).toBe("fail");
  });

  it("does not hold: the delete answered ok but a placement row of the job stayed past the GONE_S poll", () => {
    const after = deletable();
    after[1] = { ...after[1]!, afterDelete: { listed: [], placements: [runRow(BASE_2, "stopping")] } };
    expect(check({ after })).toMatchObject({ holds: false, observed: { "keep-session": { delete: "ok", listedAfter: [], placementsAfter: [{ keyShape: "run-alias", state: "stopping" }] } } });
  });
});
