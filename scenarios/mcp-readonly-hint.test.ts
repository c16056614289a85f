import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-readonly-hint.ts";
import { deriveChecks, judgeHistory } from "../lab/judge/history.ts";
import { historyOf, premiseOf } from "../lab/testing/histories.ts";

type Gated = NonNullable<Observed["gated"]>;
const gated = (more: Partial<Gated> = {}): Gated => ({ approvalRequested: true, serverCallsBeforeDecision: 0, denied: true, serverCalls: 0, effects: 0, run: "ok", ...more });
const putAnnotations = { readOnlyHint: true };
const eraseAnnotations = { readOnlyHint: false, destructiveHint: true, openWorldHint: true };
/** What 2026.9.6 showed: both unlisted tools ran unasked (one more effect at south each). */
const ranUnasked: NonNullable<Observed["unlisted"]> = {
  put_file: { annotations: putAnnotations, approvalRequested: false, effectsBefore: 0, effectsAfter: 1, run: "ok" },
  erase_file: { annotations: eraseAnnotations, approvalRequested: false, effectsBefore: 1, effectsAfter: 2, run: "ok" },
};
/** The reference: each asked, was denied and wrote nothing. */
const asked: NonNullable<Observed["unlisted"]> = {
  put_file: { annotations: putAnnotations, approvalRequested: true, effectsBefore: 0, effectsAfter: 0, run: "ok" },
  erase_file: { annotations: eraseAnnotations, approvalRequested: true, effectsBefore: 0, effectsAfter: 0, run: "ok" },
};
/** south's write_file as the lab's catalog declares it. */
const declared = { found: true, readOnlyHint: true };
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, { ...o }, true).checks.map((c) => [c.id, c]));
const history = (o: Observed) => historyOf(scenario, o);

describe("mcp-readonly-hint's checks over what its body observed", () => {
  it("gated: asked, nothing at south before or after the denial: holds, the observation is the signature", () => {
    expect(judged({ gated: gated() })["R-mcp-readonly-hint-gated"]).toEqual({
      id: "R-mcp-readonly-hint-gated",
      expectation: "a third-party tool declaring readOnlyHint (south write_file, listed by the gate) still asks for approval and does not run before it",
      holds: true,
      observed: { approvalRequested: true, serverCallsBeforeDecision: 0, denied: true, serverCalls: 0, effects: 0, run: "ok" },
    });
  });

  it("gated: not asked (the hint trusted), or a call before the decision: short", () => {
    expect(judged({ gated: gated({ approvalRequested: false, denied: false, serverCalls: 1, effects: 1 }) })["R-mcp-readonly-hint-gated"]).toMatchObject({ holds: false });
    expect(judged({ gated: gated({ approvalRequested: false, denied: false, serverCalls: 1, effects: 1 }) })["R-mcp-readonly-hint-gated"]!.observed).toEqual({
      approvalRequested: false,
      serverCallsBeforeDecision: 0,
      denied: false,
      serverCalls: 1,
      effects: 1,
      run: "ok",
    });
    expect(judged({ gated: gated({ serverCallsBeforeDecision: 1 }) })["R-mcp-readonly-hint-gated"]!.holds).toBe(false);
  });

  it("builtin-gate: each unlisted write tool asks and writes nothing: holds", () => {
    expect(judged({ unlisted: asked })["R-mcp-readonly-hint-builtin-gate"]).toEqual({
      id: "R-mcp-readonly-hint-builtin-gate",
      expectation: "without an approval plugin listing it, OpenClaw's own policy still asks the operator before a third-party MCP tool that writes runs, whatever readOnlyHint it declares",
      holds: true,
      kind: "differs-from-reference",
      observed: {
        put_file: { annotations: putAnnotations, approvalRequested: true, executed: false, run: "ok" },
        erase_file: { annotations: eraseAnnotations, approvalRequested: true, executed: false, run: "ok" },
      },
    });
  });

  it("builtin-gate: a tool that ran unasked is short; the registered signature reads known-finding", () => {
    expect(judged({ unlisted: { ...asked, erase_file: ranUnasked.erase_file! } })["R-mcp-readonly-hint-builtin-gate"]!.holds).toBe(false);
    expect(judged({ unlisted: { ...asked, erase_file: ranUnasked.erase_file! } })["R-mcp-readonly-hint-builtin-gate"]!.observed).toEqual({
      put_file: { annotations: putAnnotations, approvalRequested: true, executed: false, run: "ok" },
      erase_file: { annotations: eraseAnnotations, approvalRequested: false, executed: true, run: "ok" },
    });
    const j = judgeHistory(history({ declared, gated: gated(), unlisted: ranUnasked }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-readonly-hint-builtin-gate"]);
  });

  it("a body that returned without the unlisted tools: unknown", () => {
    expect(judgeHistory(history({ declared, gated: gated() }), scenario, []).verdict).toBe("unknown");
  });

  it("P-mcp-readonly-hint-declared: write_file declares readOnlyHint:true; a catalog that drifted stops the body and the lab could not tell", () => {
    expect(premiseOf(scenario, "P-mcp-readonly-hint-declared", { declared })).toEqual({ id: "P-mcp-readonly-hint-declared", met: true, observed: { found: true, readOnlyHint: true } });
    expect(premiseOf(scenario, "P-mcp-readonly-hint-declared", { declared: { found: true, readOnlyHint: null } })).toEqual({ id: "P-mcp-readonly-hint-declared", met: false, observed: { found: true, readOnlyHint: null } });
    expect(premiseOf(scenario, "P-mcp-readonly-hint-declared", { declared: { found: false, readOnlyHint: null } })?.met).toBe(false);
    const j = judgeHistory({ ...history({ declared: { found: true, readOnlyHint: false } }), stopped: "P-mcp-readonly-hint-declared" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-mcp-readonly-hint-declared not met");
    // The reference outcome with the premise met: every check holds, so the registered finding reads fixed?.
    expect(judgeHistory(history({ declared, gated: gated(), unlisted: asked }), scenario, []).verdict).toBe("fixed?");
  });
});
