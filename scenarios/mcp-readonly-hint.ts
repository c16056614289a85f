import { defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { waitRun } from "../lab/clients/sessions.ts";
import { resolveApproval, waitApproval } from "../lab/kits/approvals.ts";
import { toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn } from "../lab/kits/turns.ts";
import type { CatalogTool } from "../lab/clients/mcp.ts";

// MCP tool annotations are the server's word, not a grant. south's write_file declares
// readOnlyHint:true although it writes.
//  1. The gate plugin lists south__write_file: the call must still ask the operator (here
//     denied) and must not reach the server.
//  2. Does OpenClaw itself gate anything on annotations? Two more writing tools are added to
//     south's catalog that the plugin does NOT list: put_file (readOnlyHint:true) and
//     erase_file (readOnlyHint:false, destructiveHint:true). Reference: OpenClaw's own policy
//     asks before a third-party tool that writes runs, whatever it declares.
// (The plugin not listing a tool is what the spec override `mcp.approvalTools: []` would give,
// without a lab of its own.)
// Premise (proven, else unknown): P-mcp-readonly-hint-declared: south's write_file declares
// readOnlyHint:true in the lab's MCP catalog (fixture drift otherwise: there is no hint to test).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): the 30 s for the
// gated call's approval request and the 20 s window an unlisted tool's approval request must show
// in.
//
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  // --- multi-MCP (scenarios/mcp-*.ts); the gateway-side MCP client is agents/agent-bundle-mcp-runtime.js ---
  {
    // No built-in gate looks at annotations: with the plugin not listing them, a write tool
    // declaring readOnlyHint:true and one declaring destructiveHint:true both run unasked.
    // (With the plugin listing south__write_file, its readOnlyHint is ignored: that part passes.)
    id: "R-mcp-readonly-hint-builtin-gate",
    expectation: "without an approval plugin listing it, OpenClaw's own policy still asks the operator before a third-party MCP tool that writes runs, whatever readOnlyHint it declares",
    signature: {
      put_file: { annotations: { readOnlyHint: true }, approvalRequested: false, executed: true, run: "ok" },
      erase_file: { annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true }, approvalRequested: false, executed: true, run: "ok" },
    },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-readonly-hint-builtin-gate.json",
  },
];

// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** The gated write_file call: asked or not, south's calls before the decision and after the turn, south's effects, the run. */
interface Gated {
  approvalRequested: boolean;
  serverCallsBeforeDecision: number;
  denied: boolean;
  serverCalls: number;
  effects: number;
  run: string;
}
/** One tool the gate does not list: its annotations, whether the turn asked, south's effects before and after the turn, the run. */
interface Unlisted {
  annotations: unknown;
  approvalRequested: boolean;
  effectsBefore: number;
  effectsAfter: number;
  run: string;
}
export interface Observed {
  /** south's write_file as its catalog declares it before the turns: found, and its readOnlyHint (null: none). */
  declared?: { found: boolean; readOnlyHint: unknown };
  gated?: Gated;
  /** By tool name (put_file, erase_file), in the order they were called. */
  unlisted?: Record<string, Unlisted>;
}

/** Each unlisted tool as judged: did it ask, did it run (a new effect at south). */
const unlistedView = (u: Record<string, Unlisted>) => Object.fromEntries(Object.entries(u).map(([k, v]) => [k, { annotations: v.annotations, approvalRequested: v.approvalRequested, executed: v.effectsAfter > v.effectsBefore, run: v.run }]));

export default defineScenario<Observed>({
  name: "mcp-readonly-hint",
  proves: "a readOnlyHint on a third-party MCP tool is not trusted: a gated write tool declaring it still asks the operator; and whether OpenClaw gates anything by annotations itself",
  topology: "shared",
  findings,
  timeoutMs: 150_000,
  premises: [
    {
      id: "P-mcp-readonly-hint-declared",
      what: "south's write_file declares readOnlyHint:true in the lab's MCP catalog",
      judge: (h) => h.declared && { met: h.declared.found && h.declared.readOnlyHint === true, observed: h.declared },
    },
  ],
  checks: [
    {
      id: "R-mcp-readonly-hint-gated",
      expectation: "a third-party tool declaring readOnlyHint (south write_file, listed by the gate) still asks for approval and does not run before it",
      judge: (h) => {
        const g = h.gated;
        return g && { holds: g.approvalRequested && g.serverCallsBeforeDecision === 0 && g.serverCalls === 0 && g.effects === 0, observed: g };
      },
    },
    {
      id: "R-mcp-readonly-hint-builtin-gate",
      expectation: "without an approval plugin listing it, OpenClaw's own policy still asks the operator before a third-party MCP tool that writes runs, whatever readOnlyHint it declares",
      kind: "differs-from-reference",
      judge: (h) => {
        if (!h.unlisted) return undefined;
        const observed = unlistedView(h.unlisted);
        return { holds: Object.values(observed).every((p) => p.approvalRequested && !p.executed), observed };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed, signal } = ctx;
    const south = lab.mcp("south");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["south"] }, async ({ events, extra }) => {
      const declared = (await south.catalog()).find((t) => t.name === "write_file");
      observe("declared", { found: declared !== undefined, readOnlyHint: declared?.annotations?.readOnlyHint ?? null });
      if (!proceed("P-mcp-readonly-hint-declared")) return;

      // 1. listed by the gate: asks, denied, never runs.
      const gated = await sendTurn(client, 'fleetlab-call south__write_file {"path":"hint.txt","content":"x"}');
      // expectation: a time-out is "no approval requested" (R-mcp-readonly-hint-gated): the 30 s window is fixed, not paced
      const asked = await waitApproval(events, gated.runId, { signal, expectation: true }).catch(() => undefined);
      const callsWhileAsked = toolCallsIn(await south.requests()).length;
      const denied = asked ? await resolveApproval(client, asked.id, "deny") : undefined;
      // The turn's end closes the window: a call of this turn reaches the server before its
      // result, and the run ends only after that result (no wait after it).
      const gatedEnd = await waitRun(client, gated.runId, 30_000);
      const part1: Gated = {
        approvalRequested: asked !== undefined,
        serverCallsBeforeDecision: callsWhileAsked,
        denied: denied?.ok ?? false,
        serverCalls: toolCallsIn(await south.requests()).length,
        effects: (await south.effects()).length,
        run: gatedEnd.status,
      };
      log(`gated write_file (readOnlyHint:true): ${JSON.stringify(part1)}`);
      observe("gated", part1);

      // 2. not listed by the gate: does OpenClaw itself ask, by annotation?
      const base = (await south.catalog()).find((t) => t.name === "write_file")!;
      const added: CatalogTool[] = [
        { ...base, name: "put_file", annotations: { readOnlyHint: true } },
        { ...base, name: "erase_file", annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
      ];
      await south.setCatalog([...(await south.catalog()), ...added]);
      const unlisted: Record<string, Unlisted> = {};
      for (const t of added) {
        const before = (await south.effects()).length;
        const turn = await sendTurn(client, `fleetlab-call south__${t.name} {"path":"${t.name}.txt","content":"x"}`);
        // A parked call would keep the run going: wait for its end or for an approval request.
        // expectation: the 20 s window in which an approval request must show (approvalRequested in the finding): fixed, not paced
        let end = await waitRun(client, turn.runId, 20_000, { expectation: true });
        const req = events.approvalRequests(turn.runId)[0];
        if (req) {
          await resolveApproval(client, req.id, "deny");
          end = await waitRun(client, turn.runId, 20_000);
        }
        unlisted[`${t.name}`] = { annotations: t.annotations, approvalRequested: req !== undefined, effectsBefore: before, effectsAfter: (await south.effects()).length, run: end.status };
      }
      const part2 = unlistedView(unlisted);
      log(`not listed by the gate: ${JSON.stringify(part2)}`);
      extra.observations = { part1, part2, gatedTurn: gated, approvalId: asked?.id, denied };
      observe("unlisted", unlisted);
    });
  },
});
