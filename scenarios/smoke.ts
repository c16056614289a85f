import assert from "node:assert/strict";
import { defineScenario } from "../lab/scenario.ts";

// The standard topology comes up with both node hosts paired, approved, connected and
// offering session hosting; one gateway-local agent turn is answered by the scripted model
// across the network; then the runner takes the topology down and checks nothing is left.
// Pairing is part of what it proves: a node host that exits, a pairing refused or never
// completed during bring-up is OpenClaw's failure (SystemUnderTestError from Lab.up), so this
// scenario fails on it, never "unknown"; a node that is paired but not ready fails below.
export default defineScenario({
  name: "smoke",
  proves: "standard topology up, every node paired/approved/connected as a session host, one agent turn answered by the scripted model, clean teardown",
  topology: "own",
  pairing: "fresh",
  timeoutMs: 180_000,
  async run({ lab, log }) {
    const nodes = await lab.operator.listNodes();
    log(`node.list: ${JSON.stringify(nodes.map((n) => ({ name: n.displayName, approvalState: n.approvalState, paired: n.paired, connected: n.connected, sessionHost: n.sessionHost })))}`);
    for (const m of lab.nodes) {
      const n = nodes.find((x) => x.displayName === m.alias);
      assert.ok(n, `node ${m.alias} is missing from node.list (names seen: ${nodes.map((x) => x.displayName).join(", ")})`);
      assert.equal(n.paired, true, `node ${m.alias} is not paired`);
      assert.equal(n.approvalState, "approved", `node ${m.alias} approvalState`);
      assert.equal(n.connected, true, `node ${m.alias} is not connected`);
      assert.equal(n.sessionHost, true, `node ${m.alias} is not a session host`);
    }

    const message = `smoke turn ${lab.run.record.seed}`;
    const reply = await lab.operator.agentTurn(message, { timeoutMs: 90_000 });
    log(`agent reply: ${JSON.stringify(reply)}`);
    assert.match(reply, /fleetlab-ok/, "the reply did not come from the scripted model's default script");

    // The reply came through the provider API, from the gateway, over the lab network.
    const seen = await lab.model.requests();
    const turn = seen.filter((r) => JSON.stringify(r.body ?? {}).includes(message));
    assert.ok(turn.length >= 1, `the scripted model never received the turn's message (it saw ${seen.length} request(s))`);
    assert.equal(turn.at(-1)!.status, "completed", "the model request for the turn did not complete");
  },
});
