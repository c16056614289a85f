// Snapshots of paired state: pairing the node hosts costs most of a lab's bring-up (measured
// 34 s ready with pairing against 16 s bare for 2 nodes; 43 s of 93 s with 8), and every lab of
// the same OpenClaw image and topology shape pairs the same devices the same way. So the first
// lab of a shape pairs from scratch and keeps what pairing left in the gateway's and each node
// host's state (their SQLite state database, consistently copied while they run); later labs of
// that shape put it into their state volumes before the containers start, and the nodes connect
// as the already-paired devices they are. The key is a hash of everything that shapes that state
// (image id, the configs the lab writes, node aliases, pairing mode, the lab operator's
// identity, this format's version): a snapshot of another version or shape is never found.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type Dockerode from "dockerode";
import { CACHE } from "../core/paths.ts";
import { gatewayConfig } from "../members/gateway.ts";
import { nodeConfig } from "../members/node-host.ts";
import { nodeAliases, type TopologySpec } from "../definitions/spec.ts";
import { environment } from "../core/settings.ts";

/** Bumped whenever what a snapshot holds or how it is restored changes: older snapshots stop matching. */
export const SNAPSHOT_FORMAT = 1;
/** Where snapshots live: one folder per key (gateway.tar, node-<alias>.tar, meta.json). */
export const SNAPSHOTS = path.join(CACHE, "snapshots");
/** The state volume's mount point in the gateway and node host containers (docker/openclaw). */
export const STATE_HOME = "/home/lab";
/** Where the capture is staged inside a member's container (outside its state volume). */
const STAGING = "/tmp/fleetlab-snapshot";

/** "use": restore a snapshot when one exists, take one after pairing when none does. "fresh": pair from scratch, touch no snapshot. */
export type SnapshotMode = "use" | "fresh";

/** Which way a lab got its paired state, as run.json records it. */
export interface SnapshotRecord {
  /** restored: from a snapshot; taken: paired from scratch, then kept; fresh: paired from scratch only. */
  path: "restored" | "taken" | "fresh";
  key: string;
  /** Restoring (archives into the volumes) or taking (capture and write), in seconds; 0 for fresh. */
  seconds: number;
  /** Why it paired from scratch (asked to, or a restore that did not hold), or why a take failed. */
  reason?: string;
}

/** The mode a lab comes up in: FLEETLAB_SNAPSHOT=0 forces "fresh" everywhere; otherwise as asked (default "use"). */
export function snapshotMode(asked: SnapshotMode | undefined, env: NodeJS.ProcessEnv = environment()): { mode: SnapshotMode; reason?: string } {
  const v = (env.FLEETLAB_SNAPSHOT ?? "").trim().toLowerCase();
  if (v === "0" || v === "off" || v === "false" || v === "fresh") return { mode: "fresh", reason: `FLEETLAB_SNAPSHOT=${env.FLEETLAB_SNAPSHOT}` };
  if (asked === "fresh") return { mode: "fresh", reason: "asked to pair from scratch" };
  return { mode: "use" };
}

/** What shapes the paired state of a lab, besides the image: the key is a hash of this. */
export function snapshotShape(spec: TopologySpec, operator: { deviceId: string; publicKeyPem: string }): Record<string, unknown> {
  const aliases = nodeAliases(spec);
  return {
    format: SNAPSHOT_FORMAT,
    // The subnet is a placeholder, as in labConfigs: it differs from lab to lab and pairing does not depend on it.
    gateway: gatewayConfig(spec, "10.0.0.0/24"),
    nodes: Object.fromEntries(aliases.map((a) => [a, nodeConfig(spec, a)])),
    aliases,
    gatewayAlias: spec.gateway.alias,
    devicePairing: spec.nodes.devicePairing,
    // Nodes reach "their gateway" by the tap's name when taps are on.
    tap: spec.tap.enabled,
    operator: { deviceId: operator.deviceId, publicKeyPem: operator.publicKeyPem },
    // A fleet paired at bring-up is in the gateway's state (its keys are kept in the cache); one paired by a scenario is not.
    ...(spec.scripted.paired && spec.scripted.count ? { scripted: { count: spec.scripted.count, prefix: spec.scripted.prefix } } : {}),
  };
}

/** sha256 of the image id and the shape, over a canonical JSON (sorted keys). */
export function snapshotKey(imageId: string, shape: Record<string, unknown>): string {
  return crypto.createHash("sha256").update(canonicalJson({ imageId, shape })).digest("hex");
}

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

const MetaSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  key: z.string().regex(/^[a-f0-9]{64}$/),
  openclawVersion: z.string(),
  imageId: z.string(),
  shape: z.record(z.string(), z.unknown()),
  takenAt: z.string(),
  fromRun: z.string(),
  fromLab: z.string(),
  /** One archive per member alias: file name in this folder, its sha256 and size, and what its state database held. */
  archives: z.record(z.string(), z.object({ file: z.string(), sha256: z.string(), bytes: z.number().int().positive(), tables: z.record(z.string(), z.number()).optional() })),
});
export type SnapshotMeta = z.infer<typeof MetaSchema>;

export interface Snapshot {
  key: string;
  dir: string;
  meta: SnapshotMeta;
  /** The archive of a member (a tar of `.openclaw/...`, extracted into STATE_HOME). */
  archive(alias: string): Buffer;
}

/** The snapshot folders on disk: found only when complete and intact; written atomically. */
export class SnapshotStore {
  readonly root: string;
  constructor(root: string = SNAPSHOTS) {
    this.root = root;
  }

  /**
   * The snapshot for this key when it holds every member asked for, intact (sizes and sha256 as
   * meta.json says). A folder that is not (partial, corrupt, another format) is removed, so the
   * lab pairs from scratch and takes a new one; `why` hears what was wrong.
   */
  find(key: string, members: string[], why: (msg: string) => void = () => {}): Snapshot | undefined {
    const dir = path.join(this.root, key);
    if (!fs.existsSync(dir)) return undefined;
    try {
      const meta = MetaSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8")));
      if (meta.key !== key) throw new Error(`meta.json names key ${meta.key.slice(0, 8)}`);
      const data = new Map<string, Buffer>();
      for (const m of members) {
        const a = meta.archives[m];
        if (!a) throw new Error(`no archive of ${m}`);
        const buf = fs.readFileSync(path.join(dir, a.file));
        if (buf.length !== a.bytes || sha256(buf) !== a.sha256) throw new Error(`${a.file} does not match meta.json (${buf.length} bytes)`);
        data.set(m, buf);
      }
      return { key, dir, meta, archive: (alias) => data.get(alias) ?? fail(`snapshot ${key.slice(0, 8)} has no archive of ${alias}`) };
    } catch (err) {
      why(`snapshot ${key.slice(0, 8)} is unusable (${(err as Error).message}): removed, pairing from scratch`);
      fs.rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
  }

  /**
   * Write a snapshot: into a temporary folder beside it, then one rename. When another lab wrote
   * the same key meanwhile (two lanes), the first one stays. Returns whether this one was kept.
   */
  write(meta: Omit<SnapshotMeta, "archives" | "format">, archives: Map<string, { data: Buffer; tables?: Record<string, number> }>): boolean {
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    const dir = path.join(this.root, meta.key);
    const tmp = path.join(this.root, `.tmp-${meta.key.slice(0, 8)}-${process.pid}-${crypto.randomBytes(4).toString("hex")}`);
    // The archives hold the devices' keys and tokens of a paired state: only this user reads them.
    fs.mkdirSync(tmp, { mode: 0o700 });
    try {
      const index: SnapshotMeta["archives"] = {};
      for (const [alias, a] of archives) {
        const file = `${alias === "gateway" ? "gateway" : `node-${alias}`}.tar`;
        fs.writeFileSync(path.join(tmp, file), a.data, { mode: 0o600 });
        index[alias] = { file, sha256: sha256(a.data), bytes: a.data.length, tables: a.tables };
      }
      const full: SnapshotMeta = MetaSchema.parse({ format: SNAPSHOT_FORMAT, ...meta, archives: index });
      fs.writeFileSync(path.join(tmp, "meta.json"), `${JSON.stringify(full, null, 2)}\n`);
      if (fs.existsSync(dir)) return false;
      fs.renameSync(tmp, dir);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOTEMPTY" || (err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  /** Remove a snapshot (a restore from it did not hold). */
  remove(key: string): void {
    fs.rmSync(path.join(this.root, key), { recursive: true, force: true });
  }
}

/**
 * Run inside a gateway or node host container (as its user, with the image's Node): copy the
 * state database consistently while OpenClaw runs (VACUUM INTO reads one committed snapshot; the
 * -wal/-shm files are not needed), drop its state leases (a gateway owner lease left behind by a
 * gateway that was not stopped kept a new one on the same state waiting up to 300 s: FIELD-NOTES;
 * the copy is taken from a running gateway), keep the config
 * journal's fingerprint key beside it, and print the row count of every table.
 * Left out on purpose: openclaw.json (the lab writes it at every start), tmp/ (locks), cache/
 * (worker bundles, rebuilt), media/, ~/.cache, logs.
 */
export function captureScript(home = STATE_HOME, out = STAGING): string {
  return `
const fs = require("node:fs");
const { DatabaseSync } = require("node:sqlite");
const home = ${JSON.stringify(home)}, out = ${JSON.stringify(out)};
fs.rmSync(out, { recursive: true, force: true });
// Modes as OpenClaw makes them (the archive's modes are what the restored volume gets).
fs.mkdirSync(out + "/.openclaw", { recursive: true, mode: 0o755 });
fs.mkdirSync(out + "/.openclaw/state", { mode: 0o700 });
const src = new DatabaseSync(home + "/.openclaw/state/openclaw.sqlite", { readOnly: true });
src.exec("VACUUM INTO '" + out + "/.openclaw/state/openclaw.sqlite'");
src.close();
const db = new DatabaseSync(out + "/.openclaw/state/openclaw.sqlite");
const tables = {};
for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()) {
  if (name === "state_leases") db.exec("DELETE FROM state_leases");
  tables[name] = Number(db.prepare('SELECT count(*) AS n FROM "' + name.replace(/"/g, '""') + '"').get().n);
}
db.close();
fs.chmodSync(out + "/.openclaw/state/openclaw.sqlite", 0o600);
for (const f of ["config-journal-fingerprint.key"]) {
  if (fs.existsSync(home + "/.openclaw/" + f)) fs.copyFileSync(home + "/.openclaw/" + f, out + "/.openclaw/" + f);
}
if (fs.existsSync(home + "/.openclaw/node-host")) fs.mkdirSync(out + "/.openclaw/node-host", { mode: 0o700 });
process.stdout.write(JSON.stringify({ tables }));
`;
}

/** Run a command in a member's container (Lab.exec). */
export type ExecIn = (cmd: string[]) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

/** What capturing a member's state produced: the archive (tar of `.openclaw/`) and its tables' row counts. */
export async function captureState(exec: ExecIn, container: Dockerode.Container): Promise<{ data: Buffer; tables: Record<string, number> }> {
  const r = await exec(["node", "--no-warnings", "-e", captureScript()]);
  if (r.exitCode !== 0) throw new Error(`copying the state database exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(-500)}`);
  const tables = z.object({ tables: z.record(z.string(), z.number()) }).parse(JSON.parse(r.stdout)).tables;
  const stream = await container.getArchive({ path: `${STAGING}/.openclaw` });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  await exec(["rm", "-rf", STAGING]).catch(() => {});
  return { data: Buffer.concat(chunks), tables };
}

function sha256(b: Buffer): string {
  return crypto.createHash("sha256").update(b).digest("hex");
}

function fail(msg: string): never {
  throw new Error(msg);
}
