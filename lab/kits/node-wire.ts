// A node host's link to the gateway as its wire tap recorded it: the worker path (bundle
// install, launches, bundle download, worker sockets, runner inventory), the worker commands
// the gateway sent the node with their params (read here once: the ids qa-lab reads from its
// in-process node), the node's control connection and its reconnects; and a node whose
// acknowledgements of worker.cancel.v1 are lost on the wire (qa-lab makes its supervisor's
// cancel throw; here the node really cancels, only its answer never arrives).
import crypto from "node:crypto";
import { WS_OPCODE, type Frame, type HttpExchange, type TapControl, type TapMatch, type TapRecord } from "../clients/tap.ts";
import { faults, type FaultTimeline, type WireFault } from "../faults/index.ts";
import type { Lab } from "../topology/lab.ts";

/** A node.invoke.request the gateway sent a node (any command). */
const isInvoke = (f: Frame): boolean => f.dir === "gw->node" && f.event === "node.invoke.request";

/** What one node's wire tap saw of the worker path since `since` (a tap seq). */
export interface WireSummary {
  bundleInstalls: Frame[];
  launches: Frame[];
  bundleDownloads: HttpExchange[];
  workerSockets: HttpExchange[];
  /** Every node.runnerInventory.update the node sent, with the gateway's answer and their tap times. */
  inventory: InventoryUpdate[];
}

/**
 * One node.runnerInventory.update (the node's runner inventory: its worker host and slots) as
 * the tap saw it: `t` when the tap read the request (epoch ms, the tap's clock, as every Frame's
 * `t`), `answeredT` when it read the gateway's answer (undefined: no answer yet, then `ok` is too).
 */
export interface InventoryUpdate {
  seq: number;
  t: number;
  conn: string;
  ok: boolean | undefined;
  answeredT?: number;
  errorCode?: string;
  errorDetailsCode?: string;
  workerHost?: unknown;
  protocolFeatures?: unknown;
}

/** The runner inventory updates among a tap's frames, in order, each with the gateway's answer. */
export function inventoryIn(frames: readonly Frame[]): InventoryUpdate[] {
  return frames
    .filter((f) => f.dir === "node->gw" && f.method === "node.runnerInventory.update")
    .map((req) => {
      const res = frames.find((f) => f.dir === "gw->node" && f.type === "res" && f.id === req.id && f.conn === req.conn);
      let params: { workerHost?: unknown; protocolFeatures?: unknown } = {};
      try {
        params = (JSON.parse(req.text ?? "{}") as { params?: typeof params }).params ?? {};
      } catch {
        /* a truncated frame: fields stay unknown */
      }
      return {
        seq: req.seq,
        t: req.t,
        conn: req.conn,
        ok: res?.ok,
        ...(res ? { answeredT: res.t } : {}),
        errorCode: res?.errorCode,
        errorDetailsCode: res?.errorDetailsCode,
        workerHost: params.workerHost,
        protocolFeatures: params.protocolFeatures,
      };
    });
}

/** The node's runner inventory updates since `since` (a tap seq), with their tap times and answers. */
export async function inventoryUpdates(tap: TapControl, since = 0): Promise<InventoryUpdate[]> {
  return inventoryIn(await tap.frames({ since }));
}

export async function wireSummary(lab: Lab, alias: string, since = 0): Promise<WireSummary> {
  const tap = lab.tap(alias);
  const [frames, http] = await Promise.all([tap.frames({ since }), tap.http({ since })]);
  const invokes = (command: string) => frames.filter((f) => isInvoke(f) && f.command === command);
  const inventory = inventoryIn(frames);
  return {
    bundleInstalls: invokes("worker.bundle.install.v1"),
    launches: invokes("worker.launch.v1"),
    bundleDownloads: http.filter((h) => h.path.startsWith("/__openclaw__/worker-bundle/")),
    workerSockets: http.filter((h) => h.path.startsWith("/__openclaw__/worker") && !!h.upgrade),
    inventory,
  };
}

/** The node's open control connection ("/") at its tap. */
export async function controlConn(tap: TapControl): Promise<string> {
  const open = (await tap.connections()).filter((c) => c.path === "/" && c.state === "open");
  if (open.length !== 1) throw new Error(`expected one open control connection at the tap, found ${open.map((c) => c.conn).join(", ") || "none"}`);
  return open[0]!.conn;
}

/**
 * The node's next successful connect on "/" after `since` (its reconnection as the tap saw it).
 * `timeoutMs` is paced (lab/core/pace.ts) unless `expectation` makes it the fixed bound judged.
 */
export async function waitReconnect(tap: TapControl, since: number, timeoutMs = 90_000, opts: { expectation?: boolean } = {}): Promise<Frame> {
  return tap.waitForFrame((f) => f.path === "/" && f.dir === "gw->node" && f.replyTo === "connect" && f.ok === true, { since, timeoutMs, what: "a successful connect of the node on /", expectation: opts.expectation });
}

/** Connection events and control frames (no worker traffic) since `since`, for evidence. */
export async function controlEvents(tap: TapControl, since: number): Promise<TapRecord[]> {
  const all = await tap.events({ since });
  return all.filter((e) => {
    if (e.kind === "frame") {
      const f = e as Frame;
      return f.path === "/" && (f.opcode !== WS_OPCODE.text || f.method === "connect" || f.replyTo === "connect" || f.event === "tick" || !!f.command);
    }
    return true;
  });
}

/** A connect the gateway refused on a node's control path, as its tap saw it: an answer to `connect` with ok false, or an upgrade on "/" answered with an error status. */
export interface RefusedConnect {
  seq: number;
  t: number;
  conn: string;
  how: "connect" | "upgrade";
  code?: string;
  detailsCode?: string;
  status?: number;
}

/** The refused connects among a tap's frames and HTTP exchanges, in order. */
export function refusedConnectsIn(frames: readonly Frame[], http: readonly HttpExchange[]): RefusedConnect[] {
  const answers: RefusedConnect[] = frames
    .filter((f) => f.dir === "gw->node" && f.path === "/" && f.replyTo === "connect" && f.ok === false)
    .map((f) => ({ seq: f.seq, t: f.t, conn: f.conn, how: "connect", ...(f.errorCode ? { code: f.errorCode } : {}), ...(f.errorDetailsCode ? { detailsCode: f.errorDetailsCode } : {}) }));
  const upgrades: RefusedConnect[] = http.filter((h) => h.path === "/" && h.upgrade && h.status !== null && h.status >= 400).map((h) => ({ seq: h.seq, t: h.t, conn: h.conn, how: "upgrade", status: h.status! }));
  return [...answers, ...upgrades].sort((a, b) => a.seq - b.seq);
}

/** The node's connects refused since `since` (a tap seq): what a re-pairing repro counts. */
export async function refusedConnects(tap: TapControl, since = 0): Promise<RefusedConnect[]> {
  const [frames, http] = await Promise.all([tap.frames({ since }), tap.http({ since })]);
  return refusedConnectsIn(frames, http);
}

// ---- worker commands: node.invoke.request frames of worker.* commands, and their params

/**
 * The params of a node.invoke.request: its payload's paramsJSON, parsed (or its payload's
 * params, when sent as an object). Undefined when the frame has none or its text was cut short
 * (the tap keeps a frame's text whole up to 1 MiB).
 */
export function invokeParams(f: Frame): Record<string, unknown> | undefined {
  try {
    const payload = (JSON.parse(f.text ?? "{}") as { payload?: { paramsJSON?: unknown; params?: unknown } }).payload;
    if (typeof payload?.paramsJSON === "string") return JSON.parse(payload.paramsJSON) as Record<string, unknown>;
    if (payload?.params && typeof payload.params === "object") return payload.params as Record<string, unknown>;
  } catch {
    /* a truncated frame: params stay unknown */
  }
  return undefined;
}

/** One node.invoke.request of a worker.* command, as the node's tap saw it. */
export interface WorkerCommand {
  seq: number;
  t: number;
  command: string;
  invokeId?: string;
  /** The command's params (paramsJSON), when the frame was whole. */
  params?: Record<string, unknown>;
  action: Frame["action"];
}

export function commandOf(f: Frame): WorkerCommand {
  const c: WorkerCommand = { seq: f.seq, t: f.t, command: f.command ?? "", invokeId: f.invokeId, action: f.action };
  const params = invokeParams(f);
  if (params) c.params = params;
  return c;
}

/** The worker.* commands the gateway sent `alias` since `since` (a tap seq), in order. */
export async function workerCommands(lab: Lab, alias: string, since = 0): Promise<WorkerCommand[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => isInvoke(f) && (f.command ?? "").startsWith("worker.")).map(commandOf);
}

/** A worker.launch.v1 the node received, with the ids of its descriptor. */
export interface Launch {
  seq: number;
  t: number;
  launchId?: string;
  runId?: string;
  environmentId?: string;
  sessionId?: string;
  ownerEpoch?: number;
  placementGeneration?: number;
}

/** The ids a worker.launch.v1 carries (unknown when its frame was cut short). */
export function launchOf(f: Frame): Launch {
  const l: Launch = { seq: f.seq, t: f.t };
  const p = invokeParams(f) as
    | { launchId?: string; placementGeneration?: number; descriptor?: { admission?: { environmentId?: string; sessionId?: string; ownerEpoch?: number }; assignment?: { runId?: string } } }
    | undefined;
  if (!p) return l;
  return Object.assign(l, {
    launchId: p.launchId,
    runId: p.descriptor?.assignment?.runId,
    environmentId: p.descriptor?.admission?.environmentId,
    sessionId: p.descriptor?.admission?.sessionId,
    ownerEpoch: p.descriptor?.admission?.ownerEpoch,
    placementGeneration: p.placementGeneration,
  });
}

/** The worker.launch.v1 frames the gateway sent `alias` since `since` (a tap seq), with their ids. */
export async function launches(lab: Lab, alias: string, since = 0): Promise<Launch[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => isInvoke(f) && f.command === "worker.launch.v1").map(launchOf);
}

/** worker.launch.v1 frames to `alias` since `since` that carry run `runId` (anywhere in their text: a cut frame counts too). */
export async function launchesForRun(lab: Lab, alias: string, runId: string, since = 0): Promise<Frame[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => f.dir === "gw->node" && f.command === "worker.launch.v1" && (f.text ?? "").includes(runId));
}

// ---- a node whose acknowledgements of worker.cancel.v1 are lost

/** A node whose answers to worker.cancel.v1 never reach the gateway. */
export interface LostCancelAcks {
  /** The worker.cancel.v1 requests that reached the node (each answer dropped at the tap). */
  cancels(): WorkerCommand[];
  /** The drop rules, one per cancel request (their hits say the answer was dropped). */
  drops(): WireFault[];
  /** Stop watching and remove the rules (also done by the lab's teardown). */
  stop(): Promise<void>;
}

/**
 * From now on, every node.invoke.result answering a worker.cancel.v1 to `alias` is dropped at
 * the tap. Such an answer looks like a worker.status.v1 answer (the same launch fields and
 * state), so it is told by its invoke id: each cancel request is held `holdMs` at the tap
 * (wire.delay; the node still gets it), and while it is held a drop rule for the node's
 * node.invoke.result naming that invoke id is added. The node cancels; the gateway never hears.
 */
export async function loseCancelAcks(lab: Lab, alias: string, opts: { timeline?: FaultTimeline; holdMs?: number; signal?: AbortSignal } = {}): Promise<LostCancelAcks> {
  const tap = lab.tap(alias);
  const since = await tap.seq();
  const hold = faults.wire.delay({ lab, node: alias }, opts.holdMs ?? 1_000, { dir: "gw->node", command: "worker.cancel.v1" }, { timeline: opts.timeline, label: `${alias} worker.cancel.v1 held` });
  await hold.inject();
  const seen: WorkerCommand[] = [];
  const drops: WireFault[] = [];
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([stop.signal, opts.signal]) : stop.signal;
  const watching = (async () => {
    for await (const f of faults.when.tapFrames(tap, { since, signal, intervalMs: 20 })) {
      if (f.dir !== "gw->node" || f.command !== "worker.cancel.v1" || !f.invokeId) continue;
      seen.push(commandOf(f));
      const drop = faults.wire.drop({ lab, node: alias }, { dir: "node->gw", method: "node.invoke.result", textIncludes: f.invokeId }, { once: true, timeline: opts.timeline, label: `${alias} answer to worker.cancel.v1 ${f.invokeId.slice(0, 8)}` });
      drops.push(drop);
      await drop.inject();
    }
  })().catch((err: unknown) => {
    if (!signal.aborted) throw err;
  });
  watching.catch(() => {}); // surfaced by stop()
  return {
    cancels: () => [...seen],
    drops: () => [...drops],
    stop: async () => {
      stop.abort(new Error("stopped"));
      await watching;
      await hold.heal();
      for (const d of drops) await d.heal();
    },
  };
}

// ---- invokes of the lab's own, written toward a node by its tap (wire.inject)

/** The payload of an operator's answered node.invoke (its payload, or its payloadJSON parsed). */
export function invokePayload(r: Record<string, unknown>): unknown {
  return r.payload ?? (typeof r.payloadJSON === "string" ? JSON.parse(r.payloadJSON) : undefined);
}

/** A node's answer to one invoke (its node.invoke.result), with the payload parsed. */
export interface InvokeAnswer {
  seq: number;
  t: number;
  ok: boolean | undefined;
  /** payload, or payloadJSON parsed (its text when it is not JSON); null when the node sent none. */
  payload: unknown;
  error: unknown;
}

export function answerOf(f: Frame): InvokeAnswer {
  let params: { ok?: boolean; payload?: unknown; payloadJSON?: unknown; error?: unknown } = {};
  try {
    params = (JSON.parse(f.text ?? "{}") as { params?: typeof params }).params ?? {};
  } catch {
    /* a truncated frame: fields stay unknown */
  }
  let payload = params.payload;
  if (typeof params.payloadJSON === "string") {
    try {
      payload = JSON.parse(params.payloadJSON);
    } catch {
      payload = params.payloadJSON;
    }
  }
  return { seq: f.seq, t: f.t, ok: params.ok, payload: payload ?? null, error: params.error ?? null };
}

/**
 * The node's receipts for one launch: its answers to the gateway's worker.status.v1 for
 * `launchId` since `since`, in order. A receipt names the launch's whole identity (launchId,
 * planHash, environmentId, sessionId, ownerEpoch, placementGeneration, runId) and its state.
 */
export async function launchReceipts(lab: Lab, alias: string, launchId: string, since = 0): Promise<(InvokeAnswer & { invokeId: string })[]> {
  const frames = await lab.tap(alias).frames({ since });
  const asked = new Set(frames.filter((f) => isInvoke(f) && f.command === "worker.status.v1" && f.invokeId && invokeParams(f)?.launchId === launchId).map((f) => f.invokeId!));
  return frames.filter((f) => f.dir === "node->gw" && f.method === "node.invoke.result" && f.invokeId && asked.has(f.invokeId)).map((f) => ({ ...answerOf(f), invokeId: f.invokeId! }));
}

/** The identity fields of a worker launch, as worker.cancel.v1 takes them (the node's receipt names them all). */
export const LAUNCH_IDENTITY = ["launchId", "planHash", "environmentId", "sessionId", "ownerEpoch", "placementGeneration", "runId"] as const;

export function launchIdentity(receipt: unknown): Record<(typeof LAUNCH_IDENTITY)[number], unknown> | undefined {
  if (!receipt || typeof receipt !== "object") return undefined;
  const r = receipt as Record<string, unknown>;
  if (!LAUNCH_IDENTITY.every((k) => r[k] !== undefined)) return undefined;
  return Object.fromEntries(LAUNCH_IDENTITY.map((k) => [k, r[k]])) as Record<(typeof LAUNCH_IDENTITY)[number], unknown>;
}

/** What invokeOnNode did: the frame the tap wrote, and the node's answer (undefined: none within the time). */
export interface WrittenInvoke {
  invokeId: string;
  written: Frame;
  answer: InvokeAnswer | undefined;
}

/**
 * Send `alias` an invoke the gateway never sent: a node.invoke.request with `command` and
 * `params`, written by the node's tap on its control connection ("/") right after the next
 * gateway frame that matches `at` (wire.inject), and wait up to `timeoutMs` for the node's
 * node.invoke.result naming it. The node cannot tell it from the gateway's own; the gateway,
 * which gets the answer, ignores a result it never asked for. The rule is healed before this
 * returns (one frame). A rule that never fires, or a frame the tap did not record, is the lab's
 * own failure (thrown).
 */
export async function invokeOnNode(
  lab: Lab,
  alias: string,
  opts: { nodeId: string; command: string; params: unknown; at: Omit<TapMatch, "dir" | "path" | "kind">; timeline?: FaultTimeline; timeoutMs?: number },
): Promise<WrittenInvoke> {
  const tap = lab.tap(alias);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const invokeId = `fleetlab-${crypto.randomUUID()}`;
  const text = JSON.stringify({ type: "event", event: "node.invoke.request", payload: { id: invokeId, nodeId: opts.nodeId, command: opts.command, paramsJSON: JSON.stringify(opts.params), timeoutMs } });
  const since = await tap.seq();
  const write = faults.wire.inject({ lab, node: alias }, "node", text, { ...opts.at, dir: "gw->node", path: "/" }, { timeline: opts.timeline, label: `${alias}: ${opts.command} written by the tap` });
  await write.inject();
  try {
    await write.fired(timeoutMs);
    const written = await tap.waitForFrame((f) => f.action === "inject" && f.invokeId === invokeId, { since, timeoutMs: 5_000, what: `the written ${opts.command} in the tap transcript` });
    const answered = await tap
      // expectation: no answer within timeoutMs is the observation "none" (answer undefined): a fixed window, not paced
      .waitForFrame((f) => f.dir === "node->gw" && f.method === "node.invoke.result" && f.invokeId === invokeId, { since, timeoutMs, what: `${alias}'s answer to the written ${opts.command}`, expectation: true })
      .catch(() => undefined);
    return { invokeId, written, answer: answered && answerOf(answered) };
  } finally {
    await write.heal();
  }
}
