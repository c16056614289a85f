// The report's data while it is built: the run folder it reads, its lanes (created on first use,
// so their order is the order the readers meet them), items, notices, labs and scenarios, and
// the redactor every embedded value goes through. Each evidence source has its reader beside
// this file; lab/evidence/timeline.ts runs them in order over one board.
import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { readJsonl, type Line } from "../records/index.ts";
import { Redactor } from "../redact.ts";
import type { RunRecord } from "../run.ts";
import type { Item, LabView, Lane, LaneGroup, Link, Notice, ScenarioView } from "./types.ts";

export class Board {
  readonly redact: Redactor;
  readonly lanes = new Map<string, Lane>();
  readonly laneIds = new Map<string, string>();
  /** Frames whose content may pass the content limit (measured when capping). */
  readonly large = new WeakSet<Item>();
  readonly items: Item[] = [];
  readonly notices: Notice[] = [];
  readonly labs: LabView[] = [];
  readonly scenarios: ScenarioView[] = [];
  framesTotal = 0;

  readonly dir: string;
  readonly record: RunRecord;
  public frameCap: number;
  readonly framesTotalCap: number;
  readonly contentLimit: number;
  constructor(
    dir: string,
    record: RunRecord,
    frameCap: number,
    framesTotalCap: number,
    contentLimit: number,
  ) {
    this.dir = dir;
    this.record = record;
    this.frameCap = frameCap;
    this.framesTotalCap = framesTotalCap;
    this.contentLimit = contentLimit;
    const tokens: string[] = [];
    for (const lab of Object.values(record.labs ?? {})) {
      const token = (lab.spec as { gateway?: { token?: unknown } } | undefined)?.gateway?.token;
      if (typeof token === "string") tokens.push(token);
    }
    const top = (record.topology as { gateway?: { token?: unknown } } | undefined)?.gateway?.token;
    if (typeof top === "string") tokens.push(top);
    this.redact = new Redactor(tokens);
  }

  // -------------------------------------------------------------------------------------
  // Files

  rel(p: string): string {
    return path.relative(this.dir, p).split(path.sep).join("/");
  }

  exists(rel: string): boolean {
    return fs.existsSync(path.join(this.dir, rel));
  }

  links(rels: string[]): Link[] {
    return rels.filter((r) => this.exists(r)).map((r) => ({ label: r, href: r }));
  }

  /** Every file under a folder of the run (relative paths), optionally leaving one subfolder out. */
  filesUnder(rel: string, skip?: string): Link[] {
    const root = path.join(this.dir, rel);
    if (!fs.existsSync(root)) return [];
    const out: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) {
          if (skip && this.rel(p) === skip) continue;
          walk(p);
        } else out.push(this.rel(p));
      }
    };
    walk(root);
    return out.map((r) => ({ label: r.slice(rel.length + 1), href: r }));
  }

  readJson(rel: string): unknown {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.dir, rel), "utf8"));
    } catch (err) {
      this.notices.push({ message: `${rel} could not be read: ${(err as Error).message}`, file: rel });
      return undefined;
    }
  }

  /** The records of a JSON lines file (lab/evidence/records), with their line numbers; lines that are not records are counted in a notice. */
  readJsonl<T>(rel: string, schema: z.ZodType<T>, lab?: string): Line<T>[] {
    const { records, bad } = readJsonl(path.join(this.dir, rel), schema);
    if (bad) this.notices.push({ lab, message: `${bad} line(s) of ${rel} are not readable records and are not shown`, file: rel });
    return records;
  }

  // -------------------------------------------------------------------------------------
  // Labs and scenarios

  labOf(evidence: string): LabView | undefined {
    return this.labs.find((l) => l.evidence === evidence);
  }

  /** The scenario whose window holds `t` (on this lab when given). */
  scenarioAt(t: number, lab?: string): ScenarioView | undefined {
    return this.scenarios.find((s) => s.t0 !== undefined && s.t1 !== undefined && t >= s.t0 && t <= s.t1 && (lab === undefined || s.lab === lab));
  }

  // -------------------------------------------------------------------------------------
  // Lanes and items

  /** The lane of (lab, group, name), created on first use; its id is short (it is on every item). */
  lane(lab: string, group: LaneGroup, name: string, label: string, source?: string): string {
    const k = `${lab}|${group}|${name}`;
    let id = this.laneIds.get(k);
    if (!id) {
      id = `l${this.laneIds.size}`;
      this.laneIds.set(k, id);
      this.lanes.set(id, { id, lab, group, label, source });
    }
    return id;
  }

  memberLane(lab: LabView, alias: string): string {
    return this.lane(lab.key, "member", alias, alias, lab.links.find((l) => l.href.endsWith(`/logs/${alias}.stdout.log`))?.href);
  }

  /** Member lanes first, in a stable order: gateway, nodes, taps, then the rest as run.json lists them. */
  orderMembers(lab: LabView): void {
    const rank = (m: { kind: string }) => ["gateway", "node", "tap", "model", "git", "mcp"].indexOf(m.kind) + 1 || 9;
    for (const m of [...lab.members].sort((a, b) => rank(a) - rank(b) || a.alias.localeCompare(b.alias, "en", { numeric: true }))) this.memberLane(lab, m.alias);
    this.lane(lab.key, "faults", "faults", "faults");
    this.lane(lab.key, "turns", "turns", "turns");
  }

  add(item: Item): void {
    this.items.push(item);
  }

  /** A frame item: redacted now, capped later (`size`: its content's length when known, to skip measuring small ones). */
  frame(item: Item, size?: number): void {
    this.framesTotal++;
    this.redact.value(item.detail);
    if (size === undefined || size > this.contentLimit / 2) this.large.add(item);
    this.items.push(item);
  }
}
