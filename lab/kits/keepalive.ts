// Timing a fault against the gateway's keepalive on a node's control connection, so the
// gateway notices the loss as early as it can.
//
// Keepalive of openclaw@2026.9.6 (dist/websocket-keepalive-*.mjs, measured through the tap):
// the gateway pings each node connection every 25 s and drops it at the first 25 s tick
// after a ping has gone unanswered for 25 s. A cut placed just before a ping is noticed
// 25-50 s later; one placed just after a ping 50-75 s later. The node itself notices only
// when no tick arrives for 60 s (tick every 30 s, timeout 2x).
import { WS_OPCODE, type TapControl } from "../clients/tap.ts";
import type { Fault } from "../faults/index.ts";
import { step } from "../core/log.ts";
import { sleep } from "../core/wait.ts";
import { controlConn } from "./node-wire.ts";

/** The gateway's keepalive ping interval per connection (see the header). */
export const KEEPALIVE_MS = 25_000;
/** The longest the gateway takes to drop a node that went silent: 3 ping intervals (see the header). */
export const KEEPALIVE_NOTICE_MS = 3 * KEEPALIVE_MS;

/**
 * When the gateway's next keepalive ping on the node's control connection will pass the tap
 * (epoch ms): 25 s after the last ping seen, or after the connection opened.
 */
export async function nextKeepalivePing(tap: TapControl, notBefore = Date.now() + 2_000): Promise<{ conn: string; at: number; lastPing: number | null }> { // fixed: not a deadline: a time on the gateway's keepalive schedule (its wall clock)
  const conn = await controlConn(tap);
  const c = (await tap.connections()).find((x) => x.conn === conn)!;
  const pings = (await tap.frames({ conn })).filter((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.ping);
  const last = pings.at(-1)?.t ?? null;
  let at = (last ?? c.openedAt) + KEEPALIVE_MS;
  while (at < notBefore) at += KEEPALIVE_MS;
  return { conn, at, lastPing: last };
}

/**
 * Inject a prepared fault `leadMs` (default 800 ms) before the gateway's next keepalive ping
 * to that node, so the ping goes unanswered and the gateway notices the loss as early as it
 * can (25-50 s later).
 */
export async function injectBeforeKeepalive(fault: Fault, tap: TapControl, opts: { leadMs?: number; signal?: AbortSignal } = {}): Promise<{ conn: string; pingAt: number; waitedMs: number; injectedAt: number }> {
  const leadMs = opts.leadMs ?? 800;
  await fault.prepare();
  const next = await nextKeepalivePing(tap, Date.now() + leadMs + 500); // fixed: not a deadline: a time on the gateway's keepalive schedule (its wall clock)
  const waitedMs = Math.max(0, Math.round(next.at - leadMs - Date.now()));
  await step(`waiting ${(waitedMs / 1000).toFixed(0)} s for the gateway's next keepalive ping, to inject ${fault.kind} ${fault.target} just before it`, () => sleep(waitedMs, opts.signal), {
    showAfterMs: 1_000,
  });
  const injectedAt = Date.now();
  await fault.inject();
  return { conn: next.conn, pingAt: Math.round(next.at), waitedMs, injectedAt };
}
