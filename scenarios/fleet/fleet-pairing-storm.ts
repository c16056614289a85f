import { defineScenario, type FindingRecord } from "../../lab/scenario.ts";
import * as op from "../../lab/clients/operator.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { connectAndPair } from "../../lab/topology/fleet.ts";
import { fleetSize } from "../../lab/definitions/settings.ts";
import { percentiles, refusedBy } from "../../lab/kits/fleet.ts";
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

export default defineScenario({
  name: "fleet-pairing-storm",
  proves: "N new devices asking at once are each answered by name: every one gets a pending request, the approved ones end paired and connected, the rejected ones stay out, none is left half-paired",
  topology: "own",
  alone: true,
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: fleetSize(), prefix: "storm" }, tap: { enabled: false }, mcp: { servers: [] }, git: { enabled: false } },
  findings,
  premises: [{ id: "P-storm-at-once", what: "all N device requests were pending at once before the operator approved any" }],
  timeoutMs: 600_000,
  async run(ctx) {
    const { lab, log, check, premise, signal } = ctx;
    const aliases = lab.scriptedAliases;
    const n = aliases.length;
    const rejected = new Set(aliases.filter((_, i) => (i + 1) % REJECT_EVERY === 0));
    const fleetIds = new Set(aliases.map((a) => lab.scripted(a).nodeId));
    await scene(ctx, { faults: false, evidence: { fleet: n, rejected: rejected.size } }, async ({ evidence }) => {
      let pendingAtOnce = 0;
      let firstRefusals: ReturnType<typeof refusedBy> = {};
      let distinctIds = 0;
      let turnedAway = { upgrades: 0, nodes: 0 };
      const r = await connectAndPair(lab.fleet, aliases, {
        concurrency: n,
        timeoutMs: 180_000,
        signal,
        onProgress: log,
        approve: (a) => !rejected.has(a),
        afterFirst: async (first) => {
          firstRefusals = refusedBy(first);
          distinctIds = new Set(first.flatMap((f) => (!f.admitted && f.requestId ? [f.requestId] : []))).size;
          const pending = (await op.listDevicePairing(lab.operator.client)).pending;
          pendingAtOnce = pending.filter((p) => fleetIds.has(p.deviceId)).length;
          const busy = first.reduce((k, f) => k + f.busy, 0);
          turnedAway = { upgrades: busy, nodes: first.filter((f) => f.busy > 0).length };
          log(`the gateway turned ${busy} upgrade(s) of ${turnedAway.nodes} node(s) away with 503 (its pre-auth budget per address) before they got in`);
          log(`all ${n} first connects answered (${percentiles(first.map((f) => f.ms)).text}): ${JSON.stringify(firstRefusals)}; ${distinctIds} distinct request ids; device.pair.list: ${pendingAtOnce} of the fleet pending`);
        },
      });
      evidence.pairing = { ms: r.ms, counts: r.counts, firstRefusals, distinctIds, pendingAtOnce, turnedAway, nodes: r.nodes };
      log(`fleet pairing ended after ${r.ms} ms: ${JSON.stringify(r.counts)}`);
      premise({ id: "P-storm-at-once", met: pendingAtOnce === n, observed: { pendingAtOnce, of: n } });

      const pairingRequired = firstRefusals["PAIRING_REQUIRED"] ?? 0;
      check({
        id: "F-storm-every-asked",
        expectation: `each of ${n} devices connecting at once is refused PAIRING_REQUIRED with a request id of its own, and device.pair.list lists a pending request for every one`,
        holds: pairingRequired === n && distinctIds === n && pendingAtOnce === n,
        observed: normalise({ refusals: firstRefusals, distinctIds: distinctIds === n ? "all" : "fewer", listedPending: pendingAtOnce === n ? "all" : "fewer" }),
      });

      const approved = r.nodes.filter((x) => !rejected.has(x.alias));
      const notPaired = approved.filter((x) => x.end !== "paired");
      check({
        id: "F-storm-approved-paired",
        expectation: "every device the operator approved connects again, its node pairing is approved and node.list shows it connected and approved",
        holds: approved.length > 0 && notPaired.length === 0,
        observed: normalise({ paired: approved.length - notPaired.length, notPaired: [...new Set(notPaired.map((x) => x.why ?? x.end))] }),
      });

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
      const rejectedIds = new Set([...rejected].map((a) => lab.scripted(a).nodeId));
      const approvedIds = new Set(approved.map((x) => x.nodeId));
      const pairedDevices = new Set(devices.paired.map((d) => d.deviceId).filter((id) => fleetIds.has(id)));
      const pairedNodes = new Set(nodes.paired.map((d) => d.nodeId).filter((id) => fleetIds.has(id)));
      const admittedAgain = again.filter((x) => x === "admitted").length;
      log(`rejected devices connecting again: ${JSON.stringify(countOf(again))}`);
      check({
        id: "F-storm-rejected-stay-out",
        expectation: "every device the operator rejected is refused when it connects again and is in neither paired list",
        holds: rejected.size > 0 && admittedAgain === 0 && [...rejectedIds].every((id) => !pairedDevices.has(id) && !pairedNodes.has(id)),
        observed: normalise({ again: countOf(again), inPairedLists: [...rejectedIds].filter((id) => pairedDevices.has(id) || pairedNodes.has(id)).length }),
      });
      const stillPending = devices.pending.filter((p) => approvedIds.has(p.deviceId)).length;
      const devicesOnly = [...pairedDevices].filter((id) => !pairedNodes.has(id)).length;
      const exact = pairedDevices.size === approvedIds.size && [...approvedIds].every((id) => pairedDevices.has(id));
      check({
        id: "F-storm-none-half-paired",
        expectation: "at the end the fleet's paired devices are exactly the approved ones, each paired as a node too, with no request of an approved device still pending",
        holds: exact && devicesOnly === 0 && stillPending === 0,
        // Counts that do not depend on N: the approved devices paired as nodes too, and whether the device list is exact.
        observed: normalise({ pairedDevicesExact: exact, pairedAsNodesToo: pairedDevices.size - devicesOnly, approvedStillPending: stillPending }),
      });
      evidence.end = { pairedDevices: pairedDevices.size, pairedNodes: pairedNodes.size, approved: approvedIds.size, rejected: rejectedIds.size, stillPending, devicesOnly, again: countOf(again) };
    });
  },
});

function countOf(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
