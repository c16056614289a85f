import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { parseTopology } from "../definitions/spec.ts";
import { SnapshotStore, canonicalJson, captureScript, snapshotKey, snapshotMode, snapshotShape } from "./snapshot.ts";

const operator = { deviceId: "a".repeat(64), publicKeyPem: "-----BEGIN PUBLIC KEY-----\nX\n-----END PUBLIC KEY-----\n" };
const key = (input: unknown = {}, imageId = "sha256:one", op = operator) => snapshotKey(imageId, snapshotShape(parseTopology(input), op));

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-snapshot-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("snapshot key", () => {
  it("is the same for the same image and shape, whatever the key order", () => {
    expect(key()).toBe(key());
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe(canonicalJson({ a: [{ c: 3, d: 2 }], b: 1 }));
  });

  it("changes with the image (another version is never used), the nodes, the pairing mode and the operator", () => {
    const base = key();
    const others = [
      key({}, "sha256:two"),
      key({ nodes: { count: 3 } }),
      key({ nodes: { prefix: "worker" } }),
      key({ nodes: { devicePairing: "subnet" } }),
      key({ nodes: { capacity: 1 } }),
      key({ tap: { enabled: false } }),
      key({ gateway: { token: "another-token-of-16-chars" } }),
      key({}, "sha256:one", { ...operator, deviceId: "b".repeat(64) }),
    ];
    for (const k of others) expect(k).not.toBe(base);
    expect(new Set(others).size).toBe(others.length);
  });

  it("does not depend on the lab's subnet (it changes from lab to lab)", () => {
    expect(JSON.stringify(snapshotShape(parseTopology({ nodes: { devicePairing: "subnet" } }), operator))).toContain("10.0.0.0/24");
  });
});

describe("snapshot mode", () => {
  it("uses snapshots by default; FLEETLAB_SNAPSHOT=0 or asking for fresh pairs from scratch", () => {
    expect(snapshotMode(undefined, {}).mode).toBe("use");
    expect(snapshotMode("use", {}).mode).toBe("use");
    expect(snapshotMode("fresh", {}).mode).toBe("fresh");
    expect(snapshotMode("use", { FLEETLAB_SNAPSHOT: "0" })).toEqual({ mode: "fresh", reason: "FLEETLAB_SNAPSHOT=0" });
    expect(snapshotMode(undefined, { FLEETLAB_SNAPSHOT: "1" }).mode).toBe("use");
  });
});

describe("snapshot store", () => {
  const meta = (k: string) => ({ key: k, openclawVersion: "2026.9.6", imageId: "sha256:one", shape: { x: 1 }, takenAt: "2026-11-30T00:00:00.000Z", fromRun: "run", fromLab: "run-1" });
  const archives = () =>
    new Map([
      ["gateway", { data: Buffer.from("gateway tar"), tables: { devices: 3 } }],
      ["node-1", { data: Buffer.from("node tar") }],
    ]);

  it("finds what it wrote, with every member's archive", () => {
    const store = new SnapshotStore(tmp());
    const k = key();
    expect(store.find(k, ["gateway", "node-1"])).toBeUndefined();
    expect(store.write(meta(k), archives())).toBe(true);
    const s = store.find(k, ["gateway", "node-1"]);
    expect(s?.archive("node-1").toString()).toBe("node tar");
    expect(s?.meta.archives.gateway?.tables).toEqual({ devices: 3 });
    expect(fs.readdirSync(s!.dir).sort()).toEqual(["gateway.tar", "meta.json", "node-node-1.tar"]);
    expect(fs.readdirSync(store.root)).toEqual([k]); // no temporary folder left
    // Device keys and tokens of a paired state: this user's only.
    expect(fs.statSync(path.join(s!.dir, "gateway.tar")).mode & 0o777).toBe(0o600);
    expect(fs.statSync(s!.dir).mode & 0o777).toBe(0o700);
  });

  it("keeps the first of two labs writing the same key", () => {
    const store = new SnapshotStore(tmp());
    const k = key();
    expect(store.write(meta(k), archives())).toBe(true);
    expect(store.write(meta(k), new Map([["gateway", { data: Buffer.from("later") }]]))).toBe(false);
    expect(store.find(k, ["gateway"])?.archive("gateway").toString()).toBe("gateway tar");
  });

  it("ignores and removes a partial or corrupt snapshot", () => {
    const store = new SnapshotStore(tmp());
    const k = key();
    store.write(meta(k), archives());
    fs.appendFileSync(path.join(store.root, k, "node-node-1.tar"), "x");
    const heard: string[] = [];
    expect(store.find(k, ["gateway", "node-1"], (m) => heard.push(m))).toBeUndefined();
    expect(heard.join()).toMatch(/unusable .*node-node-1.tar does not match/);
    expect(fs.existsSync(path.join(store.root, k))).toBe(false);

    store.write(meta(k), archives());
    expect(store.find(k, ["gateway", "node-1", "node-2"])).toBeUndefined(); // a member it does not hold
    fs.mkdirSync(path.join(store.root, k));
    expect(store.find(k, ["gateway"])).toBeUndefined(); // no meta.json (a cut write)
    expect(fs.existsSync(path.join(store.root, k))).toBe(false);
  });
});

describe("capture script", () => {
  it("copies the state database consistently (WAL included), drops state leases, keeps the fingerprint key and nothing per-run", () => {
    const home = tmp();
    const out = path.join(tmp(), "staging");
    fs.mkdirSync(path.join(home, ".openclaw/state"), { recursive: true });
    fs.mkdirSync(path.join(home, ".openclaw/tmp"), { recursive: true });
    fs.mkdirSync(path.join(home, ".openclaw/node-host"), { recursive: true });
    fs.writeFileSync(path.join(home, ".openclaw/config-journal-fingerprint.key"), "k".repeat(32));
    fs.writeFileSync(path.join(home, ".openclaw/tmp/gateway.lock"), "lock");
    fs.writeFileSync(path.join(home, ".openclaw/openclaw.json"), "{}");
    // Held open in WAL mode with rows not yet checkpointed, as a running gateway holds it.
    const db = new DatabaseSync(path.join(home, ".openclaw/state/openclaw.sqlite"));
    db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE devices(id TEXT); CREATE TABLE state_leases(owner TEXT)");
    db.exec("INSERT INTO devices VALUES ('node-1'), ('node-2'), ('operator'); INSERT INTO state_leases VALUES ('pid 7')");
    try {
      const printed = execFileSync(process.execPath, ["--no-warnings", "-e", captureScript(home, out)], { encoding: "utf8" });
      expect(JSON.parse(printed)).toEqual({ tables: { devices: 3, state_leases: 0 } });
    } finally {
      db.close();
    }
    const files = fs.readdirSync(path.join(out, ".openclaw"), { recursive: true }).map(String).sort();
    expect(files).toEqual(["config-journal-fingerprint.key", "node-host", "state", "state/openclaw.sqlite"]);
    const copy = new DatabaseSync(path.join(out, ".openclaw/state/openclaw.sqlite"), { readOnly: true });
    expect(copy.prepare("SELECT count(*) AS n FROM devices").get()).toEqual({ n: 3 });
    copy.close();
  });
});
