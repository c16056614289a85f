// One folder per run: run.json (topology, versions, image ids, seed, timings), container
// logs, frame transcripts, scenario verdicts. Everything a reader needs to judge the run.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { RUNS } from "../paths.ts";

export interface RunRecord {
  id: string;
  startedAt: string;
  endedAt?: string;
  seed: number;
  host: { platform: string; cpus: number; memGiB: number; node: string };
  engine?: { version: string; apiVersion: string };
  topology?: unknown;
  images?: Record<string, { tag: string; id: string; cached: boolean; seconds: number }>;
  timings: Record<string, number>;
  scenarios: { name: string; verdict: string; seconds: number; detail?: string }[];
  [k: string]: unknown;
}

export function newRunId(now = new Date()): string {
  const t = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15).toLowerCase();
  return `${t}-${randomBytes(2).toString("hex")}`;
}

export class Run {
  readonly record: RunRecord;
  constructor(
    readonly id: string,
    readonly dir: string,
    seed: number,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    this.record = {
      id,
      startedAt: new Date().toISOString(),
      seed,
      host: { platform: `${os.platform()}-${os.arch()}`, cpus: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
      timings: {},
      scenarios: [],
    };
    this.save();
  }

  static create(opts: { seed?: number; id?: string; root?: string } = {}): Run {
    const id = opts.id ?? newRunId();
    const seed = opts.seed ?? randomBytes(4).readUInt32BE() >>> 1;
    return new Run(id, path.join(opts.root ?? RUNS, id), seed);
  }

  /** A path inside the run folder (its parent folders created). */
  file(rel: string): string {
    const p = path.join(this.dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    return p;
  }

  /** Record how long a named step took, in seconds. */
  time(name: string, seconds: number): void {
    this.record.timings[name] = Math.round(seconds * 1000) / 1000;
    this.save();
  }

  writeJson(rel: string, data: unknown): string {
    const p = this.file(rel);
    fs.writeFileSync(p, JSON.stringify(data, null, 2) + "\n");
    return p;
  }

  save(): void {
    fs.writeFileSync(path.join(this.dir, "run.json"), JSON.stringify(this.record, null, 2) + "\n");
  }
}
