// containers.jsonl on each member's lane: a box while the container ran, a tick per engine event
// (kill with its signal, die with its exit code, ...).
import { ContainerEventLine } from "../records/index.ts";
import type { Board } from "./board.ts";
import type { LabView, Tone } from "./types.ts";

export function drawContainers(b: Board, lab: LabView): void {
  b.orderMembers(lab);
  const rel = `${lab.evidence}/containers.jsonl`;
  const events = b.readJsonl(rel, ContainerEventLine, lab.key);
  const running = new Map<string, { t: number; line: number }>();
  const lastT = events.at(-1)?.value.t;
  for (const { line, value: e } of events) {
    const lane = b.memberLane(lab, e.alias);
    if (e.action === "start" || e.action === "restart" || e.action === "unpause") running.set(e.alias, { t: e.t, line });
    if ((e.action === "die" || e.action === "pause") && running.has(e.alias)) {
      b.add({ lane, kind: "container", t: running.get(e.alias)!.t, end: e.t, label: "running", tone: "ok", source: `${rel}#L${running.get(e.alias)!.line}` });
      running.delete(e.alias);
    }
    const what = e.action + (e.exitCode !== undefined ? ` (exit ${e.exitCode})` : "") + (e.signal ? ` (${e.signal})` : "");
    const tone: Tone = e.action === "kill" || e.action === "oom" ? "fault" : e.action === "die" ? (e.exitCode ? "error" : "warn") : e.action === "start" || e.action === "restart" ? "ok" : "info";
    b.add({ lane, kind: "container", t: e.t, label: what, tone, key: `container ${e.action}`, detail: e, source: `${rel}#L${line}` });
  }
  for (const [alias, r] of running) b.add({ lane: b.memberLane(lab, alias), kind: "container", t: r.t, end: lastT, label: "running", tone: "ok", source: `${rel}#L${r.line}` });
}
