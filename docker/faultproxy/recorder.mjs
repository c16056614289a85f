// What the tap saw: WebSocket frames, HTTP exchanges, connection events and rule events, each
// with one global sequence number, kept in bounded in-memory rings (oldest dropped first) and
// written to stdout as JSON lines so the container log holds the full transcript.

import { performance } from "node:perf_hooks";

/** Milliseconds since the epoch with sub-millisecond resolution. */
export const nowMs = () => Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;

class Ring {
  items = [];

  constructor(cap) {
    this.cap = cap;
  }

  push(x) {
    this.items.push(x);
    // Trim in batches: splice on every push would make each push O(cap).
    if (this.items.length > this.cap + Math.max(64, this.cap >> 5)) this.items.splice(0, this.items.length - this.cap);
  }

  /** Entries with seq > since (entries are kept in seq order). */
  since(seq) {
    const a = this.items;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid].seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return a.slice(lo);
  }

  clear() {
    this.items = [];
  }
}

export class Recorder {
  seq = 0;

  /** limits: max entries kept per kind; out: where JSON lines go (null = nowhere). */
  constructor({ frames = 50_000, http = 10_000, events = 20_000, out = (line) => process.stdout.write(line) } = {}) {
    this.rings = { frame: new Ring(frames), http: new Ring(http), event: new Ring(events) };
    this.out = out;
  }

  /** Stamps `rec` with the next seq (and t, unless given), keeps and prints it; returns it. */
  record(kind, rec) {
    const full = { kind, seq: ++this.seq, t: rec.t ?? nowMs(), ...rec };
    full.t ??= nowMs();
    (kind === "frame" ? this.rings.frame : kind === "http" ? this.rings.http : this.rings.event).push(full);
    if (this.out) {
      try {
        this.out(`${JSON.stringify(full)}\n`);
      } catch {
        // A closed stdout must not take the proxy down.
      }
    }
    return full;
  }

  frames({ since = 0, conn, match, limit } = {}) {
    let out = this.rings.frame.since(since);
    if (conn) out = out.filter((f) => f.conn === conn);
    if (match) {
      out = out.filter((f) => [f.text, f.method, f.event, f.command, f.replyTo].some((v) => typeof v === "string" && v.includes(match)));
    }
    return limit ? out.slice(0, limit) : out;
  }

  http({ since = 0, conn } = {}) {
    const out = this.rings.http.since(since);
    return conn ? out.filter((h) => h.conn === conn) : out;
  }

  /** Every kept record with seq > since, in seq order (frames, http, connection and rule events). */
  all({ since = 0 } = {}) {
    return [...this.rings.frame.since(since), ...this.rings.http.since(since), ...this.rings.event.since(since)].sort((a, b) => a.seq - b.seq);
  }

  /** Forgets every record; seq keeps counting so `since` stays meaningful for clients. */
  clear() {
    for (const r of Object.values(this.rings)) r.clear();
  }
}
