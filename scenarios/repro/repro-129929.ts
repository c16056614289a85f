// Upstream: openclaw/openclaw PR #129929 "fix(workers): keep remote execution on its selected
// node" (merged 2026-08-26) and PR #130445 "fix(workers): report full nodes as at capacity, not
// offline" (merged 2026-08-26). Neither names a linked issue in what could be read (the search
// tool's tracker copy): both are maintainer PRs whose descriptions are the reports.
//
// Symptoms, as the PRs describe them:
//   - #129929: "users starting work on a remembered remote node could silently run the session
//     locally when that node was offline or full". The fix keeps the operator's selected paired
//     node in Control UI's session picker and blocks Start ("the existing actionable
//     disabled-state gate") instead of falling back to Local; its proof is Chromium's Start
//     Session action that must create, dispatch and run on the selected node.
//   - #130445: "users sending a turn to an existing remote-node session were told the device was
//     offline when it was connected but all worker slots were occupied", after the ten-second
//     availability grace: the run failed with WorkerRunnerUnavailableError ("The device runner is
//     offline. Reconnect it, retry later, or bring the session back to this gateway.") where the
//     capacity error ("device worker capacity remained full") was meant.
//
// The path: Control UI's picker reads environments.list; Start is sessions.create and then
// sessions.dispatch {key, deviceId} to the selected node; a turn is chat.send into the placed
// session, whose worker launch (worker.launch.v1 to the node) waits up to 10 s for a free slot.
//
// What the user should have seen (asserted here): work aimed at the chosen node either runs on
// that node or fails with an error that names that node as offline or at capacity; it never
// runs on the gateway instead, and a full node is never called offline:
//   - R-129929-full-dispatch: sessions.dispatch of a new session to the full node is refused with
//     the capacity error naming the node, and places nothing.
//   - R-130445-full-turn: a turn to a session already placed on the full node ends with the
//     capacity error, not the offline one, and runs nowhere (no model request carries its token,
//     so the gateway did not run it locally; the marker only the node has was not read).
//   - R-129929-offline-dispatch: sessions.dispatch of a new session to the killed node is refused
//     with the not-connected error naming the node, and places nothing.
//   - R-129929-offline-turn: a turn to a session placed on the killed node does not run while the
//     node is down (no model request carries its token) and, once the node is back, runs on the
//     node: it reads a file only the node's checkout has, and worker.launch.v1 for its placement
//     is on the node's tap (lab/kits/proof.ts).
//
// How this lab gets there: an own lab with one real node host whose worker capacity is 1
// (nodeHost.workerRuns.capacity, as scenarios/capacity.ts), git, no MCP servers. Sessions A and
// B are placed on node-1 while it is free (a placement takes no slot). Full: a turn in A is held
// at its model call (the slot is taken; node.list shows 0 of 1 free), then C is dispatched to
// node-1 and a turn is sent to B. Offline: A is released, node-1 is SIGKILLed (faults.kill; its
// container and state volume kept), C is dispatched to node-1 again and a turn is sent to B; the
// node is started again and B's turn is followed to its end.
//
// Premises (proven from node.list, else the verdict is unknown): P-129929-full: node-1 was
// connected with no free worker slot when C was dispatched and when B's turn ended;
// P-129929-offline: node-1 was not connected (and the kill in effect) when C was dispatched and
// through B's down window. Self-test (make repro NAME=repro-129929 N=1 AIM_OFF=1), each premise
// on its own: aimed at P-129929-full, no turn holds the slot (the node is killed as usual); aimed
// at P-129929-offline, the node is not killed (the slot is held as usual). Either way that
// premise is unmet and the verdict unknown.
//
// When B's offline turn ended is judged against when the node was back, both on the gateway's
// clock: agent.wait's endedAt against node.list's connectedAtMs of the node's new connection. The
// turn is followed through agent.wait's early "pending" answers for the whole down window and on
// after the node's start. The offline error while the node is down is right (at 2 s or at 7 s);
// the same error after the node was back is the mislabel the fixes are about.
//
// Out of this lab's reach: the Control UI picker itself (the silent fallback of #129929 was a
// browser-side choice of Local: sessions.create without sessions.dispatch). The lab drives no
// browser; it asserts the gateway contract the fixed picker relies on (the dispatch to the chosen
// node refused by name, nothing placed or run on the gateway) and records the environments.list
// row the picker reads for the node in each state.
//
// Outcome: not reproduced on 2026.9.6 (run 20261202-031449-24702a61dc2867a4, PASS, 229 s with
// the lab's bring-up on a loaded machine). Full (node.list: connected, 0 of 1 slots free; its
// environments.list row "available" with workerSlots 0/1): dispatch of C refused at once,
// INVALID_REQUEST "device worker is at capacity (all worker slots in use): <nodeId>; ...", C not
// placed; B's turn: the gateway sent worker.launch.v1 to the node, which answered 10 s later
// WORKER_CAPACITY_EXHAUSTED "node worker capacity remained full for 10000 ms", and the run ended
// error "device worker capacity remained full" after 10-20 s, with no model request carrying its
// token (it ran nowhere, the gateway included). Offline (killed; node.list disconnected 256 ms
// after the kill; its environments.list row "unavailable"): dispatch of C refused "device worker
// node is not connected: <nodeId>; reconnect it before retrying", C not placed; B's turn was
// accepted and ran nowhere for 8 s (no model request), then, once node-1 was started again, ran
// on it: it read the node-only file ("written only on node-1"), one worker.launch.v1 on its tap.
//
// Judged by when it ended (run 20261204-031824-65f9ddc78791c549, PASS): B's turn ran nowhere while node-1 was
// down and ended ok on the node 20 s after the node was back (endedAt after connectedAtMs).
//
// Bounds not paced (lab/core/pace.ts: they are what is judged, in wall time): WHILE_DOWN_S.
// FULL_TURN_S and AFTER_RETURN_S are the lab's waits for a run's end, paced.
// The body drives and observes (ctx.observe); the checks and premises below judge what it observed.
import { LabInfraError, defineScenario, type CheckDef, type ScenarioContext } from "../../lab/scenario.ts";
import { faults } from "../../lab/faults/index.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { nodeByAlias, summarizeNode, waitConnected, waitForNode, waitForWorkerHost, slotsFree } from "../../lab/kits/nodes.ts";
import { plantNodeMarker, proveTurnOnNode, turnOnNode, type NodeMarker, type TurnProof, type TurnSeen } from "../../lab/kits/proof.ts";
import { nodeScene } from "../../lab/kits/scene.ts";
import { openSession, type Session } from "../../lab/kits/session.ts";
import { listEnvironments, startHeldTurn, uniqueName, type HeldTurn } from "../../lab/kits/workers.ts";
import { publishWorkspace } from "../../lab/kits/workspace.ts";

/** A full node's turn waits up to 10 s for a slot (session-hosting.md): its end is read within this. */
const FULL_TURN_S = 40;
/** How long a turn to the killed node is watched for a run anywhere. */
const WHILE_DOWN_S = 8;
/** From the node's start to the queued turn's end, on the node. */
const AFTER_RETURN_S = 120;

const capacityRefusal = (nodeId: string) => `device worker is at capacity (all worker slots in use): ${nodeId}; stop an existing worker environment or retry when a slot is free`;
const offlineRefusal = (nodeId: string) => `device worker node is not connected: ${nodeId}; reconnect it before retrying`;
/** The run error of a turn that found no free slot within the grace (WorkerRunnerCapacityError). */
const CAPACITY_ERROR = "device worker capacity remained full";
/** The run error #130445 showed for a full node (WorkerRunnerUnavailableError). */
const OFFLINE_ERROR = "The device runner is offline";

/** node.list's connection and worker slots for the node. */
interface SlotsView {
  connected: boolean;
  workerSlots: { total: number; available: number } | null;
}
/** sessions.dispatch of C to the node, and C's placement state afterwards. */
interface DispatchSeen {
  dispatch: DispatchOutcome;
  placementAfter: string | null;
}
/** A turn with a node-only marker followed to its end: chat.send's status, agent.wait's end, the model requests carrying its token, what the node proof read. */
interface TurnEnd {
  chatSend: string;
  status: string;
  error?: unknown;
  ms: number;
  modelRequests: number;
  seen: TurnSeen;
}

export interface Observed {
  /** node-1's nodeId (the refusals name it). */
  nodeId?: string;
  /** node-1 when C was dispatched and when B's turn ended, while full. */
  full?: { atDispatch: SlotsView; atTurnEnd: SlotsView };
  fullDispatch?: DispatchSeen;
  fullTurn?: TurnEnd;
  /** node-1 when C was dispatched and at the end of B's down window, while killed. */
  offline?: { atDispatch: SlotsView; atWindowEnd: SlotsView };
  offlineDispatch?: DispatchSeen;
  /**
   * B's turn sent while node-1 was down: chat.send's status, the model requests carrying its token
   * within the down window, agent.wait's end, when it ended and when the node was back (both on
   * the gateway's clock: agent.wait endedAt, node.list connectedAtMs), what the node proof read.
   */
  offlineTurn?: { chatSend: string; modelRequestsWhileDown: number; end: { status: string; text?: string; error?: unknown }; endedAt: number | null; backAt: number | null; seen: TurnSeen };
}

const isFull = (n: SlotsView) => n.connected && n.workerSlots?.available === 0;

/** A dispatch refused with `refusal` naming the node, C placed nowhere. */
function dispatchRefused(nodeId: string, d: DispatchSeen, refusal: (nodeId: string) => string) {
  return {
    holds: !d.dispatch.ok && d.dispatch.message === refusal(nodeId) && d.placementAfter !== "active",
    observed: normalise({ ...withNodeId(d.dispatch, nodeId), placementAfter: d.placementAfter }),
  };
}

/** A watched turn as it reads: its error as text, whether it ran on the node, and its signature. */
function turnRead(t: TurnEnd): { error: string | undefined; proof: { holds: boolean; observed: TurnProof["observed"] }; observed: Record<string, unknown> } {
  const error = t.error === undefined ? undefined : typeof t.error === "string" ? t.error : JSON.stringify(t.error);
  const proof = turnOnNode(t.seen);
  const endedAfter = t.ms < 10_000 ? "<10s" : t.ms < 20_000 ? "10-20s" : ">=20s";
  return { error, proof, observed: normalise({ chatSend: t.chatSend, status: t.status, error: error ?? null, endedAfter, modelRequests: t.modelRequests, ...proof.observed }) };
}

/** When a turn ended against the node's return, on the gateway's clock. */
function whenEnded(ended: boolean, endedAt: number | null, backAt: number | null): string {
  return !ended ? "not ended" : endedAt !== null && backAt !== null && endedAt < backAt ? "before the node was back" : "after the node was back";
}

const checks: CheckDef<Observed>[] = [
  {
    id: "R-129929-full-dispatch",
    expectation: "sessions.dispatch of a new session to the chosen node while every worker slot is busy is refused with the capacity error naming that node, and places nothing (no fallback to the gateway)",
    judge: (h) => (h.nodeId !== undefined && h.fullDispatch ? dispatchRefused(h.nodeId, h.fullDispatch, capacityRefusal) : undefined),
  },
  {
    id: "R-130445-full-turn",
    expectation: `a turn to a session placed on a connected node whose slots are all busy is not run elsewhere: it runs on the node or ends with the capacity error ('${CAPACITY_ERROR}'), never with the offline error`,
    judge: (h) => {
      if (!h.fullTurn) return undefined;
      const t = turnRead(h.fullTurn);
      const fullError = t.error ?? "";
      return {
        holds: h.fullTurn.modelRequests === 0 ? h.fullTurn.status === "error" && fullError.includes(CAPACITY_ERROR) && !fullError.includes(OFFLINE_ERROR) : t.proof.holds,
        observed: t.observed,
      };
    },
  },
  {
    id: "R-129929-offline-dispatch",
    expectation: "sessions.dispatch of a new session to the chosen node while it is down is refused with the not-connected error naming that node, and places nothing (no fallback to the gateway)",
    judge: (h) => (h.nodeId !== undefined && h.offlineDispatch ? dispatchRefused(h.nodeId, h.offlineDispatch, offlineRefusal) : undefined),
  },
  {
    id: "R-129929-offline-turn",
    // Both ends keep the execution on the chosen node, which is what the PRs ask: the turn runs
    // there once the node is back (2026.9.6), or ends with the offline error having run nowhere
    // (2026.9.4, matrix of 2026-12-02). Neither PR says a waiting turn must run after the node
    // returns. The offline error counts only while the node is down, judged by the gateway's
    // own times: the same error after the node was back is the mislabel the fix is about.
    expectation: `a turn to a session placed on a node that is down runs nowhere while it is down (no model request within ${WHILE_DOWN_S} s), and then either ends with the offline error ('${OFFLINE_ERROR}') before the node is back (agent.wait endedAt before node.list connectedAtMs), having run nowhere, or runs on that node once it is back (a node-only file read; worker.launch.v1 on its tap); never elsewhere, never the offline error once the node is back`,
    judge: (h) => {
      if (!h.offlineTurn) return undefined;
      const { chatSend, modelRequestsWhileDown, end, endedAt, backAt, seen } = h.offlineTurn;
      const ended = whenEnded(end.status === "ok" || end.status === "error", endedAt, backAt);
      const doneError = JSON.stringify(end.error ?? end.text ?? "");
      const proof = turnOnNode(seen);
      return {
        holds:
          modelRequestsWhileDown === 0 &&
          (end.status === "error"
            ? ended === "before the node was back" && doneError.includes(OFFLINE_ERROR) && proof.observed.launches === 0 && proof.observed.reply === "none"
            : end.status === "ok" && ended === "after the node was back" && proof.holds),
        observed: normalise({
          chatSend,
          modelRequestsWhileDown,
          end: end.status,
          offlineError: end.status === "error" ? doneError.includes(OFFLINE_ERROR) : null,
          ended,
          ...proof.observed,
        }),
      };
    },
  },
];

export default defineScenario<Observed>({
  name: "repro-129929",
  upstream: {
    issue: 129929,
    kind: "pr",
    title: "fix(workers): keep remote execution on its selected node",
    status: "fixed",
    related: [130445],
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/pull/129929",
  },
  proves: "openclaw PRs #129929/#130445: work aimed at a chosen node that is full or offline is refused naming the node as at capacity or not connected (a full node never as offline), and never runs on the gateway instead; a queued turn runs on the node once it returns",
  topology: "own",
  spec: { nodes: { count: 1, capacity: 1 }, mcp: { servers: [] } },
  needs: [{ method: "sessions.dispatch" }],
  bug: ["R-129929-full-dispatch", "R-130445-full-turn", "R-129929-offline-dispatch", "R-129929-offline-turn"],
  premises: [
    {
      id: "P-129929-full",
      what: "node-1 was connected with no free worker slot (node.list) when C was dispatched and when B's turn ended",
      aimOff: "no turn holds node-1's one slot",
      judge: (h) => h.full && { met: isFull(h.full.atDispatch) && isFull(h.full.atTurnEnd), observed: h.full },
    },
    {
      id: "P-129929-offline",
      what: "node-1 was not connected (node.list; the kill in effect) when C was dispatched and at the end of B's down window",
      aimOff: "node-1 is not killed: it stays online",
      judge: (h) => h.offline && { met: !h.offline.atDispatch.connected && !h.offline.atWindowEnd.connected, observed: { atDispatch: h.offline.atDispatch.connected, atWindowEnd: h.offline.atWindowEnd.connected } },
    },
  ],
  checks,
  timeoutMs: 360_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    await nodeScene(ctx, {}, async ({ alias, evidence, tl }) => {
      const host = await waitForWorkerHost(lab, alias, { signal });
      const nodeId = host.nodeId;
      observe("nodeId", nodeId);
      log(`${alias}: ${JSON.stringify(summarizeNode(host))}`);
      const ws = await publishWorkspace(lab, { repo: uniqueName("repro-129929") });
      const [a, b, c] = [await openSession(lab, { workspace: ws }), await openSession(lab, { workspace: ws }), await openSession(lab, { workspace: ws })];
      // Placements while the node is free: a placement alone takes no slot.
      const da = await a.dispatch(alias);
      const db = await b.dispatch(alias);
      log(`A and B placed on ${alias} (${da.placement.state}, ${db.placement.state})`);

      // ---- 1. full: A's turn holds the only slot
      let held: HeldTurn | undefined;
      try {
        // Aimed off P-129929-full: no turn holds the slot (the offline half runs as usual).
        const fullAimedOff = aimOff === "P-129929-full";
        if (!fullAimedOff) {
          const markA = await plantNodeMarker(lab, alias, da.placement, { note: "holds the only slot" });
          held = await startHeldTurn(lab, a.key, markA.message, markA.nonce);
          await waitForNode(lab, alias, "its one slot in use", (n) => n.workerSlots?.available === 0, { signal });
        }
        const fullBefore = await nodeByAlias(lab, alias);
        const envFull = await environmentRow(lab, nodeId);
        log(`${alias} before the dispatch: ${JSON.stringify(summarizeNode(fullBefore))}; environments.list row: ${JSON.stringify(envFull)}`);

        const fullDispatch = await dispatchAsData(c, alias);
        const cAfterFull = await c.placement();
        log(`dispatch C to full ${alias}: ${JSON.stringify(fullDispatch)}; C's placement after: ${cAfterFull?.state ?? null}`);

        const markB = await plantNodeMarker(lab, alias, db.placement, { note: "sent while the node is full" });
        const fullTurn = await watchTurn(lab, b, markB, FULL_TURN_S * 1000, signal);
        const fullAfter = await nodeByAlias(lab, alias);
        log(`turn B on full ${alias}: ${JSON.stringify(turnRead(fullTurn.seen).observed)}; ${alias} after: ${JSON.stringify(summarizeNode(fullAfter))}`);

        observe("full", { atDispatch: slotsView(fullBefore), atTurnEnd: slotsView(fullAfter) });
        observe("fullDispatch", { dispatch: fullDispatch, placementAfter: cAfterFull?.state ?? null });
        observe("fullTurn", fullTurn.seen);
        Object.assign(evidence, { full: { before: fullBefore, after: fullAfter, environment: envFull, dispatchC: fullDispatch, placementCAfter: cAfterFull ?? null, turnB: fullTurn.evidence } });
      } finally {
        if (held) await held.finish().catch(() => {});
        await lab.model.release().catch(() => {});
      }
      await waitForNode(lab, alias, "its worker slot free", slotsFree, { signal });

      // ---- 2. offline: node-1 SIGKILLed (container and state volume kept)
      // B's current placement: a turn that ran (under the aim-off) may have moved its checkout.
      const markB2 = await plantNodeMarker(lab, alias, (await b.placement()) ?? db.placement, { note: "sent while the node is down" });
      const kill = faults.kill(lab, alias, { timeline: tl, inEffectWhen: async () => !(await nodeByAlias(lab, alias)).connected });
      // Aimed off P-129929-offline: node-1 is not killed (the full half ran as usual).
      const killed = !(aimOff === "P-129929-offline");
      if (killed) log(`${alias} killed; node.list disconnected ${Math.round((await kill.inject()).totalMs)} ms after the kill call`);
      const downBefore = await nodeByAlias(lab, alias);
      const envDown = await environmentRow(lab, nodeId);
      log(`${alias} before the dispatch: ${JSON.stringify(summarizeNode(downBefore))}; environments.list row: ${JSON.stringify(envDown)}`);

      const downDispatch = await dispatchAsData(c, alias);
      const cAfterDown = await c.placement();
      log(`dispatch C to down ${alias}: ${JSON.stringify(downDispatch)}; C's placement after: ${cAfterDown?.state ?? null}`);

      const tapSince = await lab.tap(alias).seq();
      const sent = await b.send(markB2.message);
      // expectation: "no run within WHILE_DOWN_S" is quoted in R-129929-offline-turn: the window is fixed, not paced.
      // The whole window: agent.wait answers "pending" after about 2 s, so one wait is not it
      // (waitEnd waits through the pending answers until the run ends or the window is over).
      const early = await b.waitEnd(sent.runId, WHILE_DOWN_S * 1000, { signal, expectation: true });
      const endedWhileDown = early.status === "ok" || early.status === "error";
      const ranWhileDown = await requestsFor(lab, markB2.nonce);
      const downAfter = await nodeByAlias(lab, alias);
      log(`turn B while ${alias} is down: chat.send ${sent.status}; over ${WHILE_DOWN_S} s: ${early.status}; model requests carrying it: ${ranWhileDown}`);
      observe("offline", { atDispatch: slotsView(downBefore), atWindowEnd: slotsView(downAfter) });
      observe("offlineDispatch", { dispatch: downDispatch, placementAfter: cAfterDown?.state ?? null });

      if (killed) {
        const start = await kill.heal();
        log(`${alias} started again (${Math.round(start.totalMs)} ms)`);
      }
      // The node back: its new connection's connectedAtMs (the gateway's clock, as endedAt below).
      const back = (await waitConnected(lab, alias, true, { timeoutMs: 60_000, signal })).node;
      const backAt = typeof back.connectedAtMs === "number" ? back.connectedAtMs : undefined;
      // A turn that ended while the node was down is judged as it ended; one still waiting is followed to its end.
      const done = endedWhileDown ? early : await b.waitEnd(sent.runId, AFTER_RETURN_S * 1000, { signal });
      const doneEnded = done.status === "ok" || done.status === "error";
      const endedAt = typeof done.raw.endedAt === "number" ? done.raw.endedAt : undefined;
      if (doneEnded && (endedAt === undefined || backAt === undefined)) {
        throw new LabInfraError(`the run's end or the node's return has no gateway time (agent.wait endedAt ${JSON.stringify(done.raw.endedAt)}, node.list connectedAtMs ${JSON.stringify(back.connectedAtMs)}): when the turn ended against the node's return cannot be told`);
      }
      const ended = whenEnded(doneEnded, endedAt ?? null, backAt ?? null);
      const proof = await proveTurnOnNode(lab, { alias, marker: markB2, reply: done.text, tapSince });
      log(`turn B: ${done.status} ${JSON.stringify(done.text ?? done.error ?? null)}, ended ${endedAt ?? "-"} ${ended} (connectedAtMs ${backAt ?? "-"}); on the node: ${JSON.stringify(proof.observed)}`);
      observe("offlineTurn", {
        chatSend: sent.status,
        modelRequestsWhileDown: ranWhileDown,
        end: { status: done.status, text: done.text, error: done.error },
        endedAt: endedAt ?? null,
        backAt: backAt ?? null,
        seen: turnSeen(markB2, done.text, proof),
      });
      Object.assign(evidence, {
        offline: { before: downBefore, windowEnd: downAfter, environment: envDown, dispatchC: downDispatch, placementCAfter: cAfterDown ?? null, turnB: { sent, whileDown: early, modelRequestsWhileDown: ranWhileDown, end: done, endedAt: endedAt ?? null, nodeBackAt: backAt ?? null, ended, proof: proof.evidence } },
      });
    });
  },
});

/** sessions.dispatch of `s` to `alias`, its refusal kept as data (dispatchOrRefusal), in this repro's evidence form. */
async function dispatchAsData(s: Session, alias: string): Promise<DispatchOutcome> {
  const d = await s.dispatchOrRefusal(alias);
  return d.ok ? { ok: true, state: d.placement.state, deviceId: d.placement.runner?.deviceId } : { ok: false, code: d.code, message: d.message };
}
type DispatchOutcome = { ok: true; state: string; deviceId?: string } | { ok: false; code: string; message: string };

function withNodeId(d: DispatchOutcome, nodeId: string): Record<string, unknown> {
  return d.ok ? { accepted: d.state, onNode: d.deviceId === nodeId } : { code: d.code, message: d.message.replaceAll(nodeId, "<nodeId>") };
}

/** The node's row in environments.list (what Control UI's picker reads). */
async function environmentRow(lab: ScenarioContext["lab"], nodeId: string): Promise<unknown> {
  return (await listEnvironments(lab)).find((e) => e.id === `node:${nodeId}`) ?? null;
}

/** Model requests whose user text carries `nonce`: a run of that turn anywhere (the gateway included) makes one. */
async function requestsFor(lab: ScenarioContext["lab"], nonce: string): Promise<number> {
  return (await lab.model.requests()).filter((r) => (r.userText ?? "").includes(nonce)).length;
}

function slotsView(n: { connected: boolean; workerSlots?: { total: number; available: number } }): SlotsView {
  return { connected: n.connected, workerSlots: n.workerSlots ?? null };
}

/** What the node proof read (proveTurnOnNode), for a history: turnOnNode judges it again. */
function turnSeen(mark: NodeMarker, reply: string | undefined, proof: TurnProof): TurnSeen {
  return { alias: mark.alias, marker: { nonce: mark.nonce, reply: mark.reply, ...(mark.environmentId ? { environmentId: mark.environmentId } : {}) }, reply: reply ?? null, launches: [...proof.evidence.launches] };
}

/**
 * A turn with a node-only marker, followed to its end (through agent.wait's early pending), with
 * where it ran: the model requests carrying its token (any run makes one) and what the node proof read.
 */
async function watchTurn(lab: ScenarioContext["lab"], s: Session, mark: NodeMarker, deadlineMs: number, signal: AbortSignal) {
  const tapSince = await lab.tap(mark.alias).seq();
  const sent = await s.send(mark.message);
  const end = await s.waitEnd(sent.runId, deadlineMs, { signal });
  const modelRequests = await requestsFor(lab, mark.nonce);
  const proof = await proveTurnOnNode(lab, { alias: mark.alias, marker: mark, reply: end.text, tapSince });
  const transcript = (await s.history().catch(() => [])).filter((m) => m.role === "custom").map((m) => `${m.customType}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
  const seen: TurnEnd = { chatSend: sent.status, status: end.status, error: end.error, ms: end.ms, modelRequests, seen: turnSeen(mark, end.text, proof) };
  return { seen, evidence: { sent, end, modelRequests, transcript, proof: proof.evidence } };
}
