import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CGROUP, claimCpuShare, cpuShare, labRunnable, OwnLoad, resetCpuShare, SHARES_V1, WEIGHT_V2 } from "./cpu-share.ts";

const local = { driver: "cgroupfs", local: true };
let tmp: string;
function tree(): { root: string; proc: string } {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cgroup-"));
  const root = path.join(tmp, "cgroup");
  const proc = path.join(tmp, "proc");
  fs.mkdirSync(root);
  fs.mkdirSync(proc);
  return { root, proc };
}
function proc(procRoot: string, pid: string, comm: string, state = "S"): void {
  fs.mkdirSync(path.join(procRoot, pid), { recursive: true });
  fs.writeFileSync(path.join(procRoot, pid, "comm"), `${comm}\n`);
  // A name with a parenthesis and a space: the state is read after the last ")".
  fs.writeFileSync(path.join(procRoot, pid, "stat"), `${pid} (${comm} (x) y) ${state} 1 1 1 0 -1\n`);
}
afterEach(() => {
  resetCpuShare();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("claimCpuShare", () => {
  it("cgroup v1: weights /fleetlab with the largest cpu.shares, moves the lab's process into its leaf and the engine's dockerd and containerd beside it", () => {
    const { root, proc: p } = tree();
    fs.mkdirSync(path.join(root, "cpu"));
    fs.writeFileSync(path.join(root, "cpu", "cpu.shares"), "1024");
    proc(p, "10", "dockerd");
    proc(p, "11", "containerd");
    proc(p, "12", "bash");
    const s = claimCpuShare(local, { root, procRoot: p, uid: 0, pid: 4242, env: {} });
    expect(s).toMatchObject({ claimed: true, parent: `/${CGROUP}`, version: 1 });
    expect(fs.readFileSync(path.join(root, "cpu", CGROUP, "cpu.shares"), "utf8")).toBe(String(SHARES_V1));
    expect(fs.readFileSync(path.join(root, "cpu", CGROUP, "lab", "cgroup.procs"), "utf8")).toBe("4242");
    // Inside it, the lab's process and the engine before the containers.
    expect(fs.readFileSync(path.join(root, "cpu", CGROUP, "lab", "cpu.shares"), "utf8")).toBe(String(SHARES_V1));
    expect(fs.readFileSync(path.join(root, "cpu", CGROUP, "engine", "cpu.shares"), "utf8")).toBe(String(SHARES_V1));
    // The fake file keeps the last write; the real one takes each pid written to it.
    expect(fs.readFileSync(path.join(root, "cpu", CGROUP, "engine", "cgroup.procs"), "utf8")).toBe("11");
    expect(s.how).toContain("the engine's dockerd and containerd");
    expect(cpuShare()).toBe(s);
  });

  it("cgroup v2: enables the cpu controller below the root, weights /fleetlab with the largest cpu.weight, the lab's process in a leaf", () => {
    const { root, proc: p } = tree();
    fs.writeFileSync(path.join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    fs.writeFileSync(path.join(root, "cgroup.subtree_control"), "cpuset memory\n");
    const s = claimCpuShare(local, { root, procRoot: p, uid: 0, pid: 7, env: {} });
    expect(s).toMatchObject({ claimed: true, version: 2 });
    expect(fs.readFileSync(path.join(root, "cgroup.subtree_control"), "utf8")).toBe("+cpu");
    expect(fs.readFileSync(path.join(root, CGROUP, "cpu.weight"), "utf8")).toBe(String(WEIGHT_V2));
    expect(fs.readFileSync(path.join(root, CGROUP, "lab", "cgroup.procs"), "utf8")).toBe("7");
    expect(fs.readFileSync(path.join(root, CGROUP, "cgroup.subtree_control"), "utf8")).toBe("+cpu");
    expect(fs.readFileSync(path.join(root, CGROUP, "lab", "cpu.weight"), "utf8")).toBe(String(WEIGHT_V2));
  });

  it("is not claimed, saying why, when it must not or cannot be: FLEETLAB_CPU_SHARE=0, not root, a remote engine, a systemd driver, no cpu controller", () => {
    const { root, proc: p } = tree();
    fs.mkdirSync(path.join(root, "cpu"));
    fs.writeFileSync(path.join(root, "cpu", "cpu.shares"), "1024");
    const o = { root, procRoot: p, pid: 1, env: {} };
    expect(claimCpuShare(local, { ...o, uid: 0, env: { FLEETLAB_CPU_SHARE: "0" } })).toEqual({ claimed: false, how: "left alone (FLEETLAB_CPU_SHARE=0)" });
    expect(claimCpuShare(local, { ...o, uid: 0, env: { FLEETLAB_CPU_SHARE: "yes" } }).how).toContain("FLEETLAB_CPU_SHARE=yes is neither 0 nor 1");
    expect(claimCpuShare(local, { ...o, uid: 1000 }).how).toContain("uid 1000");
    expect(claimCpuShare({ ...local, local: false }, { ...o, uid: 0 }).how).toContain("another machine");
    expect(claimCpuShare({ ...local, driver: "systemd" }, { ...o, uid: 0 }).how).toContain("driver is systemd");
    expect(fs.existsSync(path.join(root, "cpu", CGROUP))).toBe(false);
    const bare = tree();
    fs.writeFileSync(path.join(bare.root, "cgroup.controllers"), "memory pids\n");
    expect(claimCpuShare(local, { root: bare.root, procRoot: bare.proc, uid: 0, pid: 1, env: {} }).how).toContain("without the cpu controller");
    expect(cpuShare().claimed).toBe(false);
  });
});

describe("labRunnable", () => {
  it("counts the lab's threads running, waiting for a CPU or on the disk, in the cgroup and every folder below it; undefined when not claimed", () => {
    const { root, proc: p } = tree();
    const dir = path.join(root, "cpu", CGROUP);
    fs.mkdirSync(path.join(dir, "lab"), { recursive: true });
    fs.mkdirSync(path.join(dir, "abc123"), { recursive: true });
    fs.writeFileSync(path.join(dir, "lab", "tasks"), "1\n2\n");
    fs.writeFileSync(path.join(dir, "abc123", "tasks"), "3\n4\n5\n99\n");
    proc(p, "1", "node", "R");
    proc(p, "2", "node", "S");
    proc(p, "3", "openclaw", "D");
    proc(p, "4", "openclaw", "R");
    proc(p, "5", "openclaw", "S");
    // 99 ended between the list and its stat: not counted, no error.
    expect(labRunnable({ claimed: true, dir, version: 1, how: "" }, p)).toBe(3);
    expect(labRunnable({ claimed: false, how: "" }, p)).toBeUndefined();
  });
});

describe("OwnLoad", () => {
  it("damps like the 1-minute load average: the first count starts it, a minute of a new count moves it about 63% of the way", () => {
    const l = new OwnLoad(2_000);
    expect(l.add(2)).toBe(2);
    let v = 0;
    for (let i = 0; i < 30; i++) v = l.add(10);
    expect(v).toBeGreaterThan(2 + 0.6 * 8);
    expect(v).toBeLessThan(2 + 0.66 * 8);
  });
});
