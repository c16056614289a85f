import { defineScenario } from "../lab/scenario.ts";
import { waitRun } from "../lab/clients/sessions.ts";
import { cancelParams, cancelsIn } from "../lab/kits/mcp.ts";
import { mcpScene } from "../lab/kits/scene.ts";
import { sendTurn } from "../lab/kits/turns.ts";
import { pollUntil } from "../lab/core/wait.ts";
import { deadline } from "../lab/core/pace.ts";

// A call of north__example_echo is held at the north server; the operator cancels the turn
// (chat.abort). The cancel must reach the server as notifications/cancelled naming that
// call's JSON-RPC id, and the turn must end aborted.
// The body drives and observes (ctx.observe); the check below judges what it observed.

/** After chat.abort: the held call's JSON-RPC id, the cancels north received, the held call as north says it ended, the turn's end. */
interface Aborted {
  heldRpcId: string | number | null;
  cancels: { requestId: unknown; reason: unknown }[];
  heldAfter: { status: string; cancelReason: string | null } | null;
  chat: string | null;
  run: string;
}
export interface Observed {
  aborted?: Aborted;
}

/** The cancel as judged: one for the held call's id, the held call cancelled by it, the turn aborted. */
function cancelView(a: Aborted) {
  return { cancelForHeldCall: a.cancels.some((c) => c.requestId === a.heldRpcId), heldCall: a.heldAfter, chat: a.chat, run: a.run };
}

export default defineScenario<Observed>({
  name: "mcp-cancel-call",
  proves: "chat.abort during an MCP call sends notifications/cancelled for that call to the server and the turn ends aborted",
  topology: "shared",
  timeoutMs: 120_000,
  checks: [
    {
      id: "R-mcp-cancel-call",
      expectation: "cancelling the turn (chat.abort) cancels the call at the server (notifications/cancelled)",
      judge: (h) => {
        if (!h.aborted) return undefined;
        const observed = cancelView(h.aborted);
        return { holds: observed.cancelForHeldCall && observed.heldCall?.status === "cancelled" && observed.heldCall.cancelReason === "notifications/cancelled" && observed.chat === "aborted", observed };
      },
    },
  ],
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const north = lab.mcp("north");
    const client = lab.operator.client;
    await mcpScene(ctx, { reset: ["north"] }, async ({ events, extra }) => {
      await north.hold("example_echo");
      const turn = await sendTurn(client, 'fleetlab-call north__example_echo {"text":"cancel-me"}');
      const held = await north.waitForHeld(30_000);
      log(`held at north: ${held.id} rpcId ${held.rpcId}`);
      const aborted = await client.request("chat.abort", { sessionKey: turn.sessionKey, runId: turn.runId });
      const end = await waitRun(client, turn.runId, 20_000);
      // The cancel is polled for at north until it is there (or a window of the lab's own, paced,
      // has passed: what is judged is the state at its end), not read once after a fixed 1 s.
      const atNorth = await pollUntil(
        "the cancel of the held call at north",
        async () => ({ cancels: cancelsIn(await north.requests()).map(cancelParams), heldAfter: (await north.held({ all: true })).find((h) => h.id === held.id) }),
        (v) => v.cancels.some((c) => c.requestId === held.rpcId) && v.heldAfter?.status === "cancelled",
        { deadlineMs: deadline(10_000), signal },
      );
      const { cancels, heldAfter } = atNorth.last;
      const seen: Aborted = {
        heldRpcId: held.rpcId,
        cancels,
        heldAfter: heldAfter ? { status: heldAfter.status, cancelReason: heldAfter.cancelReason } : null,
        chat: events.chatOutcome(turn.runId) ?? null,
        run: end.status,
      };
      log(`after chat.abort: ${JSON.stringify(cancelView(seen))} (cancels seen: ${JSON.stringify(cancels)}; ${atNorth.held ? `at north ${atNorth.ms} ms after the run ended` : `not at north by the end of the window, ${atNorth.ms} ms after the run ended`})`);
      extra.observations = { turn, held, aborted, end, cancels, heldAfter };
      observe("aborted", seen);
    });
  },
});
