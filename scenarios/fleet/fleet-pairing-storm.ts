import { defineScenario, type FindingRecord } from "../../lab/scenario.ts";
import * as op from "../../lab/clients/operator.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { connectAndPair, type FleetNodeOutcome } from "../../lab/topology/fleet.ts";
import { fleetSize } from "../../lab/core/settings.ts";
import { percentiles } from "../../lab/kits/fleet.ts";
import { scene } from "../../lab/kits/scene.ts";

// A pairing storm: N new devices (scripted nodes, FLEET, default 200) ask the gateway at once,
// and the operator answers every one by name, as an admin with a fleet to enrol would. What a
// user enrolling a fleet relies on (docs/gateway/pairing.md: a device's first connect leaves a
// pending request the operator approves or rejects by its id):
//   - F-storm-every-asked: every one of the N first connects is refused PAIRING_REQUIRED with a
//     request id of its own, and device.pair.list lists a pending request for every one of
//     them (none lost, none merged);
//   - F-storm-approved-paired: every device the operator approved connects again, its node
//     pairing is asked and approved, and node.list shows it connected and approved;
//   - F-storm-rejected-stay-out: every device the operator rejected (one in ten, by its request
//     id) is refused when it connects again, and is in neither paired list;
//   - F-storm-none-half-paired: at the end, the fleet's devices in device.pair.list's paired list
//     are exactly the approved ones, each of them paired as a node too, and no request of an
//     approved device is still pending.
// Premise P-storm-at-once: the N requests were pending at the same time (device.pair.list read
// after every first connect was answered and before any approval listed N pending requests of
// the fleet); without it this was a queue, not a storm.
// Own lab: the gateway and the scripted fleet, connecting to it directly from the lab's process
// (no tap, node host, MCP or git server); pairing from scratch.
// The body drives and observes (ctx.observe); the premise and the checks below judge what it observed.
const REJECT_EVERY = 10;

// Registered findings (lab/findings/findings.ts): what OpenClaw does with a storm from one
// address, short of what an operator enrolling a fleet expects.
const findings: FindingRecord[] = [
  {
    // OpenClaw counts each node pairing request against its failed-auth limiter for the client
    // address ("node pairing" is one of its scopes, docs/gateway/security/rate-limiting.md;
    // default 10 in 60 s, then 5 min locked out): the first 10 approved devices connect and ask
    // for node pairing, and from the 11th on every approved device's connect is refused
    // AUTH_RATE_LIMITED for 5 minutes. The device pairing requests before (all 200) did not
    // count. Runs 20261204-153840-a3660fb47bd2f286 and 20261204-155237-0a29cc76f05f35ad (200
    // devices, 180 approved: 10 paired both times).
    id: "F-storm-approved-paired",
    expectation: "every device the operator approved connects again, its node pairing is approved and node.list shows it connected and approved",
    signature: { paired: 10, notPaired: ["connect after device approval refused: INVALID_REQUEST/AUTH_RATE_LIMITED: unauthorized: too many failed authentication attempts (retry later)"] },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/F-storm-approved-paired.json",
  },
  {
    // The same lockout seen from the operator's lists: every approved device is paired as a
    // device, but only the 10 that connected before the lockout are paired as nodes; the other
    // approved devices stay paired devices with no node pairing (half-paired) until the lockout
    // ends and they connect again.
    id: "F-storm-none-half-paired",
    expectation: "at the end the fleet's paired devices are exactly the approved ones, each paired as a node too, with no request of an approved device still pending",
    signature: { pairedDevicesExact: true, pairedAsNodesToo: 10, approvedStillPending: 0 },
    versions: ["2026.9.6"],
    kind: "differs-from-reference",
    evidence: "fixtures/findings/F-storm-none-half-paired.json",
  },
];

/** One first connect as observed: admitted, or refused with its code, details code and request id. */
type FirstConnect = { alias: string; admitted: true } | { alias: string; admitted: false; code: string; detailsCode?: string; requestId?: string };

/** What the body observed. The fleet's devices are named by alias (a scripted node's nodeId is its device id); any other id stays as it is. */
export interface Observed {
  /** The fleet's aliases, in order, and those whose device request the operator rejects. */
  fleet?: { aliases: string[]; rejected: string[] };
  /** Each device's first connect, in the fleet's order. */
  first?: FirstConnect[];
  /** device.pair.list's pending requests (by device), read once every first connect was answered, before any approval. */
  pendingAtOnce?: string[];
  /** How each device's pairing ended (connectAndPair), with why when it was not paired. */
  pairing?: { alias: string; end: FleetNodeOutcome["end"]; why?: string }[];
  /** Each rejected device's connect again: "admitted", or its refusal's details code (else code). */
  again?: Record<string, string>;
  /** At the end: device.pair.list's paired and pending devices, node.pair.list's paired nodes. */
  end?: { pairedDevices: string[]; pendingDevices: string[]; pairedNodes: string[] };
}

/** The first connects as the operator met them: the refusals by code, the distinct request ids, the fleet's pending requests listed. */
function asked(fleet: NonNullable<Observed["fleet"]>, first: FirstConnect[], pendingAtOnce: string[]) {
  const ours = new Set(fleet.aliases);
  return {
    refusals: countOf(first.map((f) => (f.admitted ? "admitted" : (f.detailsCode ?? f.code)))),
    distinctIds: new Set(first.flatMap((f) => (!f.admitted && f.requestId ? [f.requestId] : []))).size,
    pendingAtOnce: pendingAtOnce.filter((d) => ours.has(d)).length,
  };
}

/** The approved devices (every device of the fleet the operator did not reject). */
function approvedOf(fleet: NonNullable<Observed["fleet"]>, pairing: NonNullable<Observed["pairing"]>) {
  const rejected = new Set(fleet.rejected);
  return pairing.filter((x) => !rejected.has(x.alias));
}

/** The fleet's devices in the paired lists at the end, and how the approved and the rejected ones stand there. */
function endOf(fleet: NonNullable<Observed["fleet"]>, pairing: NonNullable<Observed["pairing"]>, end: NonNullable<Observed["end"]>) {
  const ours = new Set(fleet.aliases);
  const rejected = new Set(fleet.rejected);
  const approved = new Set(approvedOf(fleet, pairing).map((x) => x.alias));
  const pairedDevices = new Set(end.pairedDevices.filter((d) => ours.has(d)));
  const pairedNodes = new Set(end.pairedNodes.filter((d) => ours.has(d)));
  const devicesOnly = [...pairedDevices].filter((d) => !pairedNodes.has(d)).length;
  return {
    rejected,
    approved,
    pairedDevices,
    pairedNodes,
    inPairedLists: [...rejected].filter((d) => pairedDevices.has(d) || pairedNodes.has(d)).length,
    stillPending: end.pendingDevices.filter((d) => approved.has(d)).length,
    devicesOnly,
    exact: pairedDevices.size === approved.size && [...approved].every((d) => pairedDevices.has(d)),
  };
}

export default defineScenario<Observed>({
  name: "fleet-pairing-storm",
  proves: "N new devices asking at once are each answered by name: every one gets a pending request, the approved ones end paired and connected, the rejected ones stay out, none is left half-paired",
  topology: "own",
  alone: true,
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: fleetSize(), prefix: "storm" }, tap: { enabled: false }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  premises: [
    {
      id: "P-storm-at-once",
      what: "all N device requests were pending at once before the operator approved any",
      judge: (h) => {
        if (!h.fleet || !h.first || !h.pendingAtOnce) return undefined;
        const { pendingAtOnce } = asked(h.fleet, h.first, h.pendingAtOnce);
        const n = h.fleet.aliases.length;
        return { met: pendingAtOnce === n, observed: { pendingAtOnce, of: n } };
      },
    },
  ],
  checks: [
    {
      id: "F-storm-every-asked",
      expectation: (h) => `each of ${h.fleet?.aliases.length ?? "N"} devices connecting at once is refused PAIRING_REQUIRED with a request id of its own, and device.pair.list lists a pending request for every one`,
      judge: (h) => {
        if (!h.fleet || !h.first || !h.pendingAtOnce) return undefined;
        const n = h.fleet.aliases.length;
        const { refusals, distinctIds, pendingAtOnce } = asked(h.fleet, h.first, h.pendingAtOnce);
        const pairingRequired = refusals["PAIRING_REQUIRED"] ?? 0;
        return {
          holds: pairingRequired === n && distinctIds === n && pendingAtOnce === n,
          observed: normalise({ refusals, distinctIds: distinctIds === n ? "all" : "fewer", listedPending: pendingAtOnce === n ? "all" : "fewer" }),
        };
      },
    },
    {
      id: "F-storm-approved-paired",
      expectation: "every device the operator approved connects again, its node pairing is approved and node.list shows it connected and approved",
      judge: (h) => {
        if (!h.fleet || !h.pairing) return undefined;
        const approved = approvedOf(h.fleet, h.pairing);
        const notPaired = approved.filter((x) => x.end !== "paired");
        return { holds: approved.length > 0 && notPaired.length === 0, observed: normalise({ paired: approved.length - notPaired.length, notPaired: [...new Set(notPaired.map((x) => x.why ?? x.end))] }) };
      },
    },
    {
      id: "F-storm-rejected-stay-out",
      expectation: "every device the operator rejected is refused when it connects again and is in neither paired list",
      judge: (h) => {
        if (!h.fleet || !h.pairing || !h.again || !h.end) return undefined;
        const e = endOf(h.fleet, h.pairing, h.end);
        const again = Object.values(h.again);
        const admittedAgain = again.filter((x) => x === "admitted").length;
        return { holds: e.rejected.size > 0 && admittedAgain === 0 && e.inPairedLists === 0, observed: normalise({ again: countOf(again), inPairedLists: e.inPairedLists }) };
      },
    },
    {
      id: "F-storm-none-half-paired",
      expectation: "at the end the fleet's paired devices are exactly the approved ones, each paired as a node too, with no request of an approved device still pending",
      judge: (h) => {
        if (!h.fleet || !h.pairing || !h.end) return undefined;
        const e = endOf(h.fleet, h.pairing, h.end);
        return {
          holds: e.exact && e.devicesOnly === 0 && e.stillPending === 0,
          // Counts that do not depend on N: the approved devices paired as nodes too, and whether the device list is exact.
          observed: normalise({ pairedDevicesExact: e.exact, pairedAsNodesToo: e.pairedDevices.size - e.devicesOnly, approvedStillPending: e.stillPending }),
        };
      },
    },
  ],
  timeoutMs: 600_000,
  async run(ctx) {
    const { lab, log, observe, signal } = ctx;
    const aliases = lab.scriptedAliases;
    const n = aliases.length;
    const rejected = new Set(aliases.filter((_, i) => (i + 1) % REJECT_EVERY === 0));
    // The fleet's devices by alias in what is observed (a scripted node's nodeId is its device id).
    const aliasOf = new Map(aliases.map((a) => [lab.scripted(a).nodeId, a]));
    const named = (id: string) => aliasOf.get(id) ?? id;
    const fleet = { aliases: [...aliases], rejected: [...rejected] };
    observe("fleet", fleet);
    await scene(ctx, { faults: false, evidence: { fleet: n, rejected: rejected.size } }, async ({ evidence }) => {
      let first: FirstConnect[] = [];
      let pendingAtOnce: string[] = [];
      let seen = asked(fleet, first, pendingAtOnce);
      let turnedAway = { upgrades: 0, nodes: 0 };
      const r = await connectAndPair(lab.fleet, aliases, {
        concurrency: n,
        timeoutMs: 180_000,
        signal,
        onProgress: log,
        approve: (a) => !rejected.has(a),
        afterFirst: async (outcomes) => {
          first = outcomes.map((o, i): FirstConnect => (o.admitted ? { alias: aliases[i]!, admitted: true } : { alias: aliases[i]!, admitted: false, code: o.code, detailsCode: o.detailsCode, requestId: o.requestId }));
          pendingAtOnce = (await op.listDevicePairing(lab.operator.client)).pending.map((p) => named(p.deviceId));
          seen = asked(fleet, first, pendingAtOnce);
          const busy = outcomes.reduce((k, f) => k + f.busy, 0);
          turnedAway = { upgrades: busy, nodes: outcomes.filter((f) => f.busy > 0).length };
          log(`the gateway turned ${busy} upgrade(s) of ${turnedAway.nodes} node(s) away with 503 (its pre-auth budget per address) before they got in`);
          log(`all ${n} first connects answered (${percentiles(outcomes.map((f) => f.ms)).text}): ${JSON.stringify(seen.refusals)}; ${seen.distinctIds} distinct request ids; device.pair.list: ${seen.pendingAtOnce} of the fleet pending`);
        },
      });
      evidence.pairing = { ms: r.ms, counts: r.counts, firstRefusals: seen.refusals, distinctIds: seen.distinctIds, pendingAtOnce: seen.pendingAtOnce, turnedAway, nodes: r.nodes };
      log(`fleet pairing ended after ${r.ms} ms: ${JSON.stringify(r.counts)}`);
      // P-storm-at-once and F-storm-every-asked read these; F-storm-approved-paired how each pairing ended.
      observe("first", first);
      observe("pendingAtOnce", pendingAtOnce);
      const pairing = r.nodes.map((x) => ({ alias: x.alias, end: x.end, why: x.why }));
      observe("pairing", pairing);

      // The rejected ones: each connects again; the gateway must not admit it.
      const again = await Promise.all([...rejected].map(async (a) => {
        try {
          await lab.scripted(a).connect(lab.scriptedUrl(a));
          return "admitted";
        } catch (err) {
          return (err as { detailsCode?: string; code?: string }).detailsCode ?? (err as { code?: string }).code ?? "error";
        }
      }));
      const [devices, nodes] = await Promise.all([op.listDevicePairing(lab.operator.client), op.listNodePairing(lab.operator.client)]);
      log(`rejected devices connecting again: ${JSON.stringify(countOf(again))}`);
      const end = { pairedDevices: devices.paired.map((d) => named(d.deviceId)), pendingDevices: devices.pending.map((p) => named(p.deviceId)), pairedNodes: nodes.paired.map((d) => named(d.nodeId)) };
      // F-storm-rejected-stay-out and F-storm-none-half-paired read these.
      observe("again", Object.fromEntries([...rejected].map((a, i) => [a, again[i]!])));
      observe("end", end);
      const e = endOf(fleet, pairing, end);
      evidence.end = { pairedDevices: e.pairedDevices.size, pairedNodes: e.pairedNodes.size, approved: e.approved.size, rejected: e.rejected.size, stillPending: e.stillPending, devicesOnly: e.devicesOnly, again: countOf(again) };
    });
  },
});

function countOf(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
