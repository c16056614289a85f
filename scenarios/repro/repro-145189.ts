// Upstream: openclaw/openclaw#145189 "Control UI disconnects while WebSocket pings are queued
// behind outgoing data" (closed). Fix: PR openclaw/openclaw#145191 "fix(gateway): keep slow
// control connections online while pings are queued" (merged; both opened 2026-09-11).
//
// The report: the Control UI intermittently shows offline while the gateway keeps running; the
// gateway logs a WebSocket heartbeat timeout with `pingWriteState: pending` and several MiB of
// outgoing data buffered. The reporter's own reproduction: the gateway's keepalive helper on a
// real WebSocket, a 32 MiB frame to a receiver that reads slowly; the connection is terminated
// around 50 s, with the ping still queued behind the frame and the frame still draining.
//
// Which heartbeat, read in the package (dist/websocket-keepalive-*.mjs, called from the gateway's
// connection owner in server-ws-runtime-*.mjs for every authenticated connection, node role
// included): the GATEWAY pings the client every 25 s (hard-coded; no config key sets it). In
// 2026.9.4, a ping not answered by the next 25 s tick terminates the socket (close cause
// "heartbeat-timeout"), however long the ping itself sat behind the gateway's own outgoing
// data: with a frame draining for longer than that, the connection is killed while data still
// moves. The fix (in 2026.9.5 and 2026.9.6) tells a queued ping from a written one: while the
// ping's write is pending it arms the transport's 25 s INACTIVITY timeout (Node's socket
// timeout, which partial write progress keeps re-arming); once written, the peer gets a full
// 25 s pong window. So the large frame is the gateway's (gateway -> client), and the side to
// slow is what the gateway sends.
//
// What the user should have seen (asserted here, R-145189-connection-survives): a node
// connection over which the gateway is still sending a large frame, its bytes moving the whole
// time, is not closed by the gateway's keepalive: the frame arrives whole, the node answers, and
// the operator's node.invoke returns that answer.
//
// How this lab gets there: an own lab with the scripted node (lab/clients/scripted-node.ts),
// through its tap, and no node host. The scripted node pairs; faults.bandwidth limits what the
// GATEWAY sends to RATE (tc tbf on its egress). The keepalive's phase is read on the tap (the
// gateway's pings to the node, opcode 9). LEAD_MS before a keepalive tick the node sends one
// node.event (so its own tick watch, 2x policy.tickIntervalMs = 60 s, counts from there) and the
// operator sends node.invoke system.which with a padding parameter sized so that the
// node.invoke.request frame takes about DRAIN_TARGET_S to leave the gateway at RATE (the padding
// is incompressible: the connection negotiates permessage-deflate). The ping of that tick queues
// behind the frame; its deadline (2026.9.4: the next tick) falls at LEAD_MS + 25 s, well inside
// the drain, which itself ends well inside the node's 60 s tick watch. The tap's byte count of
// the connection is sampled every 500 ms.
//
// Premise P-145189-frame-in-flight-at-deadline, from the fault's own rate and the wire: the frame's
// first bytes reached the tap by 2 s after the ping was due (a gateway whose event loop is busy
// with the frame fires its tick late, and the ping queues behind it: seen on 2026.9.4, where the
// frame began 0.1 s after the tick and no ping came before it); at the keepalive deadline it was not yet whole at the tap
// while its bytes were still arriving there (in the 3 s before the deadline); no gateway ping
// reached the tap between the tick and the deadline (the ping was behind the frame); the rate the
// tap measured over the drain was at most 1.1x the fault's rate (the limit governed the drain);
// and the node's connection was not ended by the lab client's own tick watch. `make repro
// NAME=repro-145189 N=1 AIM_OFF=1` puts the same limit on tap-scripted-1 (what the tap sends,
// toward the node and back to the gateway) instead of the gateway: the gateway's frame then
// leaves at once, is whole at the tap long before the deadline and the premise reads unmet (the
// gateway may still kill that connection there: its ping was written and its pong waits behind
// the frame downstream, a case the fix leaves to the 25 s pong window on purpose).
//
// What differs from the report: a node connection instead of the Control UI (the keepalive and
// its owner are the same for every role); a ~2.7 MB compressed frame at 512 kbit/s instead of
// 32 MiB to a throttled reader; the tap between the gateway and the node holds each message until
// it is whole, which changes nothing on the gateway's socket. The gateway logs the close cause
// only in its verbose WebSocket log (logWs "close" with cause and pingWriteState), so the
// signature is read on the wire (the close the node saw, whether the frame arrived, what the
// operator got); the gateway's log lines about it are kept as evidence. The ~3.6 MB request is in
// the operator's and the scripted node's transcripts (the tap keeps its first 1 MiB).
//
// Outcome: reproduced on 2026.9.4 (runs 20261202-032154-bbdc and the matrix of 2026-12-02: the
// connection dropped at the deadline, the frame never whole, the operator's invoke refused
// DISCONNECTED); fixed? on 2026.9.5 and 2026.9.6 (the frame whole after 44 s, the queued ping after
// it, the node's answer back). AIM_OFF=1 (the limit on the tap): caught 1/1.
// The body drives and observes (ctx.observe); the premise and the check below judge what it observed.
import crypto from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { defineScenario, LabInfraError, labStep, type FindingRecord } from "../../lab/scenario.ts";
import { faults } from "../../lab/faults/index.ts";
import { rateBits } from "../../lab/faults/bandwidth.ts";
import { refusal, isRefused, type Refused } from "../../lab/clients/operator.ts";
import { WS_OPCODE, type Frame } from "../../lab/clients/tap.ts";
import { tapAlias } from "../../lab/definitions/spec.ts";
import { normalise } from "../../lab/findings/normalise.ts";
import { pairScripted } from "../../lab/kits/pairing.ts";
import { controlConn, invokePayload } from "../../lab/kits/node-wire.ts";
import { memberLog } from "../../lab/kits/logs.ts";
import { scene } from "../../lab/kits/scene.ts";
import { pollUntil, sleep } from "../../lab/core/wait.ts";

/** What the gateway may send (tc tbf on its egress). */
const RATE = "512kbit";
const RATE_BYTES_S = rateBits(RATE) / 8;
/** TCP/IP headers and the shaper's own accounting: what a bulk flow gets of the tbf rate. */
const GOODPUT = 0.95;
/** The gateway's keepalive interval, and in 2026.9.4 the pong deadline (the next tick): 25 s, hard-coded. */
const KEEPALIVE_MS = 25_000;
/** The large frame starts this long before a keepalive tick, so that tick's ping queues behind it. */
const LEAD_MS = 3_000;
/** How long the large frame should take to leave the gateway: past the deadline (LEAD_MS + 25 s), inside the node's tick watch (60 s). */
const DRAIN_TARGET_S = 44;
/** The tap's byte count is sampled this often while the frame drains. */
const SAMPLE_MS = 500;
/** The frame counts as moving at the deadline when its bytes grew at the tap in this window before it. */
const MOVING_WINDOW_MS = 3_000;
const CHECK_ID = "R-145189-connection-survives";
const MARKER = "repro-145189";

const EXPECTATION = `while the gateway is still sending a large frame to a node (its bytes reaching the node's side the whole time, past the gateway's 25 s keepalive deadline), the gateway does not close that connection: the frame arrives whole, the node answers, and the operator's node.invoke returns that answer`;

const findings: FindingRecord[] = [
  {
    // Reproduced on 2026.9.4 (runs 20261202-032154-bbdc, the matrices of 2026-12-02, and
    // 20261202-042317-9ec3, the excerpt's): with the gateway's egress at 512 kbit and
    // a 3.5 MB node.invoke.request under way, no ping reached the node between the tick and the
    // deadline, and the gateway ended the node's connection (1006, no close frame) 28.7 s after the
    // send, at the deadline, while the frame was still moving (1.54 MB of it at the tap); the
    // operator got UNAVAILABLE "DISCONNECTED: node disconnected (system.which)". 2026.9.6 (run
    // 20261202-031517-34ad): the frame was whole after 43.9 s, the queued ping followed it, the
    // connection stayed open and the operator got the node's answer.
    id: "R-145189-connection-survives",
    expectation: EXPECTATION,
    signature: { connectionEnded: "dropped by the gateway", frameArrivedWhole: false, operatorGot: "UNAVAILABLE: DISCONNECTED: node disconnected (system.which)" },
    versions: ["2026.9.4"],
    kind: "shortfall",
    evidence: "fixtures/findings/R-145189-connection-survives.json",
  },
];

/** Deterministic, incompressible padding (base64 of a SHA-256 chain): the same frame on every run. */
function padding(chars: number): string {
  const parts: Buffer[] = [];
  let bytes = 0;
  for (let i = 0; (bytes * 4) / 3 < chars; i++) {
    const h = crypto.createHash("sha256").update(`fleetlab-${MARKER}-${i}`).digest();
    parts.push(h);
    bytes += h.length;
  }
  return Buffer.concat(parts).toString("base64").slice(0, chars);
}

interface Sample {
  t: number;
  /** Bytes the tap has received from the gateway on the node's connection (null: connection gone from the table). */
  bytes: number | null;
  state: string;
}

/** The close of the node's connection as its client saw it (t: this machine's clock). */
type Closed = { code: number; reason: string; t: number };

/** The wire while the large frame drained, as observed when the window ended (times: this machine's clock, ms). */
interface Wire {
  /** Whose egress was limited (the gateway; aimed off: the tap). */
  limited: string;
  /** The keepalive tick the send was placed before (its deadline: tick + KEEPALIVE_MS), and the send. */
  tick: number;
  tReq: number;
  samples: Sample[];
  /** When the large node.invoke.request was whole at the tap (null: never). */
  frameWholeAt: number | null;
  /** The gateway's pings on the connection since the send. */
  pings: { seq: number; t: number }[];
  /** When the tap saw the connection closed (null: not closed, or gone from its table). */
  tapClosedAt: number | null;
  closed: Closed | null;
}

/** What the user got, as observed where the check reads it. */
interface User {
  /** The node's connection as its client saw it, and at the tap, when the window ended. */
  closed: Closed | null;
  tap: { state: string; closedAt: number | null } | null;
  /** The padding sent and the padding that reached the node (null: no invoke arrived, or no string in it): length and SHA-256. */
  sent: { chars: number; sha256: string };
  arrived: { chars: number; sha256: string } | null;
  /** The operator's node.invoke: the refusal, the answer's payload, or null (no answer yet). */
  operatorGot: Refused | { payload: unknown } | null;
}

export interface Observed {
  wire?: Wire;
  user?: User;
}

/** A string's length and SHA-256 (a 3.6 MB padding compared without keeping it). */
const digest = (v: unknown): { chars: number; sha256: string } | null => (typeof v === "string" ? { chars: v.length, sha256: crypto.createHash("sha256").update(v).digest("hex") } : null);

/** The connection's close in the window: the node's side saw it, or the tap did. */
const closedInWindowOf = (closed: Closed | null | undefined, tap: { state: string; closedAt: number | null } | null | undefined) =>
  closed ?? (tap?.state === "closed" ? { code: null, reason: "closed at the tap", t: tap.closedAt } : undefined);

/** P-145189-frame-in-flight-at-deadline over the wire as observed. */
function inFlight(w: Wire) {
  const { samples, tick, tReq, closed } = w;
  const deadline = tick + KEEPALIVE_MS;
  const before = (t: number) => samples.filter((s) => s.t <= t && s.bytes !== null);
  // The frame was under way when the ping was due (or within 2 s of it: the tick of a gateway
  // busy with the frame fires late). Whether the ping went out before the frame is what
  // pingPastFrame decides: a ping sent first is on the tap before the deadline.
  const firstBytes = samples.find((s) => (s.bytes ?? 0) > 0);
  const startedBeforeTick = !!firstBytes && firstBytes.t <= tick + 2_000;
  const nearDeadline = before(deadline).filter((s) => s.t >= deadline - MOVING_WINDOW_MS);
  const movingAtDeadline = nearDeadline.length >= 2 && nearDeadline.at(-1)!.bytes! > nearDeadline[0]!.bytes!;
  const wholeAtTapAt = w.frameWholeAt;
  const incompleteAtDeadline = wholeAtTapAt === null ? (w.tapClosedAt ?? closed?.t ?? Infinity) >= deadline - SAMPLE_MS : wholeAtTapAt > deadline;
  const pingPastFrame = w.pings.find((p) => p.t > tick - 200 && p.t <= deadline);
  // The rate the tap measured: every byte it got from the gateway, over the time from the request
  // to the first sample that had them all (sampling makes it read a little low, never high).
  const counted = samples.filter((s) => s.bytes !== null);
  const most = Math.max(0, ...counted.map((s) => s.bytes!));
  const full = counted.find((s) => s.bytes === most);
  const tapRateBytesS = full && most > 0 && full.t > tReq ? Math.round((most / (full.t - tReq)) * 1000) : null;
  const governedByLimit = tapRateBytesS !== null && tapRateBytesS <= RATE_BYTES_S * 1.1;
  const labWatchClosed = closed?.code === 4000;
  const met = startedBeforeTick && movingAtDeadline && incompleteAtDeadline && !pingPastFrame && governedByLimit && !labWatchClosed;
  const observed = {
    limited: w.limited,
    rateBytesS: RATE_BYTES_S,
    tapRateBytesS,
    tapBytes: most,
    startedBeforeTick,
    firstBytesAfterTickMs: firstBytes ? firstBytes.t - tick : null,
    movingAtDeadline,
    bytesNearDeadline: nearDeadline.map((s) => s.bytes),
    incompleteAtDeadline,
    wholeAtTapAfterMs: wholeAtTapAt === null ? null : Math.round(wholeAtTapAt - tReq),
    deadlineAfterMs: deadline - tReq,
    pingPastFrame: pingPastFrame ? { seq: pingPastFrame.seq, afterMs: Math.round(pingPastFrame.t - tReq) } : null,
    labWatchClosed,
  };
  return { met, observed };
}

export default defineScenario<Observed>({
  name: "repro-145189",
  upstream: {
    issue: 145189,
    title: "Control UI disconnects while WebSocket pings are queued behind outgoing data",
    status: "fixed",
    fixPr: 145191,
    fixedIn: "2026.9.5",
    fixedInSource: "the 2026.9.5 release notes (CHANGELOG/2026.9.5.md in openclaw/openclaw) list #145191, \"Keep slow control connections online while pings wait to send\"; it was merged 2026-09-11, after 2026.9.4 was built; this repro reads fixed? on 2026.9.5 and 2026.9.6 (matrix-20261202-042317-aa1f)",
    checked: "2026-12-03",
    source: "https://github.com/openclaw/openclaw/issues/145189",
  },
  protocolSteps: [
    "Pair a node and keep its connection open; limit what the gateway sends to it to 512 kbit/s (e.g. `tc tbf` on the gateway's egress).",
    "About 3 s before one of the gateway's keepalive pings to that connection (every 25 s), as an operator send `node.invoke` `system.which` to the node with a ~3.5 MB incompressible padding parameter, so the `node.invoke.request` frame takes ~44 s to leave the gateway.",
    "Watch the node's side: on 2026.9.4 no ping arrives behind the frame, the gateway closes the connection (1006) at the keepalive deadline while the frame's bytes still arrive, the frame never completes, and the operator's invoke answers `UNAVAILABLE` \"DISCONNECTED: node disconnected (system.which)\" (expected: the frame arrives whole, the node answers, the invoke returns that answer).",
  ],
  proves: "a node connection over which the gateway is still sending a large frame (data moving past the keepalive deadline) is not closed by the gateway's keepalive: the frame arrives whole and the invoke is answered (openclaw/openclaw#145189, fix PR #145191)",
  topology: "own",
  pairing: "fresh",
  spec: { nodes: { count: 0 }, scripted: { count: 1 }, mcp: { servers: [] }, git: { enabled: false } },
  needs: [{ method: "node.invoke", why: "the large frame is the node.invoke.request the gateway sends for an operator's node.invoke" }],
  findings,
  bug: [CHECK_ID],
  premises: [
    {
      id: "P-145189-frame-in-flight-at-deadline",
      what: "the gateway was still sending the large node.invoke.request when its keepalive deadline passed: begun by 2 s after the ping was due, not yet whole at the tap at the deadline while its bytes still arrived there, no ping past it, drained at the fault's rate, and the node's connection not ended by the lab client's own tick watch",
      aimOff: "the bandwidth limit on tap-scripted-1 (what the tap sends) instead of on the gateway",
      judge: (h) => h.wire && inFlight(h.wire),
    },
  ],
  checks: [
    {
      id: CHECK_ID,
      expectation: EXPECTATION,
      judge: (h) => {
        if (!h.user) return undefined;
        const { operatorGot: got, sent, arrived } = h.user;
        const arrivedWhole = arrived !== null && arrived.chars === sent.chars && arrived.sha256 === sent.sha256;
        const returned = got && !isRefused(got) ? got.payload : undefined;
        const operatorGotAnswer = (returned as { paddingChars?: unknown } | undefined)?.paddingChars === sent.chars;
        // The connection ended if the node's side closed, or if the gateway said it dropped the node
        // (the operator's invoke refused DISCONNECTED). With the gateway's egress limited, its close
        // waits behind the queued bytes: the node's side may see it long after (in 2 of 3 runs on
        // 2026.9.4 not within 5 s), so the gateway's own account is read first.
        const gatewayDropped = got !== null && isRefused(got) && /DISCONNECTED/.test(got.message);
        const connectionEnded = gatewayDropped ? "dropped by the gateway" : closedInWindowOf(h.user.closed, h.user.tap) ? "closed" : null;
        return {
          holds: !connectionEnded && arrivedWhole && operatorGotAnswer,
          observed: normalise({
            connectionEnded,
            frameArrivedWhole: arrivedWhole,
            operatorGot: got === null ? "no answer" : isRefused(got) ? `${got.code}${got.detailsCode ? `/${got.detailsCode}` : ""}: ${got.message}` : operatorGotAnswer ? "the node's answer" : "another answer",
          }),
        };
      },
    },
  ],
  timeoutMs: 300_000,
  async run(ctx) {
    const { lab, log, observe, signal, aimOff } = ctx;
    const alias = "scripted-1";
    const node = lab.scripted(alias);
    const tap = lab.tap(alias);
    const limited = aimOff ? tapAlias(alias) : lab.gateway.alias;
    await scene(ctx, { evidence: { nodeId: node.nodeId, bounds: { RATE, KEEPALIVE_MS, LEAD_MS, DRAIN_TARGET_S, SAMPLE_MS, MOVING_WINDOW_MS }, limited } }, async ({ evidence, tl }) => {
      await labStep(`pairing ${alias}`, () => pairScripted(lab, alias, { signal }));
      const client = node.current!;
      const tickWatchMs = 2 * client.hello!.policy.tickIntervalMs;
      const conn = await labStep("the node's connection at its tap", () => controlConn(tap));
      let closed: Closed | undefined;
      client.onClose((code, reason) => (closed ??= { code, reason, t: Date.now() }));

      // ---- the frame: sized from the fault's rate, for the compression the connection negotiated
      const deflate = (await tap.connections()).find((c) => c.conn === conn)?.deflate ?? false;
      const sample = padding(256 * 1024);
      const ratio = deflate ? deflateRawSync(sample).length / sample.length : 1;
      const wireTarget = Math.round(DRAIN_TARGET_S * RATE_BYTES_S * GOODPUT);
      const blob = padding(Math.ceil(wireTarget / ratio));
      const wireEstimate = deflate ? deflateRawSync(blob).length : blob.length;
      const predictedDrainMs = Math.round((wireEstimate / (RATE_BYTES_S * GOODPUT)) * 1000);
      const frame = { deflate, ratio: Math.round(ratio * 1000) / 1000, paddingChars: blob.length, wireEstimate, predictedDrainMs, tickWatchMs };
      log(`frame: ${JSON.stringify(frame)}; the 2026.9.4 deadline falls ${LEAD_MS + KEEPALIVE_MS} ms after it starts`);
      evidence.frame = frame;
      if (predictedDrainMs < LEAD_MS + KEEPALIVE_MS + 8_000 || predictedDrainMs > tickWatchMs - 8_000) {
        throw new LabInfraError(`the frame would drain in ${predictedDrainMs} ms: not between the keepalive deadline (${LEAD_MS + KEEPALIVE_MS} ms) and the node's tick watch (${tickWatchMs} ms) with 8 s to spare`);
      }

      // ---- the limit (in effect once tc lists it)
      const limit = faults.bandwidth(lab, limited, RATE, { timeline: tl });
      const injected = await labStep(`limiting what ${limited} sends to ${RATE}`, () => limit.inject());
      log(`bandwidth on ${limited}: ${JSON.stringify(injected.detail)}`);
      evidence.fault = { inject: injected.detail };

      // ---- the keepalive's phase, from the gateway's last ping on the node's connection
      await labStep("a keepalive ping from the gateway on the node's connection", () => tap.waitForFrame({ dir: "gw->node", opcode: "ping", conn }, { timeoutMs: KEEPALIVE_MS + 10_000, signal }));
      const lastPing = (await tap.frames({ conn })).filter((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.ping).at(-1)!;
      let tick = lastPing.t + KEEPALIVE_MS;
      while (tick - LEAD_MS < Date.now() + 1_500) tick += KEEPALIVE_MS; // fixed: not a deadline: the next tick on the gateway's keepalive schedule (its wall clock)
      await sleep(tick - LEAD_MS - Date.now(), signal); // positions the send; decides nothing

      // ---- a node.event (the node's tick watch counts from its answer), then the large invoke
      const probe = await node.request("node.event", { event: "fleetlab.probe", payloadJSON: JSON.stringify({ n: 0 }) }, client).catch(refusal);
      if (isRefused(probe)) throw new LabInfraError(`the paired node's node.event was refused (${probe.code}: ${probe.message}) before the large frame`);
      const since = await tap.seq();
      const base = (await tap.connections()).find((c) => c.conn === conn)?.bytes["gw->node"] ?? 0;
      node.answerWith("system.which", (inv) => {
        const got = (inv.params as { padding?: unknown } | undefined)?.padding;
        return { ok: true, payload: { fleetlab: MARKER, paddingChars: typeof got === "string" ? got.length : null } };
      });
      const tReq = Date.now();
      let answered: Record<string, unknown> | Refused | undefined;
      const invoke = lab.operator.client
        .request<Record<string, unknown>>("node.invoke", { nodeId: node.nodeId, command: "system.which", params: { bins: ["git"], fleetlab: MARKER, padding: blob }, idempotencyKey: crypto.randomUUID(), timeoutMs: 150_000 }, { timeoutMs: 160_000 })
        .catch(refusal)
        .then((r) => (answered = r));
      log(`node.invoke with ${blob.length} chars of padding sent ${tick - tReq} ms before the keepalive tick at ${new Date(tick).toISOString()} (last ping ${new Date(lastPing.t).toISOString()}); deadline ${new Date(tick + KEEPALIVE_MS).toISOString()}`);

      // The gateway's socket to the tap 1 s before the deadline (Send-Q: what its kernel holds; the
      // rest of the frame, and the ping behind it, are still in the gateway's process), for the reader.
      const early = new AbortController();
      const socketAtDeadline = sleep(Math.max(0, tick + KEEPALIVE_MS - 1_000 - Date.now()), AbortSignal.any([signal, early.signal]))
        .then(() => lab.exec(lab.gateway.alias, ["ss", "-tn", "dst", lab.member(tapAlias(alias)).ip]))
        .then(
          (r) => r.stdout.trim(),
          (e: Error) => (early.signal.aborted ? "not read: the window ended before the deadline" : `ss failed: ${e.message}`),
        );

      // ---- the drain, sampled on the tap until the connection ends or the invoke comes back
      const samples: Sample[] = [];
      const polled = await pollUntil(
        "the large frame drained and answered, or the node's connection ended",
        async () => {
          const c = (await tap.connections()).find((x) => x.conn === conn);
          samples.push({ t: Date.now(), bytes: c ? c.bytes["gw->node"] - base : null, state: c?.state ?? "gone" });
          return { closed: !!closed, tapState: c?.state ?? "gone", answered: answered !== undefined };
        },
        (v) => v.closed || v.tapState === "closed" || v.answered,
        { from: tReq, deadlineMs: tickWatchMs + 20_000, intervalMs: SAMPLE_MS, signal },
      );
      if (Date.now() < tick + KEEPALIVE_MS - 1_000) early.abort();
      // The operator's refusal can come before the node's side of the connection has closed (the
      // gateway drops its socket to the tap; the tap then closes toward the node): a window that
      // ended on the refusal waits up to 5 s for that close, so the close is read, not raced (a
      // 2026.9.4 matrix run judged before it and read "not closed").
      if (answered !== undefined && isRefused(answered) && !closed) {
        await pollUntil(
          "the node's side of the connection closed after the operator's refusal",
          async () => ({ closed: !!closed, tapState: (await tap.connections()).find((x) => x.conn === conn)?.state ?? "gone" }),
          (v) => v.closed || v.tapState === "closed" || v.tapState === "gone",
          { deadlineMs: 5_000, intervalMs: 100, signal },
        ).catch(() => undefined);
      }
      const healed = await labStep(`removing the limit on ${limited}`, () => limit.heal());
      evidence.fault = { inject: injected.detail, heal: healed.detail };

      // ---- the wire: the large frame, the pings, the connection's end
      const frames = await tap.frames({ since, conn });
      const big = frames.find((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && (f.text ?? "").includes(MARKER));
      const pings = frames.filter((f) => f.dir === "gw->node" && f.opcode === WS_OPCODE.ping);
      const view = (await tap.connections()).find((c) => c.conn === conn);
      // What P-145189-frame-in-flight-at-deadline reads.
      const wire: Wire = {
        limited,
        tick,
        tReq,
        samples,
        frameWholeAt: big?.t ?? null,
        pings: pings.map((p) => ({ seq: p.seq, t: p.t })),
        tapClosedAt: view?.closedAt ?? null,
        closed: closed ?? null,
      };
      observe("wire", wire);
      const premiseSeen = inFlight(wire).observed;
      log(`premise: ${JSON.stringify(premiseSeen)}`);

      // ---- what the user sees
      const arrived = node.invokes().find((i) => i.command === "system.which");
      const got = answered;
      const returned = got && !isRefused(got) ? invokePayload(got) : undefined;
      const closedThen = closed;
      const closedInWindow = closedInWindowOf(closedThen, view);
      const gatewayLines = (await memberLog(lab, lab.gateway.alias, tReq)).filter((l) => /heartbeat|pingWriteState|bufferedBytes|slow.consumer|outbound_buffer|disconnect/i.test(l.line)).slice(0, 20);
      const onWire = {
        closed: closedInWindow ? { code: closedInWindow.code, reason: closedInWindow.reason, afterMs: closedInWindow.t === null ? null : Math.round(closedInWindow.t - tReq) } : null,
        frame: big ? { seq: big.seq, len: big.len, messageLen: big.messageLen ?? null, compressed: big.compressed ?? false, afterMs: Math.round(big.t - tReq) } : null,
        pings: pings.map((p: Frame) => ({ seq: p.seq, afterMs: Math.round(p.t - tReq) })),
        operatorGot: got === undefined ? "no answer yet" : isRefused(got) ? got : { paddingChars: (returned as { paddingChars?: unknown } | undefined)?.paddingChars ?? null },
        windowMs: polled.ms,
      };
      log(`the node's connection: ${JSON.stringify(onWire)}; gateway log: ${gatewayLines.map((l) => l.line).join(" | ") || "nothing about it"}`);
      // What R-145189-connection-survives reads: the close and the operator's answer as they stood
      // when the window ended, and the padding that reached the node against the one sent.
      observe("user", {
        closed: closedThen ?? null,
        tap: view ? { state: view.state, closedAt: view.closedAt } : null,
        sent: digest(blob)!,
        arrived: digest((arrived?.params as { padding?: unknown } | undefined)?.padding),
        operatorGot: got === undefined ? null : isRefused(got) ? got : { payload: returned },
      });
      evidence.premise = premiseSeen;
      evidence.onWire = onWire;
      evidence.samples = samples.map((s) => ({ ...s, afterMs: s.t - tReq }));
      evidence.gatewaySocketNearDeadline = await socketAtDeadline;
      evidence.gatewayLog = gatewayLines;
      evidence.tapConnection = view ?? null;
      void invoke; // settles by itself (answer, refusal on close, or its own time-out); nothing waits on it past the window
    });
  },
});
