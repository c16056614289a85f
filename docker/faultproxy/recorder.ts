// What the tap saw: WebSocket frames, HTTP exchanges, connection events and rule events, each
// with one global sequence number, kept in bounded in-memory rings (oldest dropped first) and
// written to stdout as JSON lines so the container log holds the full transcript.

import { performance } from "node:perf_hooks";
import type { Frame, HttpExchange, TapEvent, TapRecord } from "./wire.ts";

/** Milliseconds since the epoch with sub-millisecond resolution. */
export const nowMs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;

/** A record of one kind as handed to record(): seq is stamped there, t when not given. */
export type Unstamped<R> = R extends unknown ? Omit<R, "kind" | "seq" | "t"> & { t?: number } : never;
type OfKind<K extends TapRecord["kind"]> = Extract<TapRecord, { kind: K }>;

class Ring<T extends { seq: number }> {
  items: T[] = [];
  readonly cap: number;

  constructor(cap: number) {
    this.cap = cap;
  }

  push(x: T): void {
    this.items.push(x);
    // Trim in batches: splice on every push would make each push O(cap).
    if (this.items.length > this.cap + Math.max(64, this.cap >> 5)) this.items.splice(0, this.items.length - this.cap);
  }

  /** Entries with seq > since (entries are kept in seq order). */
  since(seq: number): T[] {
    const a = this.items;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return a.slice(lo);
  }

  clear(): void {
    this.items = [];
  }
}

export class Recorder {
  seq = 0;
  readonly rings: { frame: Ring<Frame>; http: Ring<HttpExchange>; event: Ring<TapEvent> };
  readonly out: ((line: string) => void) | null;

  /** limits: max entries kept per kind; out: where JSON lines go (null = nowhere). */
  constructor({ frames = 50_000, http = 10_000, events = 20_000, out = (line: string) => void process.stdout.write(line) }: { frames?: number; http?: number; events?: number; out?: ((line: string) => void) | null } = {}) {
    this.rings = { frame: new Ring(frames), http: new Ring(http), event: new Ring(events) };
    this.out = out;
  }

  /** Stamps `rec` with the next seq (and t, unless given), keeps and prints it; returns it. */
  record<K extends TapRecord["kind"]>(kind: K, rec: Unstamped<OfKind<K>>): OfKind<K> {
    const full = { kind, seq: ++this.seq, t: rec.t ?? nowMs(), ...rec } as TapRecord;
    full.t ??= nowMs();
    if (full.kind === "frame") this.rings.frame.push(full);
    else if (full.kind === "http") this.rings.http.push(full);
    else this.rings.event.push(full);
    if (this.out) {
      try {
        this.out(`${JSON.stringify(full)}\n`);
      } catch {
        // A closed stdout must not take the proxy down.
      }
    }
    return full as OfKind<K>;
  }

  frames({ since = 0, conn, match, limit }: { since?: number; conn?: string; match?: string; limit?: number } = {}): Frame[] {
    let out = this.rings.frame.since(since);
    if (conn) out = out.filter((f) => f.conn === conn);
    if (match) {
      out = out.filter((f) => [f.text, f.method, f.event, f.command, f.replyTo].some((v) => typeof v === "string" && v.includes(match)));
    }
    return limit ? out.slice(0, limit) : out;
  }

  http({ since = 0, conn }: { since?: number; conn?: string } = {}): HttpExchange[] {
    const out = this.rings.http.since(since);
    return conn ? out.filter((h) => h.conn === conn) : out;
  }

  /** Every kept record with seq > since, in seq order (frames, http, connection and rule events). */
  all({ since = 0 }: { since?: number } = {}): TapRecord[] {
    return [...this.rings.frame.since(since), ...this.rings.http.since(since), ...this.rings.event.since(since)].sort((a, b) => a.seq - b.seq);
  }

  /** Forgets every record; seq keeps counting so `since` stays meaningful for clients. */
  clear(): void {
    for (const r of Object.values(this.rings)) r.clear();
  }
}
