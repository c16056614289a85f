// What the parity scenarios (scenarios/parity/) read and do on a node's wire, where OpenClaw's
// qa-lab reads its in-process node host's frames or stubs its supervisor: the worker commands
// the gateway sent a node (with their parsed params), the launches that carry one run, and a
// node whose acknowledgement of worker.cancel.v1 is lost on the wire (qa-lab makes
// supervisor.cancel throw; here the node really cancels, only its answer never arrives); and
// chat history as qa-lab compares it (by role and text).
import { messageText, type HistoryMessage } from "../clients/sessions.ts";
import type { Frame } from "../clients/tap.ts";
import { faults, type FaultTimeline, type Trigger, type WireFault } from "../faults/index.ts";
import type { Lab } from "../topology/lab.ts";

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

/** The worker.* commands the gateway sent `alias` since `since` (a tap seq), in order. */
export async function workerCommands(lab: Lab, alias: string, since = 0): Promise<WorkerCommand[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && (f.command ?? "").startsWith("worker.")).map(commandOf);
}

export function commandOf(f: Frame): WorkerCommand {
  const c: WorkerCommand = { seq: f.seq, t: f.t, command: f.command ?? "", invokeId: f.invokeId, action: f.action };
  try {
    const payload = (JSON.parse(f.text ?? "{}") as { payload?: { paramsJSON?: string } }).payload;
    if (payload?.paramsJSON) c.params = JSON.parse(payload.paramsJSON) as Record<string, unknown>;
  } catch {
    /* a truncated frame: params stay unknown */
  }
  return c;
}

/** worker.launch.v1 frames to `alias` since `since` that carry run `runId` (its assignment). */
export async function launchesForRun(lab: Lab, alias: string, runId: string, since = 0): Promise<Frame[]> {
  const frames = await lab.tap(alias).frames({ since });
  return frames.filter((f) => f.dir === "gw->node" && f.command === "worker.launch.v1" && (f.text ?? "").includes(runId));
}

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

/** `trigger`, then `then(value)` before the fault is injected (e.g. a snapshot of what the user sees just before). */
export function thenBeforeInject<T>(trigger: Trigger<T>, then: (value: T) => Promise<void>): Trigger<T> {
  return {
    what: trigger.what,
    async wait(signal) {
      const value = await trigger.wait(signal);
      await then(value);
      return value;
    },
  };
}

// ---- history as qa-lab compares it: message by message, by role and text, not by timestamps

/** One line per message: its role, its text, and its tool calls (name and arguments). */
export function historyLines(history: HistoryMessage[]): string[] {
  return history.map((m) => {
    const calls = Array.isArray(m.content)
      ? (m.content as { type?: unknown; name?: unknown; arguments?: unknown }[]).filter((p) => p && p.type === "toolCall").map((p) => ` [toolCall ${String(p.name)} ${JSON.stringify(p.arguments ?? null)}]`)
      : [];
    return `${m.role}: ${messageText(m.content)}${calls.join("")}`;
  });
}

/** Where `after` departs from `before`: the lines after their common prefix on each side. */
export function historyDiff(before: string[], after: string[]): { equal: boolean; removed: string[]; added: string[] } {
  let i = 0;
  while (i < before.length && i < after.length && before[i] === after[i]) i++;
  return { equal: i === before.length && i === after.length, removed: before.slice(i), added: after.slice(i) };
}
