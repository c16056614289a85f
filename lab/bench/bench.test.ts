// The bench's pure parts: the sweep's env, the tables, the plot page, the suite table, the
// snapshot rows, and restoring a snapshot's archives into bare processes' homes.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { median, ratio, scaleFromEnv, secs, snapshotRows, table, type SnapshotTrials } from "./main.ts";
import { BareTopology } from "./bare.ts";
import { barePathMap, rewritePaths, rewriteStateDb, tarEntries, unpackInto } from "./restore.ts";
import { gatewayConfig } from "../members/gateway.ts";
import { parseTopology } from "../definitions/spec.ts";
import { niceScale, scalePlotHtml } from "./plot.ts";
import { suiteScenarios, suiteTable, SUITE_HEAD, type SuiteBench } from "./suite.ts";
import { stat, wireTimingRows } from "./wire-timing.ts";
import type { Scenario } from "../scenario.ts";

describe("bench figures", () => {
  it("BENCH_SCALE: 1 2 4 8 by default, a list to shorten, 0 or empty for none", () => {
    expect(scaleFromEnv(undefined)).toEqual([1, 2, 4, 8]);
    expect(scaleFromEnv("2, 8")).toEqual([2, 8]);
    expect(scaleFromEnv("0")).toEqual([]);
    expect(scaleFromEnv("")).toEqual([]);
    expect(scaleFromEnv("9 3")).toEqual([3]); // a topology has at most 8 node hosts
  });

  it("medians, seconds and ratios; nothing measured shows as '-'", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1])).toBe(1); // the lower middle, as before
    expect(secs(0.1234)).toBe("123 ms");
    expect(secs(12.345)).toBe("12.35 s");
    expect(secs(median([]))).toBe("-");
    expect(ratio(11, 10)).toBe("1.10x");
    expect(ratio(NaN, 10)).toBe("-");
  });

  it("tables pad every column to its widest cell", () => {
    const t = table(["a", "bb"], [["xxx", "y"]]).split("\n");
    expect(t).toEqual(["a    bb", "---  --", "xxx  y"]);
  });

  it("wire rows: the tap's trigger -> action against the 20 ms target, end to end beside it", () => {
    const rows = wireTimingRows({ passMs: stat([0.5, 0.4, 0.6]), rows: [{ fault: "wire.close 1006", trials: 3, triggerToActionMs: stat([0.2, 0.5, 1]), endToEndMs: stat([1, 2, 3]), endToEndWhat: "client sees the end" }] });
    expect(rows[0]).toEqual(["wire.close 1006: trigger frame -> action", "0.50 ms (worst 1.00 ms)", "0.50 ms plain frame through the tap", "0.050 of target (worst)", "<= 20 ms"]);
    expect(rows[1]![0]).toBe("  client sees the end");
  });
});

describe("the scaling plot", () => {
  it("nice axis tops and steps", () => {
    expect(niceScale(93)).toEqual({ top: 100, step: 20 });
    expect(niceScale(0.7)).toEqual({ top: 0.8, step: 0.2 });
    expect(niceScale(0)).toEqual({ top: 1, step: 0.2 });
  });

  it("is one page with inline SVG only: a point per NODES in each panel, the baseline and the target line, no external assets", () => {
    const html = scalePlotHtml({
      title: "t <x>",
      bareGatewayReady: 12,
      targetRatio: 1.3,
      bareNodeMiB: 500,
      points: [
        { nodes: 1, freshReady: 20, snapshotReady: 14, memMedianMiB: 540, memMaxMiB: 560 },
        { nodes: 8, freshReady: 90, memMedianMiB: 545, memMaxMiB: 600 },
      ],
    });
    expect(html).toContain("t &lt;x&gt;");
    expect(html.match(/<circle /g)).toHaveLength(2 + 1 + 2 + 2); // fresh, snapshot, memory median, largest
    expect(html).toContain("target 1.3x baseline");
    expect(html).toContain("bare gateway alone (baseline) 12.0 s");
    expect(html).not.toMatch(/\b(src|href)=/);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});

describe("the suite part", () => {
  const sc = (name: string, topology: "shared" | "own" = "shared") => ({ name, topology, proves: "", timeoutMs: 1, run: async () => {} }) as unknown as Scenario;
  it("BENCH_SUITE_SCENARIOS picks scenarios by name (unknown names fail, naming the known ones); none: all, in run order", () => {
    const all = [sc("b", "own"), sc("a"), sc("smoke")];
    expect(suiteScenarios(all, "smoke").map((s) => s.name)).toEqual(["smoke"]);
    expect(suiteScenarios(all, undefined).map((s) => s.name)).toEqual(["a", "smoke", "b"]);
    expect(() => suiteScenarios(all, "nope")).toThrow(/unknown scenario: nope. Known scenarios: b, a, smoke/);
  });

  it("the per-scenario table: slowest first, where each one's time went, their sum, then each lab's bring-up", () => {
    const b: SuiteBench = {
      run: "r",
      dir: "d",
      lanes: 2,
      wallS: 100,
      scenariosS: 90,
      results: [
        { name: "smoke", verdict: "pass", seconds: 3.21 },
        { name: "capacity", verdict: "known-finding", seconds: 40, labS: 12, waits: { bodyS: 27, windowS: 20, observedS: 4, requestS: 1.5, pauseS: 1 } },
      ],
      labs: [{ name: "shared-lab", nodes: 2, ready: 15.5, up: 17, snapshot: "restored" }],
    };
    expect(suiteTable(b)).toEqual([
      ["capacity", "40.0", "known-finding", "12.0", "20.0", "4.0", "1.5", "1.0", "0.5"],
      ["smoke", "3.2", "pass", "-", "-", "-", "-", "-", "-"],
      ["(sum over the suite)", "43.2", "", "12.0", "20.0", "4.0", "1.5", "1.0", "0.5"],
      ["  lab shared-lab (2 node hosts) ready", "15.5", "restored", "", "", "", "", "", ""],
    ]);
    expect(SUITE_HEAD).toHaveLength(9);
  });
});

describe("a bench part that fails", () => {
  it("is a row saying why in one line, and the parts after it still run", async () => {
    const { benchPart } = await import("./main.ts");
    const rows: string[][] = [];
    const failed: string[] = [];
    const part = benchPart((...r) => void rows.push(r), failed);
    const ran: string[] = [];
    await part("NODES=8", async () => {
      throw new Error("timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)\n    at stack line");
    });
    await part("faults", async () => void ran.push("faults"));
    expect(rows).toEqual([["NODES=8", "FAILED: timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)", "-", "-", "-"]]);
    expect(failed).toEqual(["NODES=8: timed out after 90 s waiting for gateway /readyz (ECONNREFUSED)"]);
    expect(ran).toEqual(["faults"]);
  });
});

describe("the snapshot rows", () => {
  const t: SnapshotTrials = { lab: [15, 14, 16], bare: [13, 12.5, 14], labGw: [14, 13, 15], bareGw: [12, 11, 13], notes: [] };
  it("the restored lab against bare processes restored from the same snapshot, each baseline named beside its ratio, medians with their trial counts", () => {
    expect(snapshotRows("default topology", t, 40, "<= 1.1x")).toEqual([
      ["ready, default topology, snapshot restored (median of 3)", "15.00 s", "13.00 s bare restored (median of 3)", "1.15x", "<= 1.1x"],
      ["  gateway /readyz, default topology, snapshot restored", "14.00 s", "12.00 s bare restored", "1.17x", "reported"],
      ["  snapshot path vs pairing path, default topology", "15.00 s", "40.00 s lab pairing from scratch, same run", "0.38x", "< 1x"],
    ]);
  });

  it("a snapshot taken first, trials not counted and an unmeasured side say so", () => {
    const rows = snapshotRows("NODES=2", { ...t, bare: [], bareGw: [], takenReady: 42, notes: ["bare trial 1: the restore did not hold: x"] }, 40, "reported");
    expect(rows[0]).toEqual(["ready, NODES=2, snapshot restored (median of 3)", "15.00 s", "- (bare restored not measured)", "-", "reported"]);
    expect(rows.at(-2)).toEqual(["  pairing + taking the snapshot, NODES=2", "42.00 s", "40.00 s lab pairing from scratch, same run", "1.05x", "reported"]);
    expect(rows.at(-1)).toEqual(["  not counted, NODES=2", "bare trial 1: the restore did not hold: x", "-", "-", "-"]);
    expect(snapshotRows("x", { lab: [], bare: [], labGw: [], bareGw: [], notes: ["no snapshot: y"] }, 40, "t")[0]).toEqual(["ready, x, snapshot restored", "not measured", "- (bare restored not measured)", "-", "t"]);
  });
});

/** A ustar archive as the engine's archive endpoint writes one (type "x": a PAX header). */
function tarOf(entries: { name: string; type?: string; mode?: number; data?: Buffer | string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? "");
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100);
    h.write(`${(e.mode ?? 0o644).toString(8).padStart(7, "0")}\0`, 100);
    h.write("0023421\0", 108);
    h.write("0023421\0", 116);
    h.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
    h.write("00000000000\0", 136);
    h.write("        ", 148);
    h.write(e.type ?? "0", 156);
    h.write("ustar\u000000", 257);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  return Buffer.concat([...blocks, Buffer.alloc(1024)]);
}

function paxPath(p: string): string {
  const rest = ` path=${p}\n`;
  let n = rest.length + 1;
  while (`${n}${rest}`.length !== n) n = `${n}${rest}`.length;
  return `${n}${rest}`;
}

describe("restoring a snapshot into bare processes' homes", () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-test-"));

  it("reads folders and files with their modes (a PAX path too), and writes them under the home", () => {
    const long = `.openclaw/${"n".repeat(120)}.key`;
    const tar = tarOf([
      { name: ".openclaw/", type: "5", mode: 0o755 },
      { name: ".openclaw/state/", type: "5", mode: 0o700 },
      { name: ".openclaw/state/openclaw.sqlite", mode: 0o600, data: "db" },
      { name: "PaxHeaders/x", type: "x", data: paxPath(long) },
      { name: "cut", mode: 0o600, data: "key" },
    ]);
    const entries = tarEntries(tar);
    expect(entries.map((e) => [e.name, e.type, e.mode.toString(8)])).toEqual([
      [".openclaw", "dir", "755"],
      [".openclaw/state", "dir", "700"],
      [".openclaw/state/openclaw.sqlite", "file", "600"],
      [long, "file", "600"],
    ]);
    const home = tmp();
    try {
      unpackInto(entries, home);
      expect(fs.readFileSync(path.join(home, ".openclaw/state/openclaw.sqlite"), "utf8")).toBe("db");
      expect(fs.statSync(path.join(home, ".openclaw/state")).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(home, ".openclaw/state/openclaw.sqlite")).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(home, long), "utf8")).toBe("key");
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it("refuses links, names outside the home and a damaged header", () => {
    expect(() => tarEntries(tarOf([{ name: ".openclaw/l", type: "2" }]))).toThrow(/type '2'/);
    expect(() => unpackInto(tarEntries(tarOf([{ name: "../../etc/x", data: "x" }])), "/nonexistent")).toThrow(/outside the home/);
    const bad = tarOf([{ name: "a", data: "x" }]);
    bad[0] = 0x62;
    expect(() => tarEntries(bad)).toThrow(/checksum/);
  });

  it("container paths become the bare member's in one pass (a home under /home/lab/ is not rewritten again)", () => {
    const map = barePathMap("/home/lab/x/gateway", "/c/openclaw-2026.9.6", "/repo/fixtures");
    expect(rewritePaths('{"a":"/opt/openclaw/node_modules/openclaw/dist","b":"/etc/fleetlab/plugins/gate","c":"/home/lab/.openclaw/openclaw.json","d":"/etc/fleetlab/policy/p.json"}', map)).toBe(
      '{"a":"/c/openclaw-2026.9.6/node_modules/openclaw/dist","b":"/repo/fixtures/plugins/gate","c":"/home/lab/x/gateway/.openclaw/openclaw.json","d":"/etc/fleetlab/policy/p.json"}',
    );
    const cfg = JSON.parse(rewritePaths(JSON.stringify(gatewayConfig(parseTopology({}))), barePathMap("/b/gateway", "/c/pkg", "/repo/fixtures"))) as { plugins: { load: { paths: string[] } }; agents: { defaults: { workspace: string } } };
    expect(cfg.plugins.load.paths).toEqual(["/repo/fixtures/plugins/fleetlab-approval-gate"]);
    expect(cfg.agents.defaults.workspace).toBe("/b/gateway/workspace");
  });

  it("rewrites every text value of the state database that names a container path, and nothing else", () => {
    const dir = tmp();
    try {
      const file = path.join(dir, "s.sqlite");
      const db = new DatabaseSync(file);
      db.exec("CREATE TABLE config_health_entries (config_path TEXT PRIMARY KEY, n INTEGER)");
      db.exec("CREATE TABLE config_machine_state (state_key TEXT PRIMARY KEY, value_json TEXT, raw BLOB) WITHOUT ROWID");
      db.prepare("INSERT INTO config_health_entries VALUES (?, 1)").run("/home/lab/.openclaw/openclaw.json");
      db.prepare("INSERT INTO config_machine_state VALUES (?, ?, ?)").run("plugins.installedIndex", JSON.stringify({ root: "/opt/openclaw/node_modules/openclaw", ws: "/home/lab/workspace" }), Buffer.from("/home/lab/x"));
      db.prepare("INSERT INTO config_machine_state VALUES (?, ?, ?)").run("other", '"/home/labx"', null);
      db.close();
      expect(rewriteStateDb(file, barePathMap("/b/gateway", "/c/pkg"))).toEqual({ config_health_entries: 1, config_machine_state: 1 });
      const after = new DatabaseSync(file, { readOnly: true });
      expect(after.prepare("SELECT config_path FROM config_health_entries").get()).toEqual({ config_path: "/b/gateway/.openclaw/openclaw.json" });
      const rows = after.prepare("SELECT state_key, value_json, raw FROM config_machine_state ORDER BY state_key").all() as { state_key: string; value_json: string; raw: Uint8Array | null }[];
      after.close();
      expect(rows[0]!.value_json).toBe('"/home/labx"');
      expect(JSON.parse(rows[1]!.value_json)).toEqual({ root: "/c/pkg/node_modules/openclaw", ws: "/b/gateway/workspace" });
      expect(Buffer.from(rows[1]!.raw!).toString()).toBe("/home/lab/x"); // a blob is not text
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("BareTopology.restore puts each member's archive into its home, paths rewritten, before anything starts", async () => {
    const spec = parseTopology({ nodes: { count: 1 } });
    const bare = new BareTopology(spec, "/c/pkg");
    const src = tmp();
    try {
      const archives = new Map<string, Buffer>();
      for (const alias of ["gateway", "node-1"]) {
        const file = path.join(src, `${alias}.sqlite`);
        const db = new DatabaseSync(file);
        db.exec("CREATE TABLE config_health_entries (config_path TEXT PRIMARY KEY)");
        db.prepare("INSERT INTO config_health_entries VALUES (?)").run("/home/lab/.openclaw/openclaw.json");
        db.close();
        archives.set(alias, tarOf([{ name: ".openclaw/", type: "5", mode: 0o755 }, { name: ".openclaw/state/", type: "5", mode: 0o700 }, { name: ".openclaw/state/openclaw.sqlite", mode: 0o600, data: fs.readFileSync(file) }]));
      }
      expect(bare.restore((a) => archives.get(a)!)).toEqual({ gateway: { config_health_entries: 1 }, "node-1": { config_health_entries: 1 } });
      const db = new DatabaseSync(path.join(bare.home("node-1"), ".openclaw/state/openclaw.sqlite"), { readOnly: true });
      expect(db.prepare("SELECT config_path FROM config_health_entries").get()).toEqual({ config_path: `${bare.home("node-1")}/.openclaw/openclaw.json` });
      db.close();
    } finally {
      fs.rmSync(src, { recursive: true, force: true });
      await bare.down();
    }
    expect(fs.existsSync(bare.dir)).toBe(false);
  });
});
