// containers.jsonl: the life of a lab's containers as the engine saw it (create, start, kill
// with its signal, die with its exit code, stop, restart, pause, destroy ...), from the
// engine's event stream filtered by the lab's label, one JSON line per event, written as it
// arrives (a run killed outright keeps what it saw). report.html draws it on each member's lane.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { docker } from "../engine/docker.ts";
import { waitFor } from "../core/wait.ts";
import { raise } from "../core/escapes.ts";
// The line format is an evidence record (lab/evidence/records/containers.ts), read by the report.
import type { ContainerEventLine } from "./records/index.ts";

/** Engine actions kept; exec_*, attach, resize, top, health_status and the like are left out. */
const ACTIONS = new Set(["create", "start", "restart", "kill", "die", "oom", "stop", "pause", "unpause", "destroy"]);

interface EngineEvent {
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
  timeNano?: number;
  time?: number;
}

const signalNames = new Map(Object.entries(os.constants.signals).map(([name, n]) => [String(n), name]));

/** An engine event as one line of containers.jsonl, or undefined for actions not kept. */
export function containerEventLine(e: EngineEvent): ContainerEventLine | undefined {
  const action = e.Action ?? "";
  if (e.Type !== "container" || !ACTIONS.has(action)) return undefined;
  const a = e.Actor?.Attributes ?? {};
  const t = e.timeNano ? Math.round(e.timeNano / 1e5) / 10 : (e.time ?? 0) * 1000;
  const line: ContainerEventLine = {
    t,
    time: new Date(t).toISOString(),
    alias: a["fleetlab.alias"] ?? a["fleetlab.fault"] ?? a.name ?? (e.Actor?.ID ?? "").slice(0, 12),
    kind: a["fleetlab.kind"],
    container: (e.Actor?.ID ?? "").slice(0, 12),
    action,
  };
  if (a.exitCode !== undefined && action === "die") line.exitCode = Number(a.exitCode);
  if (a.signal !== undefined && action === "kill") line.signal = signalNames.get(a.signal) ?? a.signal;
  return line;
}

export class ContainerEvents {
  readonly seen: ContainerEventLine[] = [];
  #stream: NodeJS.ReadableStream & { destroy?: () => void };

  readonly file: string;
  private constructor(
    file: string,
    stream: NodeJS.ReadableStream,
  ) {
    this.file = file;
    this.#stream = stream;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "");
    const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
    lines.on("line", (text) => {
      let e: EngineEvent;
      try {
        e = JSON.parse(text) as EngineEvent;
      } catch {
        return;
      }
      const line = containerEventLine(e);
      if (!line) return;
      this.seen.push(line);
      try {
        fs.appendFileSync(file, JSON.stringify(line) + "\n");
      } catch (err) {
        raise(err); // never thrown inside the engine's event stream (lab/core/escapes.ts)
      }
    });
    // The stream ends when stopped or when the engine goes; what was seen is already on disk.
    // Node's readline passes its input's error on to the interface: both need a listener (a
    // dockerd killed mid-run ended the whole process with this stream's 'aborted').
    stream.on("error", () => {});
    lines.on("error", () => {});
  }

  /** Start following the containers labelled fleetlab.lab=<labId>; events go to `file`. */
  static async follow(labId: string, file: string): Promise<ContainerEvents> {
    const stream = await docker().getEvents({ filters: { label: [`fleetlab.lab=${labId}`], type: ["container"] } });
    return new ContainerEvents(file, stream);
  }

  /**
   * Stop following. With `destroyed`, first wait (up to timeoutMs, default 5 s) until the engine
   * has reported those containers destroyed, so the file ends with their removal.
   */
  async stop(opts: { destroyed?: string[]; timeoutMs?: number } = {}): Promise<void> {
    const ids = (opts.destroyed ?? []).map((id) => id.slice(0, 12));
    try {
      if (ids.length) {
        await waitFor(`the engine's destroy events of ${ids.length} container(s)`, () => ids.every((id) => this.seen.some((e) => e.container === id && e.action === "destroy")), {
          timeoutMs: opts.timeoutMs ?? 5_000,
          intervalMs: 50,
        });
      }
    } catch {
      // A missing destroy event is not worth failing a teardown for: the file says what was seen.
    } finally {
      this.#stream.destroy?.();
    }
  }
}
