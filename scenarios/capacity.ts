import assert from "node:assert/strict";
import { chatHistory, messageText, sendChat, waitRun, type Placement } from "../lab/clients/sessions.ts";
import { defineScenario, type CheckDef, type FindingRecord } from "../lab/scenario.ts";
import { writeJson } from "../lab/evidence/write.ts";
import { nodeByAlias, slotsFree, summarizeNode, waitForNode, waitForWorkerHost } from "../lab/kits/nodes.ts";
import { assertTurnOnNode, plantNodeMarker, proveTurnOnNode, provenWorkerTurn, turnOnNode, type NodeMarker, type TurnProof, type TurnSeen } from "../lab/kits/proof.ts";
import { createWorkerSession, dispatchOrRefusal, dispatchTo, placementOf, startHeldTurn, uniqueName } from "../lab/kits/workers.ts";
import { publishWorkspace } from "../lab/kits/workspace.ts";
import { pollUntil } from "../lab/core/wait.ts";

// Node hosts with one worker slot each. A turn held at its model call fills node-1; then:
//   - an explicit dispatch of another session to node-1 is refused (at capacity);
//   - automatic dispatch places it on a node with a free slot;
//   - a turn sent to another session already placed on node-1 is what users hit: the
//     pinned version admits it, waits ~10 s for a slot, then fails the run ("device worker
//     capacity remained full") and has not run it 30 s after the slot frees. Expected instead:
//     the turn waits for the slot and completes, as a turn to an offline node does.
// Once the held turn finishes, the failed session's next turn completes and slots are full.
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): WHILE_FULL_S, turn
// B's window while the slot is held, and the 500 ms reads of its run inside AFTER_SLOT_FREED_S.
export const CAPACITY_TURN_FINDING = "F-capacity-turn-fails-while-slots-full";
// How long turn B is watched while the slot is held, and how long it gets to be answered once
// the slot frees (a worker turn takes ~5 s here): the bound its finding's signature carries.
const WHILE_FULL_S = 30;
const AFTER_SLOT_FREED_S = 30;

// Registered findings: what OpenClaw was seen to do short of this scenario's expectations
// (judged by lab/findings/findings.ts). Add one only with its exact signature and the run
// folder that showed it.
const findings: FindingRecord[] = [
  {
    // Documented ("Launches beyond capacity wait up to 10 seconds for a durable slot"), but
    // chat.send has already admitted the turn: the user's message stays in the transcript
    // with no answer and must be re-sent by hand, while a turn to an offline node queues.
    id: "F-capacity-turn-fails-while-slots-full",
    expectation: "a turn sent to a session whose node has every worker slot busy waits for a slot and completes once one frees (as a turn to an offline node does)",
    signature: {
      chatSend: "started",
      agentWait: "error",
      error: "⚠️ Agent failed before reply: device worker capacity remained full.\nTo view logs, run `openclaw logs --follow` in a terminal.",
      failedAfter: "10-20s",
      transcript: ["run-failed-before-reply: This turn ended before a reply: device worker capacity remained full"],
      ranAfterSlotFreed: { within_s: 30, ran: false },
    },
    versions: ["2026.9.6"],
    kind: "shortfall",
    evidence: "fixtures/findings/F-capacity-turn-fails-while-slots-full.json",
  },
];

// The body drives and observes (ctx.observe); the check below judges what it observed.

/** Turn B, sent to a session on the full node, as observed: what the check reads. */
export interface TurnOnFullNode {
  /** chat.send's status. */
  chatSend: string;
  /** agent.wait's status and error at the end of the WHILE_FULL_S window while the slot was held. */
  agentWait: string;
  error?: unknown;
  /** How long that wait took (ms). */
  waitedMs: number;
  /** The session's transcript notes (custom messages: "<customType>: <content>"). */
  transcript: string[];
  /** After the slot freed: the bound it was watched for, the model requests that carried it, whether it was answered. */
  afterSlotFreed: { within_s: number; modelRequests: number; answered: boolean };
  /** What the proof that it ran on the node read (only when it was answered). */
  onNode?: TurnSeen;
}
export type Observed = {
  turnB?: TurnOnFullNode;
};

/** What proveTurnOnNode read, as a history keeps it: turnOnNode judges it again. */
function turnSeen(alias: string, marker: NodeMarker, reply: string | undefined, proof: TurnProof): TurnSeen {
  return { alias, marker: { nonce: marker.nonce, reply: marker.reply, ...(marker.environmentId ? { environmentId: marker.environmentId } : {}) }, reply: reply ?? null, launches: [...proof.evidence.launches] };
}

const failedAfter = (ms: number) => (ms < 10_000 ? "<10s" : ms < 20_000 ? "10-20s" : ">=20s");

const turnWaitsForSlot: CheckDef<Observed> = {
  id: CAPACITY_TURN_FINDING,
  expectation: "a turn sent to a session whose node has every worker slot busy waits for a slot and completes on that node once one frees (as a turn to an offline node does)",
  judge: (h) => {
    const b = h.turnB;
    if (!b) return undefined;
    const onNode = b.onNode && turnOnNode(b.onNode);
    const holds = !!onNode?.holds;
    return {
      holds,
      observed: holds
        ? undefined
        : {
            chatSend: b.chatSend,
            agentWait: b.agentWait,
            error: b.error,
            failedAfter: failedAfter(b.waitedMs),
            transcript: b.transcript,
            ranAfterSlotFreed: { within_s: b.afterSlotFreed.within_s, ran: b.afterSlotFreed.modelRequests > 0 || b.afterSlotFreed.answered },
            ...(onNode ? { onNode: onNode.observed } : {}),
          },
    };
  },
};

export default defineScenario<Observed>({
  name: "capacity",
  proves: "with one worker slot per node: dispatch to a full node is refused, autoDevice picks a free node, and a turn to a session on a full node waits for the slot and runs there (finding if it fails instead); every counted turn is proven to run on its node",
  topology: "own",
  findings,
  spec: { nodes: { count: 2, capacity: 1 } },
  timeoutMs: 300_000,
  checks: [turnWaitsForSlot],
  async run({ lab, log, file, observe, signal }) {
    const [full, ...others] = lab.nodes.map((m) => m.alias) as [string, ...string[]];
    for (const m of lab.nodes) {
      const n = await waitForWorkerHost(lab, m.alias, { signal });
      assert.equal(n.workerSlots?.total, 1, `${m.alias}: nodeHost.workerRuns.capacity 1 should give one worker slot`);
      log(`${m.alias}: ${JSON.stringify(summarizeNode(n))}`);
    }
    const fullNode = await nodeByAlias(lab, full);
    const evidence: Record<string, unknown> = {};

    const ws = await publishWorkspace(lab, { repo: uniqueName("capacity"), protocol: "smart" });
    const [a, b, c] = [await createWorkerSession(lab, ws), await createWorkerSession(lab, ws), await createWorkerSession(lab, ws)];

    // A placement alone takes no slot: two sessions go onto the one-slot node.
    const da = await dispatchTo(lab, a.key, full);
    const db = await dispatchTo(lab, b.key, full);
    for (const d of [da, db]) assert.deepEqual([d.placement.state, d.placement.runner?.deviceId], ["active", fullNode.nodeId], `session ${d.key} was not placed on ${full}`);
    assert.ok(slotsFree(await nodeByAlias(lab, full)), "placements alone took a worker slot");
    log(`sessions A and B placed on ${full} (${da.ms} ms, ${db.ms} ms); its slot is still free`);

    // Every counted turn reads a file only its node's checkout has (lab/kits/proof.ts).
    const markerA = await plantNodeMarker(lab, full, da.placement, { note: "holds the only slot" });
    const sinceA = await lab.tap(full).seq();
    const heldA = await startHeldTurn(lab, a.key, markerA.message, markerA.nonce);
    try {
      const busy = await waitForNode(lab, full, "its one slot in use", (n) => n.workerSlots?.available === 0, { signal });
      log(`turn A holds ${full}'s slot: ${JSON.stringify(busy.workerSlots)}`);

      // 1. Explicit dispatch to the full node: refused at once.
      const toFull = await dispatchOrRefusal(lab, c.key, full);
      const refused = toFull.ok ? { accepted: toFull.placement } : { code: toFull.code, message: toFull.message };
      const refusedMs = toFull.ms;
      log(`dispatch C to full ${full}: ${JSON.stringify(refused)} in ${refusedMs} ms`);
      assert.deepEqual(refused, {
        code: "INVALID_REQUEST",
        message: `device worker is at capacity (all worker slots in use): ${fullNode.nodeId}; stop an existing worker environment or retry when a slot is free`,
      });
      const cAfterRefusal = await placementOf(lab, c.key);
      assert.notEqual(cAfterRefusal?.state, "active", "a refused dispatch left an active placement");
      evidence.explicitDispatchToFullNode = { result: refused, ms: refusedMs, placementAfter: cAfterRefusal };

      // 2. Automatic dispatch: a node with a free slot, or a refusal when there is none.
      const toAuto = await dispatchOrRefusal(lab, c.key, "auto");
      const auto: { placement: Placement } | { code: string; message: string } = toAuto.ok ? { placement: toAuto.placement } : { code: toAuto.code, message: toAuto.message };
      log(`autoDevice dispatch of C: ${JSON.stringify(auto)} in ${toAuto.ms} ms`);
      if (others.length) {
        assert.ok("placement" in auto, `autoDevice found no node although ${others.join(", ")} had free slots: ${JSON.stringify(auto)}`);
        const onto = (await Promise.all(others.map((o) => nodeByAlias(lab, o)))).find((n) => n.nodeId === auto.placement.runner?.deviceId);
        assert.ok(onto, `autoDevice placed C on ${auto.placement.runner?.deviceId}, not on a node with a free slot (${others.join(", ")})`);
        evidence.autoDispatch = { placedOn: onto.displayName, placement: auto.placement };
      } else {
        assert.ok("code" in auto && auto.code === "INVALID_REQUEST" && auto.message.startsWith("all paired session-host nodes are at capacity"), JSON.stringify(auto));
        evidence.autoDispatch = auto;
      }

      // 3. A turn for session B, already placed on the full node.
      const markerB = await plantNodeMarker(lab, full, db.placement, { note: "waits for the slot" });
      const sinceB = await lab.tap(full).seq();
      const tB = performance.now();
      const sentB = await sendChat(lab.operator.client, b.key, markerB.message);
      // What B does while the slot is held, observed for WHILE_FULL_S: an end (ok or error), or
      // "timeout" (still going), which is no verdict by itself.
      // expectation: the WHILE_FULL_S window decides the finding's signature (failedAfter, agentWait): fixed, not paced
      const waitedB = await waitRun(lab.operator.client, sentB.runId, WHILE_FULL_S * 1000, { expectation: true });
      const waitedMs = Math.round(performance.now() - tB);
      log(`turn B on full ${full}: chat.send ${sentB.status}; agent.wait after ${waitedMs} ms: ${JSON.stringify(waitedB)}`);

      // Free the slot: turn A completes, on the node.
      const resultA = await heldA.finish();
      const proofA = await assertTurnOnNode(lab, { alias: full, marker: markerA, reply: resultA.text, tapSince: sinceA }, "turn A");
      await waitForNode(lab, full, "its slot free again", slotsFree, { signal });
      const freedAt = Date.now();
      log(`turn A answered (${JSON.stringify(resultA.text)}); ${full}'s slot is free`);
      evidence.turnA = { text: resultA.text, proof: proofA.evidence };

      // The fixed behaviour, polled until its deadline: B answered once the slot is free (its
      // run ends ok, or its answer shows in the transcript under another run). Only when that
      // deadline passes with nothing is "did not run" recorded, with its bound.
      const polled = await pollUntil(
        `turn B answered once ${full}'s slot is free`,
        async () => {
          // expectation: a snapshot of the run ("timeout": still going) inside the fixed poll: not paced
          const w = await waitRun(lab.operator.client, sentB.runId, 500, { expectation: true });
          const modelRequests = (await lab.model.requests()).filter((r) => (r.userText ?? "").includes(markerB.nonce)).length;
          const inHistory = w.status === "ok" ? undefined : (await chatHistory(lab.operator.client, b.key)).find((m) => m.role === "assistant" && messageText(m.content).includes(markerB.text));
          const text = w.status === "ok" ? (w.terminalReply?.text ?? "") : inHistory ? messageText(inHistory.content) : undefined;
          return { agentWait: w.status, modelRequests, text };
        },
        (v) => v.text !== undefined,
        { deadlineMs: AFTER_SLOT_FREED_S * 1000, from: freedAt, intervalMs: 1_000, signal },
      );
      const answered = polled.held ? polled.last : undefined;
      const modelSawB = polled.last.modelRequests;
      const proofB = answered ? await proveTurnOnNode(lab, { alias: full, marker: markerB, reply: answered.text, tapSince: sinceB }) : undefined;
      const history = await chatHistory(lab.operator.client, b.key);
      const custom = history.filter((m) => m.role === "custom").map((m) => `${m.customType}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
      log(`turn B within ${AFTER_SLOT_FREED_S} s of the slot freeing: ${answered ? `answered ${JSON.stringify(answered.text)}, on the node: ${JSON.stringify(proofB!.observed)}` : "no answer"}; model requests for it: ${modelSawB}; transcript notes: ${JSON.stringify(custom)}`);
      evidence.turnOnFullNode = { message: markerB.message, chatSend: sentB, agentWait: waitedB, waitedMs, afterSlotFreed: { within_s: AFTER_SLOT_FREED_S, ...polled, proof: proofB?.evidence ?? null }, transcript: history };

      observe("turnB", {
        chatSend: sentB.status,
        agentWait: waitedB.status,
        error: waitedB.error,
        waitedMs,
        transcript: custom,
        afterSlotFreed: { within_s: AFTER_SLOT_FREED_S, modelRequests: modelSawB, answered: !!answered },
        ...(answered && proofB ? { onNode: turnSeen(full, markerB, answered.text, proofB) } : {}),
      });

      // 4. The session is not stuck: its next turn answers, on the node.
      const retry = await provenWorkerTurn(lab, b.key, full, { note: "after the slot freed" });
      log(`turn B again: ${JSON.stringify(retry.text ?? retry.error)} in ${retry.ms} ms; on the node: ${JSON.stringify(retry.observed)}`);
      assert.ok(retry.proof.holds, `turn B again did not answer from ${full}: ${JSON.stringify(retry.observed)}`);
      evidence.retryB = retry;

      if ("placement" in auto) {
        const onto = evidence.autoDispatch as { placedOn: string };
        const turnC = await provenWorkerTurn(lab, c.key, onto.placedOn, { note: "on the auto node" });
        assert.ok(turnC.proof.holds, `turn C did not answer from ${onto.placedOn}: ${JSON.stringify(turnC.observed)}`);
        evidence.turnC = turnC;
      }
    } finally {
      await lab.model.release().catch(() => {});
    }

    const after = await Promise.all(lab.nodes.map((m) => waitForNode(lab, m.alias, "worker slot free", slotsFree, { signal })));
    evidence.nodesAfter = after.map(summarizeNode);
    writeJson(file("evidence.json"), evidence);
  },
});
