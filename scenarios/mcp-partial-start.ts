import { defineScenario, type FindingRecord } from "../lab/scenario.ts";
import { faults } from "../lab/faults/index.ts";
import { waitRun } from "../lab/clients/sessions.ts";
import { mcpToolsOffered, toolCallsIn, waitMcpHealthy } from "../lab/kits/mcp.ts";
import { mcpScene, type McpScene } from "../lab/kits/scene.ts";
import { sendTurn } from "../lab/kits/turns.ts";
import { pollUntil } from "../lab/core/wait.ts";
import { isResponsesCall } from "../lab/clients/model.ts";

// Two MCP servers are configured; south's container is down before any session has
// connected (the gateway starts MCP sessions at a session's first turn), so south cannot
// start. A turn then asks for north__example_echo. Reference: a partial start fails closed:
// no tool runs, and the server that did start (north) is stopped again. After the run ends,
// north is watched for STOP_BOUND_S for its session to be stopped (a slower stop is still a
// stop); what does not hold is the state at that deadline.
const STOP_BOUND_S = 10;
// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // A server that fails to start is logged ("failed to start server south ...
    // getaddrinfo EAI_AGAIN south") and left out; the turn goes on with the other server's tools.
    id: "R-mcp-partial-start",
    expectation: "if one of two servers cannot start, no tool runs and the server that did start is stopped",
    signature: { within_s: 10, mcpToolsOffered: ["north__example_echo"], northToolCalls: 1, northSessionStopped: false, run: "ok" },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/R-mcp-partial-start.json",
  },
];

// The body drives and observes (ctx.observe); the check below judges what it observed.

/** north as last polled after the run's end: its session, the tools/call it saw, whether that session was stopped. */
interface North {
  session: string | null;
  toolCalls: number;
  stopped: boolean;
}
/** The MCP tools the model was first offered (null: no model request), north after the run, the run's end. */
interface PartialStart {
  offered: string[] | null;
  north: North;
  run: string;
}
export interface Observed {
  partialStart?: PartialStart;
}

/** Fails closed: no tool ran at north and its session was stopped (the poll waits for it; the check judges the last state polled). */
const failedClosed = (n: North) => n.toolCalls === 0 && n.stopped;

/** The signature: the bound, what the model was offered, north at the bound, the run. */
const partialView = (p: PartialStart) => ({ within_s: STOP_BOUND_S, mcpToolsOffered: p.offered, northToolCalls: p.north.toolCalls, northSessionStopped: p.north.stopped, run: p.run });

export default defineScenario<Observed>({
  name: "mcp-partial-start",
  proves: "if one of two MCP servers cannot start, no tool runs and the server that did start is stopped (fails closed)",
  topology: "own",
  findings,
  spec: { nodes: { count: 0 }, git: { enabled: false } },
  timeoutMs: 180_000,
  checks: [
    {
      id: "R-mcp-partial-start",
      expectation: `if one of two servers cannot start, no tool runs and the server that did start is stopped (within ${STOP_BOUND_S} s of the run's end)`,
      kind: "differs-from-reference",
      judge: (h) => {
        const p = h.partialStart;
        return p && { holds: failedClosed(p.north), observed: partialView(p) };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const north = lab.mcp("north");
    const client = lab.operator.client;
    const down = faults.kill(lab, "south");
    const atEnd = async ({ extra }: McpScene) => {
      // Heal (start south again) so the evidence includes its side too.
      extra.southStarted = await down.heal().catch((e: Error) => ({ error: e.message }));
      await waitMcpHealthy(lab, "south").catch(() => {});
    };
    await mcpScene(ctx, { atEnd }, async ({ extra }) => {
      extra.southKilled = await down.inject();
      const turn = await sendTurn(client, 'fleetlab-call north__example_echo {"text":"partial"}');
      const end = await waitRun(client, turn.runId, 90_000);
      const endedAt = Date.now();
      const first = (await lab.model.requests()).filter(isResponsesCall)[0];
      const polled = await pollUntil(
        "north's session stopped with no tool call",
        async (): Promise<North> => {
          const records = await north.requests();
          const session = records.find((r) => r.event === "session-created")?.sessionId ?? null;
          return {
            session,
            toolCalls: toolCallsIn(records).length,
            stopped: records.some((r) => r.sessionId === session && (r.event === "session-closed" || r.httpMethod === "DELETE")),
          };
        },
        failedClosed,
        { deadlineMs: STOP_BOUND_S * 1000, from: endedAt, intervalMs: 250, signal },
      );
      const session = polled.last.session;
      const seen: PartialStart = { offered: first ? mcpToolsOffered(first) : null, north: polled.last, run: end.status };
      log(`south down at first connect: ${JSON.stringify(partialView(seen))}`);
      extra.observations = { turn, end, northSession: session, polled: { held: polled.held, msAfterRunEnd: polled.ms, polls: polled.polls } };
      observe("partialStart", seen);
    });
  },
});
