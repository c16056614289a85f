// What the fleet scenarios (scenarios/fleet/) and the bench's fleet sweep do to a lab's scripted
// fleet and read back: invokes fanned out to every node (each node answering with its own name,
// so a misrouted answer is seen), every node reconnecting the way a node host does after its
// gateway went (retry with backoff until admitted), and latency percentiles. Bulk connect and
// pairing is lab/topology/fleet.ts (bring-up uses it too).
import crypto from "node:crypto";
import { refusal, isRefused } from "../clients/operator.ts";
import type { GatewayClient } from "../clients/gateway.ts";
import type { ScriptedNode } from "../clients/scripted-node.ts";
import { connectOnce, mapLimit, type ConnectOutcome, type FleetHost } from "../topology/fleet.ts";
import { sleep } from "../core/wait.ts";
import { fleetSize } from "../core/settings.ts";
import type { TopologyInput } from "../definitions/spec.ts";

/**
 * The fleet lab: FLEET scripted nodes (default 200, prefix "fleet") paired at bring-up beside 2
 * real node hosts and the git server, no MCP server. Every fleet scenario but the pairing storm
 * uses exactly this, so they share one snapshot of the paired state (its key is the shape). The
 * fleet connects from the lab's one address, as a fleet behind one NAT does, so OpenClaw's
 * failed-auth limiter is raised the way that fleet's operator would raise it (it counts each
 * node pairing request: fleet-pairing-storm shows what the default does).
 */
export function fleetSpec(count = fleetSize()): TopologyInput {
  return { nodes: { count: 2 }, scripted: { count, prefix: "fleet", paired: true }, gateway: { authRateLimit: { maxAttempts: 100_000 } }, mcp: { servers: [] } };
}

/** p50/p95/p99/max of a list of ms (nearest rank), with a one-line text. */
export function percentiles(ms: readonly number[]): { n: number; p50: number; p95: number; p99: number; max: number; text: string } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]! : 0);
  const r = { n: s.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s.at(-1) ?? 0 };
  return { ...r, text: `n=${r.n} p50 ${r.p50} ms, p95 ${r.p95} ms, p99 ${r.p99} ms, max ${r.max} ms` };
}

/** How many connects were admitted, and each refusal by its details code (else code). */
export function refusedBy(outcomes: readonly ConnectOutcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) {
    const k = o.admitted ? "admitted" : (o.detailsCode ?? o.code);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** One invoke of the fan-out, as the operator saw it. */
export interface FannedInvoke {
  alias: string;
  nodeId: string;
  ms: number;
  /** routed: the answer is the target's own; misrouted: another node's; refused: an error (code); */
  end: "routed" | "misrouted" | "refused";
  code?: string;
  /** The operator's error message (refused). */
  message?: string;
  /** Which node the answer says it came from (misrouted). */
  from?: string;
}

/**
 * Every alias's node answers `command` with its own name; then the operator node.invokes each
 * of them (at most `concurrency` in flight; all at once by default). Each result is judged
 * routed only when the payload names the node it was sent to.
 */
export async function fanOut(host: FleetHost, client: GatewayClient, aliases: readonly string[], opts: { command?: string; concurrency?: number; timeoutMs?: number } = {}): Promise<FannedInvoke[]> {
  const command = opts.command ?? "system.which";
  for (const a of aliases) host.scripted(a).answerWith(command, (inv) => ({ ok: true, payload: { node: a, invoke: inv.id } }));
  return mapLimit(aliases, opts.concurrency ?? aliases.length, async (alias) => {
    const nodeId = host.scripted(alias).nodeId;
    const t = Date.now();
    const got = await client
      .request<Record<string, unknown>>("node.invoke", { nodeId, command, params: { bins: ["git"] }, idempotencyKey: crypto.randomUUID(), timeoutMs: opts.timeoutMs ?? 30_000 }, { timeoutMs: (opts.timeoutMs ?? 30_000) + 15_000 })
      .catch(refusal);
    const ms = Date.now() - t;
    if (isRefused(got)) return { alias, nodeId, ms, end: "refused", code: got.detailsCode ?? got.code, message: got.message } satisfies FannedInvoke;
    const payload = (got.payload ?? (typeof got.payloadJSON === "string" ? JSON.parse(got.payloadJSON) : undefined)) as { node?: unknown } | undefined;
    return payload?.node === alias ? { alias, nodeId, ms, end: "routed" } : { alias, nodeId, ms, end: "misrouted", from: String(payload?.node ?? "nothing") };
  });
}

/** One node's way back after its connection went: every attempt's refusal, and when it was admitted. */
export interface Return {
  alias: string;
  /** ms from the start until admitted; undefined: not within the time given. */
  backMs?: number;
  attempts: number;
  /** Each refused attempt's details code (else code), in order. */
  refusals: string[];
}

/**
 * Every alias reconnects as a node host does when its gateway went: try, and on a refusal or a
 * socket that would not open, wait (250 ms doubling to 4 s, with jitter) and try again, until
 * admitted or `timeoutMs` from the start has passed. All of them at once.
 */
export async function reconnectAll(host: FleetHost, aliases: readonly string[], opts: { timeoutMs: number; signal?: AbortSignal; seed?: number }): Promise<Return[]> {
  const t0 = Date.now();
  let rnd = (opts.seed ?? 1) >>> 0 || 1;
  const jitter = () => ((rnd = (rnd * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  return Promise.all(
    aliases.map(async (alias) => {
      const r: Return = { alias, attempts: 0, refusals: [] };
      let backoff = 250;
      while (Date.now() - t0 < opts.timeoutMs && !opts.signal?.aborted) {
        r.attempts++;
        const o = await connectOnce(host, alias, t0, 10_000);
        if (o.admitted) {
          r.backMs = o.ms;
          return r;
        }
        r.refusals.push(o.detailsCode ?? o.code);
        await sleep(backoff * (0.5 + jitter()), opts.signal).catch(() => {});
        backoff = Math.min(4_000, backoff * 2);
      }
      return r;
    }),
  );
}

/** One node.invoke the operator sent, as its transcript shows it: to which node, when, when its answer came, the gateway's error if any. */
export interface InvokeOnWire {
  id: string;
  nodeId: string;
  sent: number;
  answered?: number;
  /** "<code>: <message>" of a refusal. */
  error?: string;
}

/** Every node.invoke the operator's client sent within [from, to], in the order sent, with its answer when that came within the window too. */
export function invokesOnWire(client: GatewayClient, from: number, to = Infinity): InvokeOnWire[] {
  const byId = new Map<string, InvokeOnWire>();
  for (const e of client.transcript()) {
    if (e.t < from || e.t > to || e.method !== "node.invoke" || !e.id) continue;
    const f = e.frame as { params?: { nodeId?: unknown }; error?: { code?: unknown; message?: unknown } } | undefined;
    if (e.dir === "out" && e.kind === "req") {
      if (typeof f?.params?.nodeId === "string") byId.set(e.id, { id: e.id, nodeId: f.params.nodeId, sent: e.t });
    } else if (e.dir === "in" && e.kind === "res") {
      const x = byId.get(e.id);
      if (!x) continue;
      x.answered = e.t;
      if (e.ok === false) x.error = `${String(f?.error?.code)}: ${String(f?.error?.message)}`;
    }
  }
  return [...byId.values()];
}

/**
 * The gateway's refusals of the nodes' own answers (node.invoke.result) within [from, to]: counted
 * by code, message and details code, and the nodes refused (OpenClaw's node host sends its answer
 * once, so a refused answer is lost).
 */
export function answersRefused(nodes: readonly ScriptedNode[], from: number, to = Infinity): { counts: Record<string, number>; nodeIds: Set<string> } {
  const counts: Record<string, number> = {};
  const nodeIds = new Set<string>();
  for (const node of nodes)
    for (const c of node.connections)
      for (const e of c.transcript()) {
        if (e.t < from || e.t > to || e.dir !== "in" || e.kind !== "res" || e.method !== "node.invoke.result" || e.ok !== false) continue;
        const err = (e.frame as { error?: { code?: unknown; message?: unknown; details?: { code?: unknown } } } | undefined)?.error;
        const k = `${String(err?.code)}: ${String(err?.message)}${err?.details?.code ? ` (${String(err.details.code)})` : ""}`;
        counts[k] = (counts[k] ?? 0) + 1;
        nodeIds.add(node.nodeId);
      }
  return { counts, nodeIds };
}
