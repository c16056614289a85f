// A fleet of scripted nodes connected and paired in bulk, the way an operator pairs many
// devices: every node connects (a new one is refused PAIRING_REQUIRED with its request id), the
// operator approves each device request by its id (device.pair.approve), each approved node
// connects again, the gateway asks node pairing for its declared commands, the operator approves
// each of those (node.pair.approve), and node.list shows every one connected and approved. The
// same routine brings a lab's fleet up (spec.scripted.paired: at bring-up, after a snapshot
// restore only the nodes the restored state did not know are paired) and is what the fleet
// scenarios drive, step by step, to judge it (scenarios/fleet/).
//
// The operator's lists are read by one poller each (node.pair.list, node.list), not once per
// node: a hundred nodes waiting must not ask the gateway a hundred times a second.
import { GatewayError } from "../clients/gateway.ts";
import * as op from "../clients/operator.ts";
import type { GatewayClient } from "../clients/gateway.ts";
import type { NodeEntry, PendingNode } from "../clients/operator.ts";
import type { ScriptedNode } from "../clients/scripted-node.ts";
import { sleep } from "../core/wait.ts";
import { deadline } from "../core/pace.ts";

/** What the bulk routine needs of a lab: its scripted nodes, where each connects, the operator's client. */
export interface FleetHost {
  scripted(alias: string): ScriptedNode;
  scriptedUrl(alias: string): string;
  readonly operatorClient: GatewayClient;
}

/** How one node's connect went: admitted, or refused (code, details code, reason, request id). */
export type ConnectOutcome = { admitted: true; ms: number } | { admitted: false; ms: number; code: string; detailsCode?: string; reason?: string; requestId?: string; message: string };

/** How one node of the fleet ended up, with the time of each step from the routine's start. */
export interface FleetNodeOutcome {
  alias: string;
  nodeId: string;
  /** connected: admitted at its first connect (already paired); paired: paired now; refused/lost: see `why`. */
  end: "connected" | "paired" | "refused" | "lost";
  why?: string;
  /** ms from the start: first connect answered, device approved, second connect, node pairing approved, listed approved. */
  at: Partial<Record<"firstConnect" | "deviceApproved" | "connected" | "nodeApproved" | "listed", number>>;
  /** The first connect's refusal, when there was one. */
  refusal?: Extract<ConnectOutcome, { admitted: false }>;
}

export interface FleetPairing {
  nodes: FleetNodeOutcome[];
  ms: number;
  /** How many were admitted at once (known to the gateway), paired now, refused or lost. */
  counts: Record<FleetNodeOutcome["end"], number>;
}

/** Run `fn` over `items` with at most `limit` at a time, in order of start; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/**
 * The gateway turned the WebSocket upgrade away (HTTP 503): its pre-auth budget of handshakes in
 * flight per client address was full (docs/gateway/protocol/handshake.md, "per-client pre-auth
 * budget"). A node host tries again; so does the fleet.
 */
export const upgradeTurnedAway = (o: ConnectOutcome): boolean => !o.admitted && o.code === "HANDSHAKE_FAILED" && /\b503\b/.test(o.message);

/**
 * The gateway closed the socket before answering the connect: 2026.9.6 does so when its worker
 * task pool is full (its log: "parse-error error=WorkerTaskError: worker task capacity reached:
 * code=overloaded", then "closed before connect ... code=1000 phase=auth_validate"; the node sees
 * a close 1000 with no reason and no error frame). A node host reconnects; so does the fleet.
 */
export const closedBeforeAnswer = (o: ConnectOutcome): boolean => !o.admitted && o.code === "CONNECTION_CLOSED";

/**
 * Connect, and while the gateway turns the upgrade away (503, its pre-auth budget full) or closes
 * the socket before answering the connect (closedBeforeAnswer) try again after a short pause
 * (100 ms doubling to 2 s, with jitter), as a node host does, until `withinMs` from the first try.
 * The outcome says how many times it was turned away either way (`busy`).
 */
export async function connectPatiently(host: FleetHost, alias: string, t0 = Date.now(), withinMs = 60_000, signal?: AbortSignal): Promise<ConnectOutcome & { busy: number }> {
  const start = Date.now();
  let busy = 0;
  let pause = 100;
  while (true) {
    const o = await connectOnce(host, alias, t0);
    if (!(upgradeTurnedAway(o) || closedBeforeAnswer(o)) || Date.now() - start > withinMs || signal?.aborted) return { ...o, busy };
    busy++;
    await sleep(pause * (0.5 + Math.random()), signal).catch(() => {});
    pause = Math.min(2_000, pause * 2);
  }
}

/** One connect of `alias`'s scripted node, its outcome as data (a refusal is not thrown). */
export async function connectOnce(host: FleetHost, alias: string, t0 = Date.now(), timeoutMs = 30_000): Promise<ConnectOutcome> {
  try {
    await host.scripted(alias).connect(host.scriptedUrl(alias), { timeoutMs });
    return { admitted: true, ms: Date.now() - t0 };
  } catch (err) {
    if (!(err instanceof GatewayError)) return { admitted: false, ms: Date.now() - t0, code: "LAB", message: (err as Error).message };
    return { admitted: false, ms: Date.now() - t0, code: err.code, detailsCode: err.detailsCode, reason: err.reason, requestId: err.requestId, message: err.gatewayMessage };
  }
}

/**
 * Connect every alias (at most `concurrency` connects at once; all at once for a storm) and pair
 * those the gateway does not know, through the operator's approvals. Never throws for what the
 * gateway does: each node's end is in the result (refused: a first connect refused other than
 * PAIRING_REQUIRED, or an approval refused; lost: a step that did not come within `timeoutMs`).
 * `approve` decides per node whether the operator approves its device request (default all);
 * one not approved is rejected by name (device.pair.reject) and ends "refused".
 */
export async function connectAndPair(
  host: FleetHost,
  aliases: readonly string[],
  opts: {
    concurrency?: number;
    timeoutMs?: number;
    signal?: AbortSignal;
    approve?: (alias: string) => boolean;
    onProgress?: (msg: string) => void;
    /** Called once every first connect was answered, before the operator approves anything (a storm scenario reads the pending list here). */
    afterFirst?: (first: readonly (ConnectOutcome & { busy: number })[]) => Promise<void>;
  } = {},
): Promise<FleetPairing> {
  const t0 = Date.now();
  const at = () => Date.now() - t0;
  // At most 16 handshakes at once by default: the gateway's pre-auth budget per client address is 32 (a 503 past it).
  const limit = opts.concurrency ?? 16;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const client = host.operatorClient;
  const out = new Map<string, FleetNodeOutcome>(aliases.map((a) => [a, { alias: a, nodeId: host.scripted(a).nodeId, end: "lost", at: {} }]));
  const say = (m: string) => opts.onProgress?.(m);

  // 1. every node connects: admitted (known), or refused with a device request to approve
  const first = await mapLimit(aliases, limit, (a) => connectPatiently(host, a, t0, timeoutMs, opts.signal));
  const toApprove: { alias: string; requestId: string }[] = [];
  first.forEach((r, i) => {
    const o = out.get(aliases[i]!)!;
    o.at.firstConnect = r.ms;
    if (r.admitted) return void (o.end = "connected");
    o.refusal = r;
    // A first connect of a new device: refused with the request id the operator approves (GatewayError.isPairingRequired).
    if (r.requestId) toApprove.push({ alias: o.alias, requestId: r.requestId });
    else [o.end, o.why] = ["refused", `first connect refused without a pairing request: ${r.code}${r.detailsCode ? `/${r.detailsCode}` : ""}: ${r.message}`];
  });
  say(`${aliases.length} connected once in ${at()} ms: ${first.filter((r) => r.admitted).length} admitted, ${toApprove.length} asked for pairing`);

  await opts.afterFirst?.(first);

  // 2. the operator approves (or rejects) each device request by its id
  const approved: string[] = [];
  await mapLimit(toApprove, limit, async ({ alias, requestId }) => {
    const o = out.get(alias)!;
    const yes = opts.approve?.(alias) ?? true;
    try {
      if (yes) {
        await op.approveDevice(client, requestId);
        o.at.deviceApproved = at();
        approved.push(alias);
      } else {
        await client.request("device.pair.reject", { requestId });
        [o.end, o.why] = ["refused", "the operator rejected its device request"];
      }
    } catch (err) {
      [o.end, o.why] = ["refused", `device.pair.${yes ? "approve" : "reject"} ${requestId} refused: ${(err as Error).message}`];
    }
  });

  // 3. each approved device connects again
  const second = await mapLimit(approved, limit, (a) => connectPatiently(host, a, t0, timeoutMs, opts.signal));
  const waiting = new Set<string>();
  second.forEach((r, i) => {
    const o = out.get(approved[i]!)!;
    if (r.admitted) {
      o.at.connected = r.ms;
      waiting.add(o.nodeId);
    } else [o.end, o.why] = ["refused", `connect after device approval refused: ${r.code}${r.detailsCode ? `/${r.detailsCode}` : ""}: ${r.message}`];
  });
  say(`${approved.length} device request(s) approved, ${waiting.size} connected again (${at()} ms)`);

  // 4. node pairing requests of the declared commands approved, until node.list shows every one connected and approved
  const byNode = new Map([...out.values()].map((o) => [o.nodeId, o]));
  const listedOf = (e: NodeEntry) => e.connected === true && e.approvalState === "approved";
  const approving = new Set<string>();
  const expecting = new Set([...waiting, ...[...out.values()].filter((o) => o.end === "connected").map((o) => o.nodeId)]);
  const until = Date.now() + deadline(timeoutMs); // paced: the lab's wait for OpenClaw to list them, at the machine's pace
  let lastState = "";
  while (true) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    const [pending, listed] = await Promise.all([op.listNodePairing(client).then((l) => l.pending), op.listNodes(client)]);
    const fresh = pending.filter((p: PendingNode) => expecting.has(p.nodeId) && !approving.has(p.requestId));
    await mapLimit(fresh, limit, async (p) => {
      approving.add(p.requestId);
      const o = byNode.get(p.nodeId)!;
      try {
        await op.approveNode(client, p.requestId);
        o.at.nodeApproved = at();
      } catch (err) {
        [o.end, o.why] = ["refused", `node.pair.approve ${p.requestId} refused: ${(err as Error).message}`];
        expecting.delete(p.nodeId);
      }
    });
    for (const e of listed) {
      const o = byNode.get(e.nodeId);
      if (o && expecting.has(e.nodeId) && listedOf(e)) {
        o.at.listed ??= at();
        if (o.end === "lost") o.end = "paired";
        expecting.delete(e.nodeId);
      }
    }
    lastState = `${expecting.size} not yet connected and approved in node.list, ${pending.length} node pairing request(s) pending`;
    if (!expecting.size) break;
    if (Date.now() > until) {
      for (const id of expecting) {
        const o = byNode.get(id)!;
        [o.end, o.why] = ["lost", `not connected and approved in node.list within ${timeoutMs} ms (${o.at.nodeApproved === undefined ? "no node pairing request seen" : "node pairing approved"})`];
      }
      break;
    }
    await sleep(fresh.length ? 50 : 500, opts.signal);
  }
  say(`fleet: ${lastState} after ${at()} ms`);
  const nodes = [...out.values()];
  const counts = { connected: 0, paired: 0, refused: 0, lost: 0 };
  for (const n of nodes) counts[n.end]++;
  return { nodes, ms: at(), counts };
}
