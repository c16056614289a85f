// kill.inside: SIGKILL a member's processes from inside its own namespaces, so the kill lands
// within milliseconds of its trigger instead of the 170-280 ms a kill through the Docker API
// takes to return (and no record says when that one landed). A small killer container joins
// the target's PID and network namespaces (PidMode and NetworkMode container:<target>; no extra
// capabilities, for it or for OpenClaw) and waits on an HTTP port there. On POST /kill it writes
// the time and sends SIGKILL to every process of the namespace but its init (kill(-1)); tini,
// the init, sees its child die and exits, so the container stops as with a docker kill, and the
// killer goes with it. The landing time comes from the killer's log (the same host clock the
// tap and the timeline use). Heal starts the target again, on its state volume.
//
// Two triggers:
//   faults.killInside(lab, "node-1")                        inject() kills at once (from inside)
//   faults.killInside(lab, "node-1", { at: { node: "node-1", match: { dir: "node->gw", method: "node.invoke.result" } } })
//       prepare() arms a tap rule (notify) that POSTs to the killer as that frame passes the
//       tap; inject() waits for it (opts.timeoutMs) and reports the trigger frame, the landing
//       time and the gap between them, all on the timeline.
// A kill "when this RPC returns" is the first form called right after the RPC resolves.
import { randomBytes } from "node:crypto";
import { LABEL_HEAL, runLabels } from "../engine/cleanup.ts";
import { demux, docker } from "../engine/docker.ts";
import type { TapMatch } from "../clients/tap.ts";
import { ContainerFault, gone, ipOnLab } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";
import { nowMs } from "./timeline.ts";
import { waitFor } from "../core/wait.ts";
import { cpuShare } from "../core/cpu-share.ts";
import type { TappedLab } from "./wire.ts";

export const KILLER_PORT = 17070;

// The killer: Node (the base image has it), no dependencies. Every line it writes is JSON.
const KILLER = `
const http = require("node:http"), fs = require("node:fs");
const log = (o) => fs.writeSync(1, JSON.stringify(o) + "\\n");
http.createServer((req, res) => {
  if (req.url === "/health") return res.end("ok");
  if (req.url !== "/kill" || req.method !== "POST") { res.statusCode = 404; return res.end(); }
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const t = Date.now();
    log({ event: "kill", t, trigger: body || null });
    try { process.kill(-1, "SIGKILL"); } catch (e) { log({ event: "error", t: Date.now(), error: String(e) }); res.statusCode = 500; return res.end(String(e)); }
    log({ event: "sent", t: Date.now() });
    res.end(JSON.stringify({ t }));
  });
}).listen(${KILLER_PORT}, "0.0.0.0", () => log({ event: "listening", t: Date.now() }));
`;

export interface KillInsideOptions extends FaultOptions {
  /** Kill as this frame passes the node's tap (else at inject). */
  at?: { node: string; match: TapMatch };
}

interface KillerLine {
  event: string;
  t: number;
  trigger?: string | null;
  error?: string;
}

type KillLab = FaultLab & Partial<Pick<TappedLab, "tap">>;

export class KillInsideFault extends ContainerFault {
  readonly kind = "kill.inside";
  #killer: string | undefined;
  #url = "";
  #ruleId: string | undefined;
  #landed: KillerLine | undefined;

  readonly o: KillInsideOptions;
  constructor(
    lab: KillLab,
    alias: string,
    o: KillInsideOptions = {},
  ) {
    super(lab, alias, o);
    this.o = o;
  }

  protected override defaultTimeoutMs(): number {
    return this.o.at ? 120_000 : 30_000;
  }

  protected override async doPrepare(): Promise<Detail> {
    const lab = this.lab as KillLab;
    const image = lab.images.base.tag;
    const c = await docker().createContainer({
      name: `fleetlab-${lab.id}-killer-${this.alias}-${randomBytes(2).toString("hex")}`.replace(/[^a-zA-Z0-9_.-]/g, "-"),
      Image: image,
      Cmd: ["node", "-e", KILLER],
      Labels: { ...runLabels(lab.run.id, "fault-helper"), "fleetlab.lab": lab.id, "fleetlab.fault": this.id, "fleetlab.target": this.alias, [LABEL_HEAL]: "" },
      HostConfig: { PidMode: `container:${this.containerId}`, NetworkMode: `container:${this.containerId}`, Memory: 64 * 2 ** 20, ...(cpuShare().parent ? { CgroupParent: cpuShare().parent } : {}) },
    });
    this.#killer = c.id;
    await c.start();
    const ip = await ipOnLab(this.lab, this.alias);
    this.#url = `http://${ip}:${KILLER_PORT}/kill`;
    await waitFor(`the killer in ${this.alias} to listen`, async () => ((await this.#lines()).some((l) => l.event === "listening") ? true : undefined), { timeoutMs: 15_000, intervalMs: 50 });
    if (this.o.at) {
      if (!lab.tap) throw new Error("kill.inside at a frame needs the node's wire tap (taps are off in this topology)");
      this.#ruleId = `fleetlab-${process.pid}-${this.id}-kill`;
      await lab.tap(this.o.at.node).addRule({ id: this.#ruleId, match: this.o.at.match, action: { notify: { url: this.#url } }, once: true });
    }
    return { killer: c.id.slice(0, 12), url: this.#url, ...(this.#ruleId ? { armed: { rule: this.#ruleId, node: this.o.at!.node, match: this.o.at!.match } } : {}) };
  }

  protected async doInject(): Promise<Detail> {
    if (this.o.at) {
      // Armed at prepare: wait for the frame to pass and the kill to land.
      const landed = await waitFor(`${this} to be triggered by its frame`, async () => (await this.#lines()).find((l) => l.event === "kill"), { timeoutMs: this.opts.timeoutMs ?? this.defaultTimeoutMs(), intervalMs: 20, signal: this.lifetime });
      return this.#report(landed);
    }
    const sent = nowMs();
    await fetch(this.#url, { method: "POST", body: JSON.stringify({ from: "lab", t: sent }) }).catch(() => undefined); // the killer may die before it answers
    const landed = await waitFor(`${this} to land`, async () => (await this.#lines()).find((l) => l.event === "kill"), { timeoutMs: 10_000, intervalMs: 10 });
    return { ...this.#report(landed), sentAt: sent, sentToLandedMs: landed.t - sent };
  }

  #report(landed: KillerLine): Detail {
    this.#landed = landed;
    let trigger: { seq?: number; t?: number; conn?: string } | undefined;
    try {
      trigger = landed.trigger ? (JSON.parse(landed.trigger) as typeof trigger) : undefined;
    } catch {
      trigger = undefined;
    }
    if (trigger?.t !== undefined && trigger.seq !== undefined) this.record("fired", trigger.t, 0, { seq: trigger.seq, conn: trigger.conn });
    this.record("landed", landed.t, trigger?.t !== undefined ? landed.t - trigger.t : 0, { frameToLandedMs: trigger?.t !== undefined ? landed.t - trigger.t : undefined });
    return { landedAt: landed.t, ...(trigger?.t !== undefined ? { trigger, frameToLandedMs: landed.t - trigger.t } : {}) };
  }

  /** When the kill landed (epoch ms, the host's clock), once it has. */
  get landedAt(): number | undefined {
    return this.#landed?.t;
  }

  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    return st.Running ? undefined : { exitCode: st.ExitCode };
  }

  protected override async doCleanup(): Promise<Detail> {
    const out: Detail = {};
    const lab = this.lab as KillLab;
    if (this.#ruleId && lab.tap && this.o.at) {
      await lab.tap(this.o.at.node).removeRule(this.#ruleId).catch(() => {});
      out.ruleRemoved = this.#ruleId;
    }
    // Fired while only prepared (inject never called): the target is down all the same; start it.
    if (!this.#landed && (await this.#lines().catch(() => [])).some((l) => l.event === "kill")) {
      const st = await this.st().catch(() => undefined);
      if (st && !st.Running) {
        await this.container.start();
        out.restartedTarget = true;
      }
    }
    if (this.#killer) {
      await docker().getContainer(this.#killer).remove({ force: true }).catch((e) => {
        if (!gone(e)) throw e;
      });
      out.killerRemoved = true;
    }
    return out;
  }

  async #lines(): Promise<KillerLine[]> {
    if (!this.#killer) return [];
    const buf = (await docker().getContainer(this.#killer).logs({ stdout: true, stderr: false, follow: false })) as unknown as Buffer;
    const out: KillerLine[] = [];
    for (const l of demux(buf).split("\n")) {
      try {
        if (l.trim()) out.push(JSON.parse(l) as KillerLine);
      } catch {
        /* not ours */
      }
    }
    return out;
  }
}

export const killInside = defineFault({
  name: "killInside",
  family: "process",
  describe: "SIGKILL the member's processes from inside its own namespaces (lands within ms; at a tap frame with at:), landing time on the timeline; heal starts it again",
  available: anywhere,
  make: (lab: KillLab, alias: string, opts: KillInsideOptions = {}) => new KillInsideFault(lab, alias, opts),
  bench: [{ label: "kill from inside (SIGKILL; heal: start)", observedBy: "engine: not running / running", make: (bed) => new KillInsideFault(bed.lab as KillLab, "b") }],
});
