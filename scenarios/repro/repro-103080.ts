// Upstream: two issues closed by one fix, PR openclaw/openclaw#103093 "fix(nodes): keep Gateway
// connections healthy and consistent" (merged 2026-07-09; "Closes #103079, Closes #103080").
// - openclaw/openclaw#103079 "[Bug]: Node invoke timeout semantics diverge across Gateway and
//   node" (closed; reported on main 8656c3b357f6): "Invoke a node command with `timeoutMs: 0`.
//   Observe the Gateway reject immediately while the node continues running the command."
//   Expected there: "The Gateway resolves one timeout value and uses it on both sides. Zero
//   disables the deadline, matching the Swift and TypeScript node implementations; oversized
//   values are clamped before dispatch." Actual: "The Gateway creates `setTimeout(..., 0)` for
//   zero and forwards the original oversized value even when its own timer is clamped."
// - openclaw/openclaw#103080: its own thread is not in the issue corpus this lab searches; the
//   fix's description names the other node-connection fault it closes: "Gateway-connected nodes
//   could remain falsely online after a missed WebSocket pong". The fix: "The existing 25-second
//   protocol ping now terminates a peer after one missed pong and lets the normal close path
//   release node state." (The rest of the PR, managed node-service installs, is out of a lab's
//   reach.) This scenario was asked for as "repro-103080" with #103080 as the timeoutMs-0 report;
//   the tracker has that report as #103079, so the checks below are named for what they judge.
//
// What the user should see (asserted here), as the issue and the fix describe it:
// - R-103079-zero-timeout-no-deadline: a node.invoke with timeoutMs 0 is neither refused at once
//   nor cut by a default bound: it reaches the node with no deadline (timeoutMs 0 or none: one
//   value on both sides), stays open while the node withholds its answer (HOLD_S, longer than the
//   gateway's 30 s default invoke timeout), and ends with the node's answer, unchanged, within
//   ANSWER_S of the node sending it. "Hangs while the node works" is the fixed behaviour; the
//   verdict still comes from an answer the operator was seen to receive, never from a wait that
//   ended with nothing.
// - R-103079-oversized-timeout-clamped: a node.invoke whose timeoutMs is above Node's timer range
//   (OVERSIZED_MS) reaches the node clamped to a timer-safe value (at most 2147483647 ms: what the
//   node's setTimeout can hold), and the node's answer comes back; or the gateway refuses it
//   before dispatch. Never the raw value to the node, whose timer would fire at once.
// - R-103093-missed-pong-offline: once the node's pongs stop arriving (dropped at its tap, while
//   its other frames flow), the gateway ends the connection and node.list shows the node
//   disconnected (still paired) within PONG_BOUND_S (one 25 s ping to miss, its 25 s pong window,
//   and the next 25 s tick at the latest, plus slack), not connected forever.
//
// How this lab reproduces it: an own lab with the scripted node (lab/clients/scripted-node.ts)
// and no node host; the scripted node pairs as an operator pairs a node. The operator invokes
// system.notify with timeoutMs 0; the scripted node withholds its answer for HOLD_S, then answers.
// Premise P-103079-invoke-withheld: the invoke reached the node (node.invoke.request on its tap
// and in its own record) and the node withheld its answer through HOLD_S. Then system.which with
// timeoutMs OVERSIZED_MS, answered at once. Then a wire rule on the scripted node's tap drops
// every pong the node sends (faults.wire.withholdPong; its ws client answers every ping, and the
// tap drops the answer). Premise P-103093-pongs-withheld: the gateway pinged the connection and
// the tap dropped at least one of the node's pongs, and the scripted node itself never closed the
// connection. `make repro NAME=repro-103080 N=1 AIM_OFF=1` has the node answer the invoke at once
// and the pong rule drop the gateway's pongs (which it never sends) instead: both premises must
// read unmet and the verdict unknown.
//
// Read in the package (not a run): 2026.9.4, 2026.9.5 and 2026.9.6 carry the fix's two gateway
// halves (timeoutMs 0 arms no deadline; a missed pong terminates the socket), so the first and
// last checks are expected to hold; an oversized timeoutMs is carried as an absolute deadline and
// sent to the node as the remaining time, unclamped (node.invoke.request timeoutMs ~3e9).
// Outcome (matrix-20261202-034151-fe4c, 2026.9.4/9.5/9.6): known on all three. timeoutMs 0 is no
// deadline (open 40 s, the node's late answer back in 29 ms) and a missed pong ends the connection
// (node.list disconnected 59 s after the first dropped pong); an oversized timeoutMs reaches the
// node unclamped (2999999955: R-103079-oversized-timeout-clamped). AIM_OFF=1: caught 1/1.
// The body drives and observes (ctx.observe); the checks and premises below judge what it observed.
import { defineScenario, LabInfraError, labStep, type CheckDef, type FindingRecord } from "../../lab/scenario.ts";
import { refusal, isRefused, type Refused } from "../../lab/clients/operator.ts";
import type { ReceivedInvoke } from "../../lab/clients/scripted-node.ts";
import { WS_OPCODE, type Frame } from "../../lab/clients/tap.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { nodeEntry, pairScripted } from "../../lab/kits/pairing.ts";
import { answerOf, invokePayload } from "../../lab/kits/node-wire.ts";
import { memberLog } from "../../lab/kits/logs.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pollUntil } from "../../lab/core/wait.ts";

/** How long the node withholds the timeoutMs-0 invoke: past the gateway's 30 s default invoke timeout. */
const HOLD_S = 40;
/** From the node's late answer to the operator holding it. */
const ANSWER_S = 10;
/** Above Node's timer range (2^31-1 ms): a setTimeout given this fires after 1 ms. */
const OVERSIZED_MS = 3_000_000_000;
/** The longest timeout a Node.js timer holds. */
const TIMER_MAX_MS = 2_147_483_647;
/** From the pong rule in effect to the node shown disconnected: up to 25 + 25 + 25 s on 2026.9.6, with slack. */
const PONG_BOUND_S = 90;

const ZERO = "R-103079-zero-timeout-no-deadline";
const OVERSIZED = "R-103079-oversized-timeout-clamped";
const PONG = "R-103093-missed-pong-offline";

const OVERSIZED_EXPECTATION = `a node.invoke with timeoutMs ${OVERSIZED_MS} (above Node's timer range) reaches the node with a timer-safe timeoutMs (1..${TIMER_MAX_MS}) and the node's answer comes back, or is refused before dispatch; never sent to the node unclamped`;

const findings: FindingRecord[] = [
  {
    // Reproduced on 2026.9.6 (runs 20261202-032149-81b0 and -041825-ab58, the excerpt's): node.invoke system.which with timeoutMs
    // 3000000000 was forwarded to the scripted node with timeoutMs 2999999955 (the raw remaining
    // time, tap frame #25), above what a Node timer holds; the scripted node answered at once and
    // the operator got that answer. A real node host's timer for it would fire at once. #103079's
    // step 4 and its expected behaviour ("oversized values are clamped before dispatch").
    id: OVERSIZED,
    expectation: OVERSIZED_EXPECTATION,
    signature: { nodeGot: "above the timer range", operatorGot: "the node's answer" },
    versions: ["2026.9.6", "2026.9.5", "2026.9.4"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-103079-oversized-timeout-clamped.json",
  },
];

/** An operator's node.invoke as it went: open until settled, then its answer or refusal, and when. */
interface Call {
  sentAt: number;
  settled?: { at: number; answer: Record<string, unknown> | Refused };
}

/** The node's late answer to the timeoutMs-0 invoke. */
const LATE = { fleetlab: "late answer", heldS: HOLD_S };
/** The node's answer to the oversized invoke. */
const WHICH_ANSWER = { path: "/usr/bin/git", fleetlab: "oversized" };

/** How an operator's node.invoke ended: the gateway's answer, or its refusal. */
interface Ended {
  answer: Record<string, unknown> | Refused;
}
/** What the scripted node recorded of one invoke: the timeoutMs it was given (absent: none) and what it did with it. */
interface NodeGot {
  timeoutMs?: number;
  outcome: ReceivedInvoke["outcome"];
}
/** One control frame (ping, pong, close) on the scripted node's tap. */
type ControlFrame = Pick<Frame, "seq" | "dir" | "opcode" | "action">;

export interface Observed {
  /** The timeoutMs-0 invoke through the node's hold: its request on the node's tap (seq), the node's record of it then, the operator's call if it ended within the hold. */
  zeroHold?: { requestSeq: number | null; node: NodeGot | null; endedDuringHold: Ended | null };
  /** After the node's late answer: the gateway's answer to the node, and the operator's call as it ended within ANSWER_S (null: still open). */
  zeroAnswer?: { ack: unknown; final: Ended | null };
  /** The oversized invoke: the node's record of it, and what the operator got. */
  oversized?: { node: NodeGot | null; operatorGot: Record<string, unknown> | Refused };
  /** The pong rule's window: the direction it dropped pongs in, whether it fired, the control frames on the tap, node.list's entry at the bound (or when it showed the node disconnected), the node's side of the connection's end. */
  pong?: { dir: Frame["dir"]; ruleFirstFired: unknown; control: ControlFrame[]; entry: { connected: boolean; paired?: boolean } | null; closed: { code: number; reason: string } | null };
}

/** "CODE/DETAILS" of a refusal, for a signature. */
const refusedAs = (r: Refused) => `${r.code}/${r.detailsCode ?? "-"}`;
const nodeGot = (i: ReceivedInvoke): NodeGot => ({ timeoutMs: i.timeoutMs, outcome: i.outcome });
/** node.list shows the node disconnected. */
const shownOffline = (e: { connected: boolean } | null | undefined) => !!e && !e.connected;

/** The pong window's control frames: the gateway's pings, the pongs dropped in `dir`, and whether the node closed the connection itself. */
function pongWire(control: ControlFrame[], dir: Frame["dir"]) {
  return {
    pings: control.filter((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.ping),
    dropped: control.filter((f) => f.dir === dir && f.opcode === WS_OPCODE.pong && f.action === "drop"),
    nodeClosed: control.some((f) => f.dir === "node->gw" && f.opcode === WS_OPCODE.close),
  };
}

const checks: CheckDef<Observed>[] = [
  {
    id: ZERO,
    expectation: `a node.invoke with timeoutMs 0 reaches the node with no deadline (timeoutMs 0 or none), is neither refused at once nor cut by a default bound while the node withholds its answer for ${HOLD_S} s, and ends with the node's answer, unchanged, within ${ANSWER_S} s of the node sending it`,
    judge: (h) => {
      if (!h.zeroHold || !h.zeroAnswer) return undefined;
      const during = h.zeroHold.endedDuringHold;
      const final = h.zeroAnswer.final;
      const nodeTimeout = h.zeroHold.node?.timeoutMs;
      const noDeadline = nodeTimeout === undefined || nodeTimeout === 0;
      const got = final && !isRefused(final.answer) ? invokePayload(final.answer) : undefined;
      const theNodes = JSON.stringify(got) === JSON.stringify(LATE);
      return {
        holds: !during && noDeadline && !!final && theNodes,
        observed: normalise({
          hold_s: HOLD_S,
          within_s: ANSWER_S,
          nodeGotDeadline: noDeadline ? "none" : "a deadline",
          duringHold: during ? (isRefused(during.answer) ? refusedAs(during.answer) : "a result") : "open",
          afterAnswer: during ? "ended before" : !final ? "open" : isRefused(final.answer) ? refusedAs(final.answer) : theNodes ? "the node's answer" : "another answer",
          ackIgnored: (h.zeroAnswer.ack as { ignored?: unknown } | null)?.ignored === true,
        }),
      };
    },
  },
  {
    id: OVERSIZED,
    expectation: OVERSIZED_EXPECTATION,
    judge: (h) => {
      if (!h.oversized) return undefined;
      const { node, operatorGot: big } = h.oversized;
      const sent = node?.timeoutMs;
      const timerSafe = sent !== undefined && sent > 0 && sent <= TIMER_MAX_MS;
      const refusedBeforeDispatch = !node && isRefused(big) && big.code === "INVALID_REQUEST";
      const theNodes = !isRefused(big) && JSON.stringify(invokePayload(big)) === JSON.stringify(WHICH_ANSWER);
      return {
        holds: refusedBeforeDispatch || (timerSafe && theNodes),
        observed: normalise({
          nodeGot: !node ? "nothing" : sent === undefined ? "no timeout" : sent > TIMER_MAX_MS ? "above the timer range" : sent <= 0 ? "zero" : "timer-safe",
          operatorGot: isRefused(big) ? refusedAs(big) : theNodes ? "the node's answer" : "another answer",
        }),
      };
    },
  },
  {
    id: PONG,
    expectation: `once the node's pongs stop arriving (its other frames flowing), the gateway ends the connection and node.list shows the node disconnected, still paired, within ${PONG_BOUND_S} s`,
    judge: (h) => {
      if (!h.pong) return undefined;
      const { entry, closed } = h.pong;
      const { nodeClosed } = pongWire(h.pong.control, h.pong.dir);
      const shownDisconnected = shownOffline(entry);
      return {
        holds: shownDisconnected && !!closed && !nodeClosed && entry?.paired === true,
        observed: normalise({
          within_s: PONG_BOUND_S,
          shownDisconnected,
          connection: closed ? (nodeClosed ? "closed by the node" : "ended by the gateway") : "open",
          paired: entry?.paired ?? null,
        }),
      };
    },
  },
];

export default defineScenario<Observed>({
  name: "repro-103080",
  upstream: {
    issue: 103079,
    title: "[Bug]: Node invoke timeout semantics diverge across Gateway and node",
    status: "fixed",
    fixPr: 103093,
    related: [103080],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/103079",
  },
  protocolSteps: [
    "Connect a node (role node, paired and approved) that declares the command system.which.",
    "As an operator, send `{\"type\":\"req\",\"method\":\"node.invoke\",\"params\":{\"nodeId\":\"<node>\",\"command\":\"system.which\",\"params\":{\"bins\":[\"git\"]},\"timeoutMs\":3000000000}}` (above 2147483647, the largest delay a Node timer holds).",
    "On the node's socket, read the `node.invoke.request` event's `timeoutMs`: it arrives as 2999999955 (the raw remaining time), not clamped; expected a value within 1..2147483647, or the invoke refused before dispatch.",
  ],
  proves: "a node.invoke with timeoutMs 0 has no deadline on either side and ends with the node's late answer; an oversized timeoutMs reaches the node timer-safe; a node that misses pongs is shown offline (openclaw/openclaw#103079, #103080, fix PR #103093)",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  bug: [ZERO, OVERSIZED, PONG],
  premises: [
    {
      id: "P-103079-invoke-withheld",
      what: `the timeoutMs-0 invoke reached the scripted node (node.invoke.request on its tap and in its own record) and the node withheld its answer through ${HOLD_S} s`,
      aimOff: "the scripted node answers the invoke at once",
      judge: (h) => {
        if (!h.zeroHold) return undefined;
        const { requestSeq, node } = h.zeroHold;
        return { met: requestSeq !== null && !!node && node.outcome === "withheld", observed: { onTap: requestSeq !== null, nodeGotIt: !!node, nodeOutcome: node?.outcome ?? null } };
      },
    },
    {
      id: "P-103093-pongs-withheld",
      what: "the gateway pinged the scripted node's connection and the tap dropped at least one of the node's pongs; the scripted node itself never closed that connection",
      aimOff: "the pong rule drops the gateway's pongs (gw->node), which it never sends, instead of the node's",
      judge: (h) => {
        if (!h.pong) return undefined;
        const w = pongWire(h.pong.control, h.pong.dir);
        return { met: w.pings.length > 0 && w.dropped.length > 0 && !!h.pong.ruleFirstFired && !w.nodeClosed, observed: { pings: w.pings.length > 0, pongsDropped: w.dropped.length > 0, nodeClosedItself: w.nodeClosed } };
      },
    },
  ],
  checks,
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    const alias = "scripted-1";
    const node = lab.scripted(alias);
    const tap = lab.tap(alias);
    const operator = lab.operator.client;
    await scene(ctx, { evidence: { nodeId: node.nodeId, bounds: { HOLD_S, ANSWER_S, OVERSIZED_MS, PONG_BOUND_S } } }, async ({ evidence, tl }) => {
      const paired = await labStep(`pairing ${alias}`, () => pairScripted(lab, alias, { signal }));
      log(`${alias} paired in ${paired.ms} ms`);

      // ---- timeoutMs 0, the node withholding its answer
      node.answerWith("system.notify", aimOff === "P-103079-invoke-withheld" ? { ok: true, payload: LATE } : "withhold");
      const since = await tap.seq();
      const zero: Call = { sentAt: Date.now() };
      // The handler is attached at once (an unhandled rejection would end the process) and the
      // call is not awaited: its end is observed through `zero`, to the bounds below. The lab's own
      // request timeout sits past them all, so what ends the call within them is the gateway.
      void operator
        .request<Record<string, unknown>>("node.invoke", { nodeId: node.nodeId, command: "system.notify", params: { title: "fleetlab", body: "timeoutMs 0" }, idempotencyKey: crypto.randomUUID(), timeoutMs: 0 }, { timeoutMs: (HOLD_S + ANSWER_S + 30) * 1000 })
        .catch(refusal)
        .then((answer) => (zero.settled = { at: Date.now(), answer }));
      const held = await pollUntil(`node.invoke (timeoutMs 0) still open for ${HOLD_S} s`, () => zero.settled, (s) => s !== undefined, { deadlineMs: HOLD_S * 1000, from: zero.sentAt, intervalMs: 250, signal });
      const endedDuringHold = held.held ? zero.settled : undefined;
      const received = node.invokes().find((i) => i.command === "system.notify");
      const request = (await tap.frames({ since })).find((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === "system.notify");
      const withheldThroughHold = received?.outcome === "withheld";
      log(`node.invoke system.notify timeoutMs 0: ${endedDuringHold ? `ended after ${endedDuringHold.at - zero.sentAt} ms: ${JSON.stringify(endedDuringHold.answer)}` : `still open after ${HOLD_S} s`}; node got it: ${received ? `yes (timeoutMs ${received.timeoutMs ?? "none"}, ${received.outcome})` : "no"}; on the tap: ${request ? `#${request.seq}` : "none"}`);
      observe("zeroHold", { requestSeq: request?.seq ?? null, node: received ? nodeGot(received) : null, endedDuringHold: endedDuringHold ? { answer: endedDuringHold.answer } : null });

      // The node answers now, late; the operator must get exactly that answer.
      let ackToNode: unknown = null;
      const answeredAt = Date.now();
      if (received && withheldThroughHold) {
        ackToNode = await node.answer(received, { ok: true, payload: LATE }).catch(refusal);
      }
      const after = await pollUntil(`the operator's node.invoke ends within ${ANSWER_S} s of the node's answer`, () => zero.settled, (s) => s !== undefined, { deadlineMs: ANSWER_S * 1000, from: answeredAt, intervalMs: 100, signal });
      const final = after.held ? zero.settled! : undefined;
      const result = (await tap.frames({ since })).find((f) => f.dir === "node->gw" && f.method === "node.invoke.result" && f.invokeId === received?.id);
      log(`after the node's answer (gateway ack ${JSON.stringify(ackToNode)}; result on the tap: ${result ? `#${result.seq}` : "none"}): ${final ? `${JSON.stringify(final.answer)} ${final.at - answeredAt} ms later` : `the operator's call still open ${ANSWER_S} s later`}`);
      observe("zeroAnswer", { ack: ackToNode, final: final ? { answer: final.answer } : null });
      evidence.zero = { sentAt: zero.sentAt, endedDuringHold: endedDuringHold ?? null, node: received ?? null, requestSeq: request?.seq ?? null, ackToNode, answeredAt, final: final ?? null, resultSeq: result?.seq ?? null };

      // ---- an oversized timeoutMs, answered at once
      node.answerWith("system.which", { ok: true, payload: WHICH_ANSWER });
      const since2 = await tap.seq();
      const big = await operator
        .request<Record<string, unknown>>("node.invoke", { nodeId: node.nodeId, command: "system.which", params: { bins: ["git"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: OVERSIZED_MS }, { timeoutMs: 20_000 })
        .catch(refusal);
      const bigReceived = node.invokes().find((i) => i.command === "system.which");
      const bigRequest = (await tap.frames({ since: since2 })).find((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === "system.which");
      const bigResult = (await tap.frames({ since: since2 })).find((f) => f.dir === "node->gw" && f.method === "node.invoke.result" && f.invokeId === bigReceived?.id);
      const sent = bigReceived?.timeoutMs;
      log(`node.invoke system.which timeoutMs ${OVERSIZED_MS}: ${JSON.stringify(big)}; the node got timeoutMs ${sent ?? "none"} (invoke ${bigReceived?.id ?? "none"}; request on the tap: ${bigRequest ? `#${bigRequest.seq}` : "none"}, result: ${bigResult ? `#${bigResult.seq} ${JSON.stringify(answerOf(bigResult).payload)}` : "none"})`);
      observe("oversized", { node: bigReceived ? nodeGot(bigReceived) : null, operatorGot: big });
      evidence.oversized = { asked: OVERSIZED_MS, node: bigReceived ?? null, requestSeq: bigRequest?.seq ?? null, operatorGot: big };

      // ---- the node's pongs stop arriving
      const conn = node.current;
      if (!conn) throw new LabInfraError(`${alias} has no open connection before the pong check: the state the fix's second half starts from was not reached`);
      let closed: { code: number; reason: string; at: number } | undefined;
      conn.onClose((code, reason) => (closed ??= { code, reason, at: Date.now() }));
      const since3 = await tap.seq();
      const dir = aimOff === "P-103093-pongs-withheld" ? "gw->node" : "node->gw";
      const pongs = faults.wire.withholdPong({ lab, node: alias }, dir, {}, { timeline: tl, label: `${alias}: ${dir} pongs dropped at the tap` });
      await labStep("arming the pong rule at the tap", () => pongs.inject());
      const armedAt = Date.now();
      const offline = await pollUntil(`${alias} shown disconnected in node.list`, () => nodeEntry(lab, node.nodeId), shownOffline, { deadlineMs: PONG_BOUND_S * 1000, from: armedAt, intervalMs: 500, signal });
      // The node's side of the end arrives through the tap a moment after the gateway's: wait for it (bounded).
      if (offline.held) await pollUntil(`${alias}'s connection closed`, () => closed, (c) => c !== undefined, { deadlineMs: 5_000, intervalMs: 50, signal });
      const rule = await tap.rule(pongs.ruleId);
      await pongs.heal();
      const wire = await tap.frames({ since: since3 });
      const control = wire.filter((f) => f.opcode >= WS_OPCODE.close).map((f) => ({ seq: f.seq, dir: f.dir, opcode: f.opcode, action: f.action }));
      const { pings, dropped } = pongWire(control, dir);
      const gwCloseFrame = wire.find((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.close);
      const heartbeat = (await memberLog(lab, lab.spec.gateway.alias, armedAt - 1_000).catch(() => [])).filter((l) => /heartbeat/i.test(l.line)).map((l) => `${new Date(l.at).toISOString()} ${l.line}`);
      const entry = offline.last;
      observe("pong", { dir, ruleFirstFired: rule?.firstFired ?? null, control, entry: entry ? { connected: entry.connected, paired: entry.paired } : null, closed: closed ? { code: closed.code, reason: closed.reason } : null });
      log(`pongs ${dir} dropped at the tap from ${new Date(armedAt).toISOString()}: ${pings.length} ping(s), ${dropped.length} pong(s) dropped; node.list ${offline.held ? `shows ${alias} disconnected ${offline.ms} ms after` : `still shows ${alias} connected after ${PONG_BOUND_S} s`}; the connection ${closed ? `closed (${closed.code}${closed.reason ? ` ${closed.reason}` : ""}) ${closed.at - armedAt} ms after, ${gwCloseFrame ? "with" : "without"} a close frame from the gateway` : "still open"}; gateway log: ${heartbeat.join(" | ") || "no heartbeat line"}`);
      evidence.pong = { dir, armedAt, rule: rule ?? null, pings: pings.map((f) => f.seq), droppedPongs: dropped.map((f) => f.seq), closed: closed ?? null, gwCloseFrame: gwCloseFrame?.close ?? null, shownDisconnectedMs: offline.held ? offline.ms : null, entry: entry ?? null, gatewayLog: heartbeat };
    });
  },
});
