// The fault timeline: one entry per life-cycle step of every fault (prepare, inject, in-effect,
// heal, healed, cleanup, plus trigger/fired/failed), in the order they happened. Written to
// the run folder as JSON lines while the run goes, so a run that is killed still leaves the
// steps it got through.
import fs from "node:fs";
import path from "node:path";
import { raise } from "../core/escapes.ts";
import { TimelineEntry, parseJsonl } from "../evidence/records/index.ts";

// The entry format is an evidence record (lab/evidence/records/faults.ts): the report and the
// shard merge read the same declaration.
export type { FaultStep, TimelineEntry } from "../evidence/records/index.ts";

/** Epoch milliseconds with sub-millisecond precision (comparable with Date.now()). */
export const nowMs = (): number => Math.round((performance.timeOrigin + performance.now()) * 10) / 10;

export class FaultTimeline {
  readonly entries: TimelineEntry[] = [];

  readonly file?: string;
  /** file: where entries are appended as JSON lines as they arrive (none: memory only). */
  constructor(file?: string) {
    this.file = file;
    if (file) fs.mkdirSync(path.dirname(file), { recursive: true });
  }

  add(e: TimelineEntry): TimelineEntry {
    const entry = { ...e, t: Math.round(e.t * 10) / 10, ms: Math.round(e.ms * 10) / 10 };
    this.entries.push(entry);
    // Synchronous append: the line is on disk even if the process dies right after. A write that
    // fails (a full disk) does not fail the fault step it records (a heal that worked stays
    // healed): it is raised apart and ends the run as the lab's own error (lab/core/escapes.ts).
    if (this.file) {
      try {
        fs.appendFileSync(this.file, JSON.stringify(entry) + "\n");
      } catch (err) {
        raise(err);
      }
    }
    return entry;
  }

  /** Entries of one fault, in order. */
  of(id: string): TimelineEntry[] {
    return this.entries.filter((e) => e.id === id);
  }

  toJsonl(): string {
    return this.entries.map((e) => JSON.stringify(e)).join("\n") + (this.entries.length ? "\n" : "");
  }

  /** Writes every entry as JSON lines to `file` (replacing it); returns the path. */
  write(file: string): string {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, this.toJsonl());
    return file;
  }

  /** The entries of a timeline file; a line that is not one fails, naming the file. */
  static read(file: string): TimelineEntry[] {
    const { records, bad } = parseJsonl(fs.readFileSync(file, "utf8"), TimelineEntry);
    if (bad) throw new Error(`${file}: ${bad} line(s) are not fault timeline entries`);
    return records.map((r) => r.value);
  }
}

/** What a fault needs of a run: its id (for labels) and, when it has one, its evidence folder. */
export interface RunLike {
  id: string;
  file?(rel: string): string;
  record?: Record<string, unknown>;
  save?(): void;
}

export const TIMELINE_FILE = "faults.jsonl";
const perRun = new WeakMap<object, FaultTimeline>();

/** The timeline of a run: `faults.jsonl` in its folder (memory only when it has none). */
export function timelineOf(run: RunLike): FaultTimeline {
  let tl = perRun.get(run);
  if (!tl) {
    tl = new FaultTimeline(run.file ? run.file(TIMELINE_FILE) : undefined);
    perRun.set(run, tl);
    if (run.record && run.save) {
      // run.json says where the fault timeline is.
      run.record.faults = { timeline: TIMELINE_FILE };
      run.save();
    }
  }
  return tl;
}
