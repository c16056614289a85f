// Network faults on cheap containers (base image, tiny echo servers on an internal network):
// each is proven in effect and healed by traffic between the containers, and leaves no helper
// container behind.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { docker } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import { Testbed } from "../testing/testbed.ts";
import { faults } from "./index.ts";
import { Helper } from "./helper.ts";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";

let bed: Testbed;
let run: Run;

beforeAll(async () => {
  run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-faults-")) });
  bed = await Testbed.up(run, ["a", "b", "c"]);
});

afterEach(async () => {
  // A failing test leaves its fault in place: heal it so the next test starts clean.
  await bed.teardown.drain();
});

afterAll(async () => {
  await bed?.down(); // drains the teardown stack first
});

/** Helper containers of this testbed that still exist. */
async function helpers(): Promise<string[]> {
  const list = await docker().listContainers({ all: true, filters: { label: [`fleetlab.lab=${bed.id}`, "fleetlab.kind=fault-helper"] } });
  return list.map((c) => c.Id);
}

/** iptables rules and root qdisc in a member's namespace, read through a throwaway helper. */
async function netState(alias: string): Promise<{ rules: string[]; qdisc: string }> {
  const h = await Helper.start(bed.images.base.tag, bed.member(alias).id, { run, lab: `${bed.id}-inspect`, faultId: "inspect", target: alias });
  try {
    const rules = (await h.sh("iptables -w -S")).stdout.split("\n").filter(Boolean);
    const qdisc = (await h.sh("tc qdisc show")).stdout.trim(); // every interface (a reconnect makes eth1)
    return { rules, qdisc };
  } finally {
    await h.remove();
  }
}
const CLEAN = ["-P INPUT ACCEPT", "-P FORWARD ACCEPT", "-P OUTPUT ACCEPT"];

describe("partition", () => {
  it("both ways: no traffic either way while in effect (open connections stall), all of it back after heal", async () => {
    expect((await bed.echo("a", "b")).ok).toBe(true);
    const f = faults.partition(bed, "a", "b");
    const prep = await f.prepare();
    expect(await helpers()).toHaveLength(1);
    const inj = await f.inject();
    const b = bed.member("b").ip;
    // In effect means: rules listed, a probe from inside a got no answer from b within the probe
    // timeout, and this fault's DROP rules counted that probe's packets.
    expect(inj.detail.probe).toEqual({ [b]: "timeout" });
    expect((inj.detail.dropped as Record<string, number>)[b]).toBeGreaterThan(0);
    // The timeout came from the baseline taken at prepare (b answered within a tenth of it then),
    // and the probe waited all of it.
    const timeoutMs = inj.detail.probeTimeoutMs as number;
    expect(timeoutMs).toBeGreaterThanOrEqual(50);
    expect(timeoutMs).toBeLessThanOrEqual(250);
    expect((inj.detail.probeMs as Record<string, number>)[b]).toBeGreaterThanOrEqual(timeoutMs);
    const baseline = f.timeline.of(f.id).find((s) => s.step === "prepare")!.detail!.baseline as Record<string, string>;
    expect(baseline[b]).toMatch(/^refused /);
    expect(Number(baseline[b]!.split(" ")[1])).toBeLessThanOrEqual(timeoutMs / 10);
    expect(await bed.echo("a", "b", { timeoutMs: 500 })).toMatchObject({ ok: false, why: "timeout" });
    expect(await bed.echo("b", "a", { timeoutMs: 500 })).toMatchObject({ ok: false, why: "timeout" });
    // Others are not affected.
    expect((await bed.echo("a", "c")).ok).toBe(true);
    expect((await bed.echo("c", "b")).ok).toBe(true);
    const h = await f.heal();
    expect(h.detail.probe).toEqual({ [bed.member("b").ip]: "refused" }); // port 9: a reset means reachable
    expect((await bed.echo("a", "b")).ok).toBe(true);
    expect((await bed.echo("b", "a")).ok).toBe(true);
    expect(await helpers()).toEqual([]);
    expect((await netState("a")).rules).toEqual(CLEAN);
    // The timeline in the run folder has the whole life cycle.
    const steps = f.timeline.of(f.id);
    expect(steps.map((s) => s.step)).toEqual(["prepare", "inject", "in-effect", "heal", "healed", "cleanup"]);
    expect(steps[0]).toMatchObject({ fault: "partition", target: "a<->b" });
    expect(prep).toBeGreaterThan(0);
  });

  it("one way (out): a's datagrams to b are lost, b's to a arrive; heal restores a -> b", async () => {
    const f = faults.partition(bed, "a", "b", { direction: "out" });
    await f.inject();
    // A datagram dropped on its way out is refused to the sender at once (EPERM).
    expect(await bed.udp("a", "b", "oneway-ab-1")).toMatch(/^(sent|EPERM)$/);
    expect(await bed.udp("b", "a", "oneway-ba-1")).toBe("sent");
    await new Promise((r) => setTimeout(r, 300));
    expect(await bed.udpReceived("b")).not.toContain("oneway-ab-1");
    expect(await bed.udpReceived("a")).toContain("oneway-ba-1");
    await f.heal();
    expect(await bed.udp("a", "b", "oneway-ab-2")).toBe("sent");
    await new Promise((r) => setTimeout(r, 300));
    expect(await bed.udpReceived("b")).toContain("oneway-ab-2");
  });

  it("from several peers at once (a from b and c); in effect only once every peer is unreachable", async () => {
    const f = faults.partition(bed, "a", ["b", "c"]);
    const inj = await f.inject();
    expect(Object.values(inj.detail.probe as object)).toEqual(["timeout", "timeout"]);
    expect(Object.values(inj.detail.dropped as object).every((n) => n > 0)).toBe(true);
    expect((await bed.echo("a", "c", { timeoutMs: 400 })).ok).toBe(false);
    expect((await bed.echo("b", "c")).ok).toBe(true);
    await f.heal();
    expect((await bed.echo("a", "c")).ok).toBe(true);
  });

  it("one way (in): the probe's answers are what is dropped (counted on the INPUT rule); b still hears a", async () => {
    const f = faults.partition(bed, "a", "b", { direction: "in" });
    const inj = await f.inject();
    const b = bed.member("b").ip;
    expect(inj.detail.probe).toEqual({ [b]: "timeout" });
    expect((inj.detail.dropped as Record<string, number>)[b]).toBeGreaterThan(0);
    expect(await bed.udp("a", "b", "oneway-in-ab")).toBe("sent");
    await new Promise((r) => setTimeout(r, 300));
    expect(await bed.udpReceived("b")).toContain("oneway-in-ab");
    const h = await f.heal();
    expect(h.detail.probe).toEqual({ [b]: "refused" });
  });

  it("a target restarted while partitioned comes back unpartitioned: heal records the fault as vanished", async () => {
    const f = faults.partition(bed, "b", "a");
    await f.inject();
    await docker().getContainer(bed.member("b").id).restart({ t: 0 });
    expect((await bed.echoSoon("a", "b")).ok).toBe(true);
    const h = await f.heal();
    expect(h.detail.vanished).toBeTruthy();
    expect(await helpers()).toEqual([]);
  });
});

describe("packet loss and bandwidth", () => {
  it("loss 1.0 towards one peer drops every packet to it; loss 0.5 drops some (counted); heal clears the rules", async () => {
    const all = faults.loss(bed, "a", 1, { peers: ["b"] });
    await all.inject();
    expect((await bed.echo("a", "b", { timeoutMs: 500 })).ok).toBe(false);
    expect((await bed.echo("a", "c")).ok).toBe(true);
    await all.heal();
    expect((await bed.echo("a", "b")).ok).toBe(true);

    const some = faults.loss(bed, "a", 0.5);
    await some.inject();
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(await bed.udp("b", "a", `loss-${i}`));
    await new Promise((r) => setTimeout(r, 300));
    const got = (await bed.udpReceived("a")).filter((t) => t.startsWith("loss-")).length;
    const dropped = await some.dropped();
    expect(sent.every((x) => x === "sent")).toBe(true);
    // Each datagram met the loss rule once: the ones not received are exactly the ones dropped.
    expect(got + dropped).toBe(20);
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(20);
    await some.heal();
    expect((await netState("a")).rules).toEqual(CLEAN);
  });

  it("bandwidth 1mbit on a's egress: 128 KiB echoed through b takes ~1 s, milliseconds after heal", async () => {
    const before = await bed.echo("a", "b", { bytes: 131072 });
    const f = faults.bandwidth(bed, "a", "1mbit");
    const inj = await f.inject();
    expect(String(inj.detail.qdisc)).toMatch(/^qdisc tbf f1a: root .*rate 1Mbit/);
    const slow = await bed.echo("a", "b", { bytes: 131072, timeoutMs: 5000 });
    expect(slow.ok).toBe(true);
    expect(slow.ms).toBeGreaterThan(800); // 1 Mbit/s = 128 KiB in ~1.05 s
    expect(slow.ms).toBeLessThan(2500);
    await f.heal();
    const after = await bed.echo("a", "b", { bytes: 131072 });
    expect(after.ms).toBeLessThan(Math.max(200, before.ms * 10));
    expect((await netState("a")).qdisc).not.toContain("tbf");
  });
});

describe("disconnect", () => {
  it("takes the container off the lab network and reconnects it under the same alias", async () => {
    const f = faults.disconnect(bed, "b");
    await f.inject();
    expect((await bed.echo("a", "b", { timeoutMs: 500 })).ok).toBe(false);
    const h = await f.heal();
    expect(h.detail.aliases).toEqual(["b"]);
    // By name: the alias resolves again on the lab network.
    expect((await bed.echo("a", { ip: "b" })).ok).toBe(true);
    expect((await bed.echo("a", "b")).ok).toBe(true); // member ip is current (refreshed if it moved)
  });
});

describe("the lab's teardown stack", () => {
  it("heals every kind at once, newest first, and removes every helper", async () => {
    const list = [faults.partition(bed, "a", "b"), faults.bandwidth(bed, "c", "512kbit"), faults.loss(bed, "b", 1, { peers: ["c"] }), faults.disconnect(bed, "c"), faults.pause(bed, "a")];
    for (const f of list) await f.inject();
    expect(await helpers()).toHaveLength(3);
    expect(bed.teardown.pending).toEqual(list.map((f) => `heal ${f}`));
    const res = await bed.teardown.drain();
    expect(res.failed).toEqual([]);
    expect(res.done).toEqual(list.map((f) => `heal ${f}`).reverse());
    expect(list.every((f) => f.done)).toBe(true);
    expect(await helpers()).toEqual([]);
    expect((await bed.echo("a", "b")).ok).toBe(true);
    expect((await bed.echo("b", "c")).ok).toBe(true);
    expect((await bed.echo("c", "a")).ok).toBe(true);
    for (const m of ["a", "b", "c"]) expect(await netState(m)).toEqual({ rules: CLEAN, qdisc: expect.not.stringContaining("tbf") });
  });
});
