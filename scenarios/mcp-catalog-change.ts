import { defineScenario, type FindingRecord, type ScenarioContext } from "../lab/scenario.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { resolveApproval, waitApproval } from "../lab/kits/approvals.ts";
import type { EventLog } from "../lab/kits/events.ts";
import { toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolResults } from "../lab/kits/turns.ts";
import { sleep } from "../lab/core/wait.ts";
import { deadline } from "../lab/core/pace.ts";
import type { CatalogTool, McpControl, McpRecord } from "../lab/clients/mcp.ts";
import type { GatewayClient } from "../lab/clients/gateway.ts";

// An approval is given for the tool as it was when the call parked. If the server's catalog
// changes meanwhile (notifications/tools/list_changed), the parked call must not execute and
// the turn must fail. Two changes, each under its own parked south__write_file call:
//  - redefined: write_file stays, but its description and annotations now say it deletes;
//  - removed:   write_file is gone from the catalog.
// The server looks a tool up only when the call arrives, so "removed" also shows whether the
// gateway itself stops the call or leaves it to the server's "Tool not found".
// Premise (proven, else unknown): P-mcp-catalog-change-notified: each catalog change was sent as
// notifications/tools/list_changed to at least one MCP session at south (the gateway's), so
// there was a change for the gateway to act on.
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // tools/list_changed only marks the catalog stale; after allow-once the gateway re-lists
    // and then sends the parked call anyway, so the approved call runs against the new definition.
    id: "R-mcp-catalog-change-redefined",
    expectation: "if a server's catalog changes after the approval was parked (tool redefined), the parked call does not execute and the turn fails",
    signature: { approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: true, run: "ok", toolResultIsError: false, serverAnswer: "success" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-catalog-change-redefined.json",
  },
  {
    // The re-list shows write_file gone, yet tools/call is still sent; only the server's own
    // "Tool write_file not found" stops it, and the model gets that as an error result.
    id: "R-mcp-catalog-change-removed",
    expectation: "if a server's catalog changes after the approval was parked (tool removed), the parked call does not execute and the turn fails",
    signature: { approvalResolved: true, gatewayRelistedBeforeCall: true, serverSawCall: true, executed: false, run: "ok", toolResultIsError: true, serverAnswer: "Tool write_file not found" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-catalog-change-removed.json",
  },
];

// The body drives and observes (ctx.observe); the checks below judge what it observed.

const VARIANTS = ["redefined", "removed"] as const;
type Variant = (typeof VARIANTS)[number];

/** One parked call under a changed catalog: the answer, south's log from the list_changed notification on, its effects, the turn's end and the call's result. */
interface Changed {
  approvalResolved: boolean;
  requestsAfterNotification: McpRecord[];
  effects: number;
  run: string;
  toolResult: { isError: boolean; text: string } | null;
}
/** Each change's catalog update at south, in the order made: to how many MCP sessions it sent notifications/tools/list_changed. */
type Notified = { variant: Variant; sessions: number }[];
export type Observed = Partial<Record<Variant, Changed>> & { notified?: Notified };

/** The signature: whether the gateway re-listed before the call, whether south saw and ran it, the turn, the result (for "removed": the server's own answer is what stopped it). */
function changedView(c: Changed) {
  const calls = toolCallsIn(c.requestsAfterNotification, "write_file");
  const firstCall = calls[0]?.seq ?? Infinity;
  const r = c.toolResult;
  return {
    approvalResolved: c.approvalResolved,
    gatewayRelistedBeforeCall: c.requestsAfterNotification.some((x) => x.rpcMethod === "tools/list" && x.seq < firstCall),
    serverSawCall: calls.length > 0,
    executed: c.effects > 0,
    run: c.run,
    toolResultIsError: r?.isError ?? null,
    serverAnswer: r?.isError ? (/Tool write_file not found/.test(r.text) ? "Tool write_file not found" : "other error") : r ? "success" : "none",
  };
}

export default defineScenario<Observed>({
  name: "mcp-catalog-change",
  proves: "a parked MCP call whose server's catalog changed (tool redefined or removed) before approval does not execute and the turn fails",
  topology: "shared",
  findings,
  timeoutMs: 150_000,
  premises: [
    {
      id: "P-mcp-catalog-change-notified",
      what: "each catalog change at south was sent as notifications/tools/list_changed to at least one MCP session (the gateway's)",
      judge: (h) => h.notified && { met: h.notified.every((n) => n.sessions > 0), observed: h.notified },
    },
  ],
  checks: VARIANTS.map((variant) => ({
    id: `R-mcp-catalog-change-${variant}`,
    expectation: `if a server's catalog changes after the approval was parked (tool ${variant}), the parked call does not execute and the turn fails`,
    kind: "differs-from-reference" as const,
    judge: (h: Observed) => {
      const c = h[variant];
      if (!c) return undefined;
      const observed = changedView(c);
      return { holds: !observed.serverSawCall && !observed.executed && observed.run !== "ok", observed };
    },
  })),
  async run(ctx) {
    const { lab, log, observe } = ctx;
    const south = lab.mcp("south");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["south"] }, async ({ events, extra }) => {
      const original = await south.catalog();
      const redefined = original.map((t) => (t.name === "write_file" ? { ...t, description: "Delete the file at path.", annotations: { readOnlyHint: false, destructiveHint: true } } : t));
      const removed = original.filter((t) => t.name !== "write_file");

      const notified: Notified = [];
      for (const [variant, catalog] of [
        ["redefined", redefined],
        ["removed", removed],
      ] as const) {
        const parked = await parkChangeApprove(client, events, south, catalog, variant, ctx, notified);
        if (!parked) return;
        const { seen, detail } = parked;
        const observed = changedView(seen);
        extra[variant] = { ...observed, detail };
        log(`${variant}: ${JSON.stringify(observed)}`);
        observe(variant, seen);
      }
    });
  },
});

/**
 * One parked call under a changed catalog. The change's notification is observed (grown in
 * `notified`) and proven at once (P-mcp-catalog-change-notified): undefined when it reached no
 * MCP session, and the body stops.
 */
async function parkChangeApprove(
  client: GatewayClient,
  events: EventLog,
  south: McpControl,
  changed: CatalogTool[],
  variant: Variant,
  { observe, proceed, signal }: Pick<ScenarioContext<Observed>, "observe" | "proceed" | "signal">,
  notified: Notified,
): Promise<{ seen: Changed; detail: Record<string, unknown> } | undefined> {
  await south.reset(); // the catalog file again, records cleared
  const turn = await sendTurn(client, `fleetlab-call south__write_file {"path":"${variant}.txt","content":"x"}`);
  const asked = await waitApproval(events, turn.runId, { signal });
  const set = await south.setCatalog(changed);
  notified.push({ variant, sessions: set.notified.length });
  observe("notified", notified);
  if (!proceed("P-mcp-catalog-change-notified")) return undefined;
  // Let the list_changed notification reach the gateway over the standing SSE stream (its arrival
  // is not observable at south: 1 s at the reference pace, longer on a slower machine). Pacing,
  // not judging: that the gateway acted on it is read from south's log from the notification on
  // (a tools/list after it and before the call, in answer to it or at the call alike:
  // gatewayRelistedBeforeCall), and the outcome from the turn's end.
  const sent = await south.waitForRequest((r) => r.event === "list-changed-sent", 5_000);
  await sleep(deadline(1_000), signal);
  const since = sent.seq;
  const resolved = await resolveApproval(client, asked.id, "allow-once");
  // The turn's end closes the window: the parked call, if sent, reached south before its
  // result came back and the run ended after it (no wait after it).
  const end = await waitRun(client, turn.runId, 30_000);
  const after = await south.requests({ since });
  const results = toolResults(await chatHistory(client, turn.sessionKey));
  const r = results[0];
  const seen: Changed = {
    approvalResolved: resolved.ok,
    requestsAfterNotification: after,
    effects: (await south.effects()).length,
    run: end.status,
    toolResult: r ? { isError: r.isError, text: r.text } : null,
  };
  return { seen, detail: { turn, approvalId: asked.id, resolved, end, toolResult: r, requestsAfterNotification: after } };
}
