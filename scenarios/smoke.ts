import { defineScenario } from "../lab/scenario.ts";
import type { RequestStatus } from "../lab/clients/model.ts";

// The standard topology comes up with both node hosts paired, approved, connected and
// offering session hosting; one gateway-local agent turn is answered by the scripted model
// across the network; then the runner takes the topology down and checks nothing is left.
// Pairing is part of what it proves: a node host that exits, a pairing refused or never
// completed during bring-up is OpenClaw's failure (SystemUnderTestError from Lab.up), so this
// scenario fails on it, never "unknown"; a node that is paired but not ready fails R-smoke-nodes.
// The body drives and observes (ctx.observe); the checks below judge what it observed.

/** One node.list entry, as the body logs it. */
type Listed = { name: string | null; approvalState: string | null; paired: boolean; connected: boolean; sessionHost: boolean | null };

export type Observed = {
  /** The lab's node hosts (aliases) and node.list as the operator read it after bring-up. */
  nodes?: { aliases: string[]; listed: Listed[] };
  /** The gateway-local agent turn: the message sent and the reply it gave. */
  turn?: { message: string; reply: string };
  /** The scripted model's requests: how many it saw, and the status of each that carried the turn's message, in order. */
  model?: { requests: number; turn: RequestStatus[] };
};

export default defineScenario<Observed>({
  name: "smoke",
  proves: "standard topology up, every node paired/approved/connected as a session host, one agent turn answered by the scripted model, clean teardown",
  topology: "own",
  pairing: "fresh",
  timeoutMs: 180_000,
  checks: [
    {
      id: "R-smoke-nodes",
      expectation: "after bring-up every node host of the lab is in node.list, paired, approved, connected and a session host",
      judge: (h) => {
        if (!h.nodes) return undefined;
        const short = h.nodes.aliases.flatMap((alias) => {
          const n = h.nodes!.listed.find((x) => x.name === alias);
          if (!n) return [{ alias, listed: false }];
          const ready = n.paired === true && n.approvalState === "approved" && n.connected === true && n.sessionHost === true;
          return ready ? [] : [{ alias, listed: true, paired: n.paired, approvalState: n.approvalState, connected: n.connected, sessionHost: n.sessionHost }];
        });
        return { holds: short.length === 0, observed: short };
      },
    },
    {
      id: "R-smoke-reply",
      expectation: "a gateway-local agent turn is answered by the scripted model's default script (fleetlab-ok)",
      judge: (h) => h.turn && { holds: /fleetlab-ok/.test(h.turn.reply), observed: { reply: h.turn.reply.replaceAll(h.turn.message, "<message>").slice(0, 300) } },
    },
    {
      id: "R-smoke-model",
      expectation: "the turn's request reaches the scripted model from the gateway over the lab network and completes",
      judge: (h) => h.model && { holds: h.model.turn.length >= 1 && h.model.turn.at(-1) === "completed", observed: { received: h.model.turn.length, lastStatus: h.model.turn.at(-1) ?? null } },
    },
  ],
  async run({ lab, log, observe }) {
    const nodes = await lab.operator.listNodes();
    log(`node.list: ${JSON.stringify(nodes.map((n) => ({ name: n.displayName, approvalState: n.approvalState, paired: n.paired, connected: n.connected, sessionHost: n.sessionHost })))}`);
    observe("nodes", {
      aliases: lab.nodes.map((m) => m.alias),
      listed: nodes.map((n) => ({ name: n.displayName ?? null, approvalState: n.approvalState ?? null, paired: n.paired, connected: n.connected, sessionHost: n.sessionHost ?? null })),
    });

    const message = `smoke turn ${lab.run.record.seed}`;
    const reply = await lab.operator.agentTurn(message, { timeoutMs: 90_000 });
    log(`agent reply: ${JSON.stringify(reply)}`);
    observe("turn", { message, reply });

    // The reply came through the provider API, from the gateway, over the lab network.
    const seen = await lab.model.requests();
    const turn = seen.filter((r) => JSON.stringify(r.body ?? {}).includes(message));
    observe("model", { requests: seen.length, turn: turn.map((r) => r.status) });
  },
});
