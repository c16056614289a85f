// Paired state for the bare baseline: the same snapshot archives a restored lab copies into its
// gateway's and node hosts' state volumes (lab/topology/snapshot.ts: a tar of `.openclaw/`,
// extracted into /home/lab), unpacked into the bare processes' homes instead.
//
// What the archives bake in, read from 2026.9.6 state databases, and what is done about it:
// - Paths of the container: the gateway's plugin index names the package under /opt/openclaw
//   and the approval plugin under /etc/fleetlab/plugins; config-health, cron and migration rows
//   name /home/lab/.openclaw/... . Rewritten here to the bare member's package, the repository's
//   plugin folder and its home (barePathMap), so a bare process finds state that points at its
//   own files, as the restored lab's gateway does. OpenClaw rebuilt the plugin index on start
//   either way (measured with and without the rewrite).
// - Hosts: the gateway's paired-device rows keep the address each device last connected from
//   (172.x on the lab network; the bare processes connect from 127.0.0.1), and a node's own
//   record names the host it was told to reach (tap-node-1:18789). Left as they are: bare nodes
//   started with `node run --host 127.0.0.1 --port <bare port>` were admitted as the paired
//   devices they are (2026.9.6), and the operator was known, not approved again.
// - Ports: the gateway's port is config, not state (the bare gateway listens on its own).
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { APPROVAL_PLUGIN_DIR } from "../members/gateway.ts";
import { FIXTURES } from "../core/paths.ts";
import { STATE_HOME } from "../topology/snapshot.ts";

/** Where the openclaw-pkg image puts the package (lab/images.ts), as a restored state names it. */
export const IMAGE_PACKAGE_DIR = "/opt/openclaw";

/** One entry of a state archive: only folders and regular files are expected. */
export interface TarEntry {
  name: string;
  type: "file" | "dir";
  mode: number;
  data: Buffer;
}

/**
 * The entries of a tar archive (ustar, as the engine's archive endpoint writes it; a PAX header's
 * `path` is honoured, other PAX records ignored). Links, devices and anything else are refused:
 * a state archive holds none, and extracting one would write outside the home.
 */
export function tarEntries(tar: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let paxPath: string | undefined;
  for (let off = 0; off + 512 <= tar.length; ) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break; // the end-of-archive blocks
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (sum !== octal(h, 148, 8)) throw new Error(`tar header at byte ${off}: checksum does not match`);
    const size = octal(h, 124, 12);
    const flag = h[156] === 0 ? "0" : String.fromCharCode(h[156]!);
    const data = tar.subarray(off + 512, off + 512 + size);
    if (data.length !== size) throw new Error(`tar entry at byte ${off}: cut short (${data.length} of ${size} bytes)`);
    off += 512 + Math.ceil(size / 512) * 512;
    if (flag === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1];
      continue;
    }
    if (flag === "g") continue;
    const prefix = field(h, 345, 155);
    const name = (paxPath ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100))).replace(/\/+$/, "");
    paxPath = undefined;
    if (flag !== "0" && flag !== "5") throw new Error(`${name}: a tar entry of type '${flag}' (a state archive holds only folders and files)`);
    out.push({ name, type: flag === "5" ? "dir" : "file", mode: octal(h, 100, 8) & 0o7777, data: Buffer.from(data) });
  }
  return out;
}

/**
 * Write the entries under `home` with their modes (owned by whoever runs the bench: the archive's
 * owner, the image's user, means nothing here). A name that is absolute or climbs out is refused.
 */
export function unpackInto(entries: TarEntry[], home: string): void {
  const dirs: [string, number][] = [];
  for (const e of entries) {
    const rel = path.posix.normalize(e.name);
    if (path.posix.isAbsolute(rel) || rel === ".." || rel.startsWith("../")) throw new Error(`${e.name}: outside the home it is unpacked into`);
    const dest = path.join(home, rel);
    if (e.type === "dir") {
      fs.mkdirSync(dest, { recursive: true, mode: 0o700 });
      dirs.push([dest, e.mode]);
    } else {
      fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
      fs.writeFileSync(dest, e.data, { mode: 0o600 });
      fs.chmodSync(dest, e.mode);
    }
  }
  // Folder modes last: a folder made read-only first would refuse its own files.
  for (const [d, mode] of dirs.reverse()) fs.chmodSync(d, mode);
}

/** Container path prefixes -> a bare member's (longest first; each ends with "/"). */
export function barePathMap(home: string, packageDir: string, fixtures: string = FIXTURES): [from: string, to: string][] {
  const pairs: [string, string][] = [
    [`${IMAGE_PACKAGE_DIR}/`, `${packageDir.replace(/\/+$/, "")}/`],
    [`${path.posix.dirname(APPROVAL_PLUGIN_DIR)}/`, `${path.join(fixtures, "plugins")}/`],
    [`${STATE_HOME}/`, `${home.replace(/\/+$/, "")}/`],
  ];
  return pairs.sort((a, b) => b[0].length - a[0].length);
}

/**
 * Every occurrence of a `from` prefix replaced by its `to`, in one pass: a replacement is never
 * rewritten again (a home that happens to lie under /home/lab/ stays as given).
 */
export function rewritePaths(text: string, map: [string, string][]): string {
  if (!map.length) return text;
  const to = new Map(map);
  const re = new RegExp(map.map(([from]) => from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  return text.replace(re, (m) => to.get(m)!);
}

/**
 * Rewrite the container paths in every text value of a state database (tables and columns read
 * from the database itself, so a version with other tables is covered); returns how many
 * distinct values changed per table. Virtual tables and SQLite's own are left alone.
 */
export function rewriteStateDb(file: string, map: [string, string][]): Record<string, number> {
  const db = new DatabaseSync(file);
  const changed: Record<string, number> = {};
  const q = (id: string) => `"${id.replace(/"/g, '""')}"`;
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name").all() as { name: string }[];
    db.exec("BEGIN");
    for (const { name } of tables) {
      const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[];
      for (const { name: col } of cols) {
        const any = map.map(() => `instr(${q(col)}, ?) > 0`).join(" OR ");
        const values = db.prepare(`SELECT DISTINCT ${q(col)} AS v FROM ${q(name)} WHERE typeof(${q(col)}) = 'text' AND (${any})`).all(...map.map(([from]) => from)) as { v: string }[];
        const update = db.prepare(`UPDATE ${q(name)} SET ${q(col)} = ? WHERE ${q(col)} = ?`);
        for (const { v } of values) update.run(rewritePaths(v, map), v);
        if (values.length) changed[name] = (changed[name] ?? 0) + values.length;
      }
    }
    db.exec("COMMIT");
  } finally {
    db.close();
  }
  return changed;
}

function field(h: Buffer, at: number, len: number): string {
  const s = h.subarray(at, at + len);
  const end = s.indexOf(0);
  return s.subarray(0, end < 0 ? len : end).toString("utf8");
}

function octal(h: Buffer, at: number, len: number): number {
  const s = field(h, at, len).trim();
  return s ? parseInt(s, 8) : 0;
}
