import { defineScenario } from "../lab/scenario.ts";
import { chatHistory, waitRun } from "../lab/clients/sessions.ts";
import { toolCallsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn, toolResults } from "../lab/kits/turns.ts";

// north and south both serve `example_echo`. One turn in which the model calls both
// (north__example_echo and south__example_echo, in one response): each call must reach only
// its own server, and each result must say which server answered.
// The body drives and observes (ctx.observe); the checks below judge what it observed.

type Calls = { tool: string | null | undefined; args: unknown }[];
/** The turn's token (it varies per run), the tools/call each server saw, the tool results by tool name. */
interface Routed {
  token: string;
  seen: { north: Calls; south: Calls };
  results: Record<string, { text: string; isError: boolean }>;
}
export interface Observed {
  /** How the routing turn ended (agent.wait's status): its end closes the window the calls are read in, so the body stops unless it finished. */
  end?: { status: string };
  routed?: Routed;
}

export default defineScenario<Observed>({
  name: "mcp-routing",
  proves: "same-named MCP tools on two servers route by server: north__example_echo reaches only north, south__example_echo only south, and each result names its server",
  topology: "shared",
  timeoutMs: 120_000,
  checks: [
    {
      id: "R-mcp-same-name-routing-turn",
      expectation: "the turn that calls north's and south's example_echo finishes (agent.wait status ok)",
      judge: (h) => h.end && { holds: h.end.status === "ok", observed: { status: h.end.status } },
    },
    {
      id: "R-mcp-same-name-routing",
      expectation: "a call to north's and to south's example_echo each reach only their own server; the results say which",
      judge: (h) => {
        if (!h.routed) return undefined;
        const { token, seen, results } = h.routed;
        const want = {
          north: [{ tool: "example_echo", args: { text: `to-north-${token}` } }],
          south: [{ tool: "example_echo", args: { text: `to-south-${token}` } }],
        };
        const wantResults = {
          north__example_echo: { text: `north echoed: to-north-${token}`, isError: false },
          south__example_echo: { text: `south echoed: to-south-${token}`, isError: false },
        };
        return {
          holds: JSON.stringify(seen) === JSON.stringify(want) && JSON.stringify(results) === JSON.stringify(wantResults),
          // The token varies per run: the signature names servers and texts without it.
          observed: {
            north: seen.north.map((c) => `${c.tool} ${JSON.stringify(c.args).replace(token, "<token>")}`),
            south: seen.south.map((c) => `${c.tool} ${JSON.stringify(c.args).replace(token, "<token>")}`),
            results: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.text.replace(token, "<token>")])),
          },
        };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, proceed } = ctx;
    const north = lab.mcp("north");
    const south = lab.mcp("south");
    const token = `r${Date.now().toString(36)}`;
    await mcpScene(ctx, { reset: ["north", "south"] }, async () => {
      await lab.model.setScript([
        {
          id: "route-both",
          match: { contains: `fleetlab-route ${token}` },
          rounds: [
            [
              { toolCall: { name: "north__example_echo", arguments: { text: `to-north-${token}` } } },
              { toolCall: { name: "south__example_echo", arguments: { text: `to-south-${token}` } } },
            ],
            [{ text: "fleetlab-ok: routed" }],
          ],
        },
      ]);
      const turn = await sendTurn(lab.operator.client, `fleetlab-route ${token}`);
      const end = await waitRun(lab.operator.client, turn.runId, 60_000);
      log(`turn ${turn.runId}: ${end.status} ${JSON.stringify(end.terminalReply?.text ?? "")}`);
      observe("end", { status: end.status });
      if (!proceed("R-mcp-same-name-routing-turn")) return;

      const calls = (records: Awaited<ReturnType<typeof north.requests>>) => toolCallsIn(records).map((r) => ({ tool: r.tool, args: r.args }));
      const seen = { north: calls(await north.requests()), south: calls(await south.requests()) };
      const results = Object.fromEntries(toolResults(await chatHistory(lab.operator.client, turn.sessionKey)).map((r) => [r.toolName, { text: r.text, isError: r.isError }]));
      log(`tools/call seen: ${JSON.stringify(seen)}; results: ${JSON.stringify(results)}`);
      observe("routed", { token, seen, results });
    });
  },
});
