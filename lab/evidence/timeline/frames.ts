// Keeping big runs usable: at most frameCap frames per connection and scenario window are
// embedded (the first and last halves; fewer when the run would pass framesTotalCap), the middle
// becomes one "left out" item and a notice naming the full transcript, and frame content longer
// than contentLimit is cut.
import type { Board } from "./board.ts";
import type { Item } from "./types.ts";

/** Every item, frames capped, in time order (frames outside every scenario window count as one more window). */
export function capFrames(b: Board): Item[] {
  const groups = new Map<string, Item[]>();
  const out: Item[] = [];
  for (const i of b.items) {
    if (i.kind !== "frame") {
      out.push(i);
      continue;
    }
    const lab = b.lanes.get(i.lane)?.lab;
    const s = b.scenarioAt(i.t, lab);
    const k = `${i.lane}\u0000${s?.name ?? ""}`;
    (groups.get(k) ?? groups.set(k, []).get(k)!).push(i);
  }
  // A run with many more connections than the standard lab's lowers the cap until the page
  // holds at most FRAMES_TOTAL frames.
  const embedded = (cap: number) => [...groups.values()].reduce((n, g) => n + Math.min(g.length, cap), 0);
  while (embedded(b.frameCap) > b.framesTotalCap && b.frameCap > 10) b.frameCap = Math.max(10, Math.floor(b.frameCap * 0.8));
  for (const [k, frames] of groups) {
    frames.sort((x, y) => x.t - y.t);
    if (frames.length <= b.frameCap) {
      out.push(...frames);
      continue;
    }
    const [laneId, scenario] = k.split("\u0000") as [string, string];
    const lane = b.lanes.get(laneId)!;
    const head = Math.ceil(b.frameCap / 2);
    const tail = b.frameCap - head;
    const dropped = frames.slice(head, frames.length - tail);
    out.push(...frames.slice(0, head), ...frames.slice(frames.length - tail));
    const where = `${scenario ? `during ${scenario}` : "outside the scenarios"}`;
    const message = `${lane.label} ${where}: ${frames.length} frames, ${dropped.length} left out (frames ${head + 1}–${head + dropped.length}); the full transcript is ${lane.source ?? "in the lab's transcripts"}`;
    out.push({ lane: laneId, kind: "omitted", t: dropped[0]!.t, end: dropped.at(-1)!.t, label: `${dropped.length} frames left out: full transcript ${lane.source ?? ""}`, tone: "muted", detail: { message, first: dropped[0]!.source, last: dropped.at(-1)!.source }, source: lane.source });
    b.notices.push({ lab: lane.lab, lane: laneId, message, file: lane.source, t: dropped[0]!.t, end: dropped.at(-1)!.t });
  }
  for (const i of out) {
    if (i.kind !== "frame" || !b.large.has(i)) continue;
    const text = JSON.stringify(i.detail);
    if (text.length > b.contentLimit) {
      i.detail = { cut: `${text.length} characters; the first ${b.contentLimit} are shown, the whole frame is at ${i.source}`, head: text.slice(0, b.contentLimit) };
    }
  }
  return out.sort((x, y) => x.t - y.t);
}
