import { defineScenario } from "../../lab/scenario.ts";
import * as op from "../../lab/clients/operator.ts";
import type { GatewayClient } from "../../lab/clients/gateway.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { faults } from "../../lab/faults/index.ts";
import { fleetSpec, percentiles, reconnectAll, type Return } from "../../lab/kits/fleet.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pollUntil } from "../../lab/core/wait.ts";
import { deadline } from "../../lab/core/pace.ts";

// A gateway restart with N connected: the fleet lab (fleetSpec: FLEET scripted nodes, default
// 200, paired and connected at bring-up, beside the real node hosts node-1 and node-2) loses its
// gateway to a graceful restart (SIGTERM, same container and state volume, as gateway-restart
// does), and every node comes back the way a node host does: the scripted fleet all at once,
// each retrying with backoff (reconnectAll: 250 ms doubling to 4 s, jitter) until admitted or
// 180 s of the lab's time; the real node hosts by themselves. What a user with a fleet relies on
// (docs/gateway/pairing.md: pairing is kept in the gateway's state; docs/gateway/security/
// rate-limiting.md: only wrong credentials count toward the failed-auth lockout):
//   - F-restart-fleet-back: every scripted node is admitted again, none left out, within 60 s
//     of the gateway answering again (/readyz and the operator reconnected; a wall-clock bound,
//     judged), as a paired device: no PAIRING_REQUIRED or NOT_PAIRED refusal during the return
//     (the gateway did not forget a pairing). The time to all back, its spread, the attempts and
//     every refusal counted by code (HTTP 503 for an upgrade turned away by the pre-auth budget)
//     are in the log and evidence, not in the signature;
//   - F-restart-no-lockout: no scripted node is refused AUTH_RATE_LIMITED during its return (a
//     fleet coming back must not lock itself out: a paired device's connect is no failed auth);
//   - F-restart-none-half-paired: afterwards node.list shows all N scripted nodes and both node
//     hosts connected and approved, device.pair.list has no pending request of a fleet device,
//     and every fleet device is in device.pair.list's and node.pair.list's paired lists;
//   - F-restart-real-nodes-back: node-1 and node-2 are connected and approved in node.list again
//     within 90 s of the gateway answering again (what gateway-restart allows each node host to
//     reconnect in; wall-clock bound, judged).
// Premises:
//   - P-fleet-connected: before the restart node.list shows all N scripted nodes and both node
//     hosts connected and approved (and each scripted node holds its open connection);
//   - P-restart-fleet-dropped: the restart closed every scripted node's connection (else the
//     return would be a second socket beside a live one, not a return).
// Own lab: a restart leaves what the shared scenarios must not start from (gateway-restart.ts).
// The body drives and observes (ctx.observe); the premises and the checks below judge what it
// observed. The checks are judged only once both premises were met (the body stops otherwise).
const BACK_WITHIN_S = 60;
const REAL_WITHIN_S = 90;
/** Refusals that say the gateway does not know the device as paired. */
const PAIRING_CODES = new Set(["PAIRING_REQUIRED", "NOT_PAIRED"]);

const listedOk = (e: op.NodeEntry | undefined) => e?.connected === true && e.approvalState === "approved";

/** A refused attempt's label: the code reconnectAll kept, HANDSHAKE_FAILED told apart by what the socket said. */
function labelOf(code: string, conn: GatewayClient | undefined): string {
  if (!conn) return code;
  if (code === "CONNECTION_CLOSED") {
    // Seen with 2026.9.6 (run 20261204-154400-a945933e6c81cca4): the gateway closed a connect it could not
    // take (its log: "worker task capacity reached", code=overloaded) with 1000 and no answer.
    const t = conn.transcript();
    const close = t.find((e) => e.dir === "meta" && e.kind === "close")?.note?.match(/code (\d+)/)?.[1];
    const unanswered = t.some((e) => e.kind === "req" && e.method === "connect") && !t.some((e) => e.kind === "res");
    return `CONNECTION_CLOSED (${close ? `code ${close}` : "no close code"}${unanswered ? ", connect unanswered" : ""})`;
  }
  if (code !== "HANDSHAKE_FAILED") return code;
  const notes = conn.transcript().filter((e) => e.dir === "meta" && e.kind === "error").map((e) => e.note ?? "").join(" | ");
  if (/\b503\b/.test(notes)) return "HTTP 503 (upgrade turned away)";
  if (/ECONNREFUSED/.test(notes)) return "HANDSHAKE_FAILED (ECONNREFUSED)";
  if (/no connect\.challenge/.test(notes)) return "HANDSHAKE_FAILED (no challenge)";
  return code;
}

function countOf(xs: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of [...xs].sort()) out[x] = (out[x] ?? 0) + 1;
  return out;
}

/** node.list read for the fleet and the node hosts: the fleet's entries, those connected and approved, the node hosts connected and approved. */
interface Census {
  fleetListed: number;
  fleetOk: number;
  realOk: number;
}

/** What the body observed. */
export interface Observed {
  /** How many scripted nodes the fleet has, and the real node hosts. */
  fleet?: { scripted: number; real: string[] };
  /** Before the restart: node.list's census as the wait for all of them last read it, and how many scripted nodes held an open connection. */
  before?: Census & { openConnections: number };
  /** How many scripted nodes still held a connection when the wait for the restart to close them all ended. */
  dropped?: { stillOpen: number };
  /** Each scripted node's return: ms after the gateway answered again (null: not admitted in time), and the refusals it met on the way (each label once). */
  returns?: { alias: string; backAfterReadyMs: number | null; refusedWith: string[] }[];
  /** Afterwards: node.list's census and the pairing lists' state, as the wait for all of them connected, approved and paired last read it. */
  after?: Census & { pendingFleetDevices: number; pendingFleetNodes: number; notPairedDevice: number; notPairedNode: number };
  /** node-1 and node-2 in node.list, as the wait for both (within REAL_WITHIN_S of the gateway answering) last read them. */
  realBack?: { node: string; connected: boolean | null; approvalState: string | null }[];
}

/** P-fleet-connected over what was observed. */
function connectedBefore(h: Observed): { met: boolean; observed: unknown } | undefined {
  if (!h.fleet || !h.before) return undefined;
  const n = h.fleet.scripted;
  const b = h.before;
  const allListed = b.fleetOk === n && b.realOk === h.fleet.real.length;
  return {
    met: allListed && b.openConnections === n,
    observed: { fleetConnectedApproved: b.fleetOk === n ? "all" : "fewer", realConnectedApproved: b.realOk, openConnections: b.openConnections === n ? "all" : "fewer" },
  };
}

/** P-restart-fleet-dropped over what was observed. */
function droppedByRestart(h: Observed): { met: boolean; observed: unknown } | undefined {
  if (!h.dropped) return undefined;
  return { met: h.dropped.stillOpen === 0, observed: { stillOpen: h.dropped.stillOpen === 0 ? "none" : "some" } };
}

export default defineScenario<Observed>({
  name: "fleet-restart",
  proves: "after a graceful gateway restart with N nodes connected, the whole fleet comes back paired within a minute, none locked out or left half-paired, and the real node hosts reconnect by themselves",
  topology: "own",
  alone: true,
  spec: fleetSpec(),
  premises: [
    { id: "P-fleet-connected", what: "before the restart node.list showed all N scripted nodes and both node hosts connected and approved", judge: connectedBefore },
    { id: "P-restart-fleet-dropped", what: "the restart closed every scripted node's connection", judge: droppedByRestart },
  ],
  checks: [
    {
      id: "F-restart-fleet-back",
      expectation: `every scripted node is admitted again within ${BACK_WITHIN_S} s of the restarted gateway answering, as a paired device (no PAIRING_REQUIRED or NOT_PAIRED refusal on the way)`,
      optional: true,
      judge: (h) => {
        if (!h.returns) return undefined;
        const back = h.returns.filter((x) => x.backAfterReadyMs !== null);
        const leftOut = h.returns.filter((x) => x.backAfterReadyMs === null);
        const allBackMs = leftOut.length ? undefined : percentiles(back.map((x) => x.backAfterReadyMs!)).max;
        const pairingRefusals = Object.keys(countOf(h.returns.flatMap((x) => x.refusedWith))).filter((c) => PAIRING_CODES.has(c) || /PAIR/.test(c));
        const within = allBackMs !== undefined && allBackMs <= BACK_WITHIN_S * 1_000;
        return { holds: leftOut.length === 0 && pairingRefusals.length === 0 && within, observed: normalise({ leftOut: leftOut.length ? "some" : "none", pairingRefusals, within_s: BACK_WITHIN_S, allBackWithin: within }) };
      },
    },
    {
      id: "F-restart-no-lockout",
      expectation: "no scripted node is refused AUTH_RATE_LIMITED while the fleet returns",
      optional: true,
      judge: (h) => {
        if (!h.returns) return undefined;
        const rateLimited = h.returns.filter((x) => x.refusedWith.includes("AUTH_RATE_LIMITED")).length;
        return { holds: rateLimited === 0, observed: normalise({ rateLimited: rateLimited ? "some" : "none" }) };
      },
    },
    {
      id: "F-restart-none-half-paired",
      expectation: "afterwards node.list shows all N scripted nodes and both node hosts connected and approved, no fleet device has a pending device request, and every fleet device is in device.pair.list's and node.pair.list's paired lists",
      optional: true,
      judge: (h) => {
        if (!h.fleet || !h.after) return undefined;
        const n = h.fleet.scripted;
        const a = h.after;
        const some = (k: number) => (k ? "some" : "none");
        return {
          holds: a.fleetOk === n && a.realOk === h.fleet.real.length && a.pendingFleetDevices === 0 && a.notPairedDevice === 0 && a.notPairedNode === 0,
          observed: normalise({
            fleetConnectedApproved: a.fleetOk === n ? "all" : "fewer",
            realConnectedApproved: a.realOk,
            pendingFleetDevices: some(a.pendingFleetDevices),
            notInPairedDevices: some(a.notPairedDevice),
            notInPairedNodes: some(a.notPairedNode),
          }),
        };
      },
    },
    {
      id: "F-restart-real-nodes-back",
      expectation: `node-1 and node-2 reconnect by themselves: connected and approved in node.list within ${REAL_WITHIN_S} s of the restarted gateway answering`,
      optional: true,
      judge: (h) => {
        if (!h.realBack) return undefined;
        const notBack = h.realBack.filter((x) => !(x.connected === true && x.approvalState === "approved"));
        return { holds: notBack.length === 0, observed: normalise({ within_s: REAL_WITHIN_S, notBack }) };
      },
    },
  ],
  timeoutMs: 600_000,
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const aliases = lab.scriptedAliases;
    const n = aliases.length;
    const real = lab.nodes.map((m) => m.alias);
    const fleetIds = new Set(aliases.map((a) => lab.scripted(a).nodeId));
    const gw = lab.spec.gateway.alias;
    const fleet = { scripted: n, real };
    observe("fleet", fleet);
    await scene(ctx, { evidence: { fleet: n, realNodes: real, backWithinS: BACK_WITHIN_S, realWithinS: REAL_WITHIN_S } }, async ({ evidence, tl }) => {
      // ---- before: the fleet and the node hosts connected and approved
      const census = (list: op.NodeEntry[]) => {
        const fleet = list.filter((e) => fleetIds.has(e.nodeId));
        return {
          fleetListed: fleet.length,
          fleetOk: fleet.filter(listedOk).length,
          realOk: real.filter((r) => listedOk(list.find((e) => e.displayName === r))).length,
        };
      };
      const before = await pollUntil("the fleet and the node hosts connected and approved in node.list", async () => census(await op.listNodes(lab.operator.client)), (c) => c.fleetOk === n && c.realOk === real.length, { deadlineMs: deadline(60_000), intervalMs: 1_000, signal });
      const open = aliases.filter((a) => lab.scripted(a).current).length;
      evidence.before = { ...before.last, openConnections: open, ms: before.ms };
      log(`before the restart: node.list ${JSON.stringify(before.last)} of ${n} scripted and ${real.length} node hosts; ${open} scripted nodes hold an open connection`);
      const seenBefore = { ...before.last, openConnections: open };
      observe("before", seenBefore);
      if (!connectedBefore({ fleet, before: seenBefore })?.met) return;
      const pairingBefore = { device: await op.listDevicePairing(lab.operator.client), node: await op.listNodePairing(lab.operator.client) };
      evidence.pairingBefore = { devicePaired: pairingBefore.device.paired.filter((d) => fleetIds.has(d.deviceId)).length, devicePending: pairingBefore.device.pending.length, nodePaired: pairingBefore.node.paired.filter((d) => fleetIds.has(d.nodeId)).length, nodePending: pairingBefore.node.pending.length };

      // ---- the restart (graceful: SIGTERM, 10 s before the engine would SIGKILL), as gateway-restart
      const restart = faults.restart(lab, gw, { timeoutSeconds: 10, timeoutMs: 60_000, timeline: tl });
      const t0 = Date.now();
      const r = await restart.inject();
      const op1 = await lab.reconnectOperator({ timeoutMs: 90_000, signal });
      const readyAt = Date.now();
      log(`gateway restarted in ${Math.round(r.injectMs)} ms; /readyz ${Math.round(r.totalMs) + op1.readyMs} ms after the restart call; operator reconnected in ${op1.connectMs} ms (${readyAt - t0} ms after the restart call)`);
      await restart.heal();

      // Every scripted node's connection closed by the restart (a client notices a socket gone without a close frame by its tick watch).
      const dropped = await pollUntil("every scripted node's connection closed by the restart", () => aliases.filter((a) => lab.scripted(a).current).length, (k) => k === 0, { deadlineMs: deadline(60_000), from: readyAt, intervalMs: 250, signal });
      log(`scripted nodes still holding a connection ${dropped.ms} ms after the gateway answered: ${dropped.last}`);
      observe("dropped", { stillOpen: dropped.last });
      if (!droppedByRestart({ dropped: { stillOpen: dropped.last } })?.met) return;

      // ---- the return: the fleet all at once (reconnectAll), the node hosts by themselves
      const connsBefore = new Map(aliases.map((a) => [a, lab.scripted(a).connections.length]));
      const startedAt = Date.now();
      // Awaited after the fleet's return: its failure is kept as a value at once, so a rejection
      // meanwhile cannot end the process as unhandled; it is thrown where it is awaited.
      const realPoll = pollUntil(
        "node-1 and node-2 connected and approved in node.list again",
        async () => {
          const list = await op.listNodes(lab.operator.client);
          return real.map((a) => {
            const e = list.find((x) => x.displayName === a);
            return { node: a, connected: e?.connected ?? null, approvalState: e?.approvalState ?? null };
          });
        },
        (xs) => xs.every((x) => x.connected === true && x.approvalState === "approved"),
        { deadlineMs: REAL_WITHIN_S * 1_000, from: readyAt, intervalMs: 500, signal },
      ).catch((failed: unknown) => ({ failed }));
      const returns: Return[] = await reconnectAll(lab.fleet, aliases, { timeoutMs: deadline(180_000), signal, seed: 7 });
      const realEnd = await realPoll;
      if ("failed" in realEnd) throw realEnd.failed;
      const realBack = realEnd;

      const labelled = returns.map((x) => {
        const conns = lab.scripted(x.alias).connections.slice(connsBefore.get(x.alias));
        return { ...x, labels: x.refusals.map((c, i) => labelOf(c, conns[i])), backAfterReadyMs: x.backMs === undefined ? undefined : x.backMs + (startedAt - readyAt) };
      });
      const back = labelled.filter((x) => x.backAfterReadyMs !== undefined);
      const leftOut = labelled.filter((x) => x.backAfterReadyMs === undefined);
      const spread = percentiles(back.map((x) => x.backAfterReadyMs!));
      const attempts = percentiles(labelled.map((x) => x.attempts));
      const refusals = countOf(labelled.flatMap((x) => x.labels));
      const refusedNodes = countOf(labelled.flatMap((x) => [...new Set(x.labels)]));
      const allBackMs = leftOut.length ? undefined : spread.max;
      log(`fleet back: ${back.length} of ${n} admitted again; ${allBackMs === undefined ? `${leftOut.length} left out (${leftOut.slice(0, 5).map((x) => x.alias).join(", ")}${leftOut.length > 5 ? ", ..." : ""})` : `all back ${allBackMs} ms after the gateway answered`}`);
      log(`time back after the gateway answered: ${spread.text}; reconnectAll began ${startedAt - readyAt} ms after it`);
      log(`attempts per node: p50 ${attempts.p50}, p95 ${attempts.p95}, max ${attempts.max} (${labelled.reduce((k, x) => k + x.attempts, 0)} in all)`);
      log(`refusals during the return: ${JSON.stringify(refusals)} (nodes refused at least once, by code: ${JSON.stringify(refusedNodes)})`);
      log(`node hosts: ${JSON.stringify(realBack.last)} ${realBack.held ? `back ${realBack.ms} ms after the gateway answered` : `not back within ${REAL_WITHIN_S} s`}`);
      evidence.restart = { detail: r, operator: op1, readyAfterRestartCallMs: readyAt - t0, droppedMs: dropped.ms };
      evidence.fleetReturn = {
        startedAfterReadyMs: startedAt - readyAt,
        admitted: back.length,
        leftOut: leftOut.map((x) => ({ alias: x.alias, attempts: x.attempts, refusals: countOf(x.labels) })),
        allBackAfterReadyMs: allBackMs ?? null,
        spread,
        attempts: { n: attempts.n, p50: attempts.p50, p95: attempts.p95, p99: attempts.p99, max: attempts.max, total: labelled.reduce((k, x) => k + x.attempts, 0) },
        refusals,
        refusedNodes,
        nodes: labelled.map((x) => ({ alias: x.alias, backAfterReadyMs: x.backAfterReadyMs ?? null, attempts: x.attempts, refusals: x.labels })),
      };
      evidence.realNodes = { held: realBack.held, msAfterReady: realBack.ms, last: realBack.last };

      // ---- judged (F-restart-fleet-back, F-restart-no-lockout): each node's return, its refusals each once
      observe(
        "returns",
        labelled.map((x) => ({ alias: x.alias, backAfterReadyMs: x.backAfterReadyMs ?? null, refusedWith: [...new Set(x.labels)] })),
      );

      const after = await pollUntil(
        "the fleet and the node hosts connected, approved and paired, with no pending request",
        async () => {
          const [list, devices, nodes] = await Promise.all([op.listNodes(lab.operator.client), op.listDevicePairing(lab.operator.client), op.listNodePairing(lab.operator.client)]);
          const pairedDevices = new Set(devices.paired.map((d) => d.deviceId));
          const pairedNodes = new Set(nodes.paired.map((d) => d.nodeId));
          return {
            ...census(list),
            pendingFleetDevices: devices.pending.filter((p) => fleetIds.has(p.deviceId)).length,
            pendingFleetNodes: nodes.pending.filter((p) => fleetIds.has(p.nodeId)).length,
            notPairedDevice: [...fleetIds].filter((id) => !pairedDevices.has(id)).length,
            notPairedNode: [...fleetIds].filter((id) => !pairedNodes.has(id)).length,
          };
        },
        (c) => c.fleetOk === n && c.realOk === real.length && c.pendingFleetDevices === 0 && c.notPairedDevice === 0 && c.notPairedNode === 0,
        { deadlineMs: deadline(30_000), intervalMs: 1_000, signal },
      );
      const a = after.last;
      log(`afterwards: ${JSON.stringify(a)} (${after.held ? "held" : "did not hold"} ${after.ms} ms after the return)`);
      evidence.after = { held: after.held, ms: after.ms, ...a };
      // F-restart-none-half-paired and F-restart-real-nodes-back read the waits' last reads (each wait held exactly when its last read did).
      observe("after", a);
      observe("realBack", realBack.last);
    });
  },
});
