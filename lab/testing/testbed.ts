// A cheap stand-in lab for the fault library's own tests and bench: an internal network and a
// few base-image containers, each running a tiny TCP echo server, labelled like any lab
// resource (prune removes them with their run). Shaped like Lab where faults look (FaultLab),
// with a teardown stack of its own that faults register their heal on; down() drains it first.
import { docker } from "../engine/docker.ts";
import { runLabels } from "../engine/cleanup.ts";
import { ensureBaseImage } from "../engine/images.ts";
import type { FaultLab } from "../faults/fault.ts";
import { execIn, type ExecOut } from "../faults/helper.ts";
import type { RunLike } from "../faults/timeline.ts";
import { TeardownStack, type DrainResult } from "../topology/teardown.ts";
import { waitFor, WaitTimeout } from "../core/wait.ts";

export const ECHO_PORT = 7000;
export const UDP_PORT = 7001;

// TCP echo server, and a UDP port that logs each datagram's sender (one-way faults show up
// there: TCP needs both directions). tini as PID 1 so SIGTERM ends node (a graceful stop).
const ECHO = `require("net").createServer((s) => { s.on("error", () => {}); s.pipe(s); }).listen(${ECHO_PORT}, () => console.log("listening"));
require("dgram").createSocket("udp4").on("message", (m, r) => console.log("udp " + r.address + " " + m)).bind(${UDP_PORT});`;

const UDP_SEND = `const [host, port, text] = process.argv.slice(1); const s = require("dgram").createSocket("udp4"); s.send(text, Number(port), host, (e) => { console.log(e ? e.code : "sent"); s.close(); });`;

/** Connect from inside `from`'s container to host:port, send `bytes`, wait for them echoed. */
const CLIENT = `
const [host, port, bytes, timeoutMs] = process.argv.slice(1);
const n = Number(bytes), t0 = performance.now();
const s = require("net").connect(Number(port), host);
const done = (r) => { console.log(JSON.stringify({ ...r, ms: Math.round(performance.now() - t0) })); process.exit(0); };
setTimeout(() => done({ ok: false, why: "timeout" }), Number(timeoutMs)).unref();
let got = 0;
s.on("connect", () => s.write(Buffer.alloc(n, 97)));
s.on("data", (d) => { got += d.length; if (got >= n) done({ ok: true, bytes: got }); });
s.on("error", (e) => done({ ok: false, why: e.code || e.message }));
`;

let baseTag: string | undefined;
/** The base image (Debian + iproute2 + iptables + node), built once by images.ts. */
export async function baseImage(): Promise<string> {
  baseTag ??= process.env.FLEETLAB_BASE_IMAGE ?? (await ensureBaseImage()).tag;
  return baseTag;
}

export interface BedMember {
  alias: string;
  id: string;
  ip: string;
}

export class Testbed implements FaultLab {
  readonly members = new Map<string, BedMember>();
  network = { name: "", id: "" };
  images = { base: { tag: "" } };
  /** Faults made on this bed register their heal here; down() drains it before removing anything. */
  readonly teardown = new TeardownStack();

  readonly id: string;
  readonly run: RunLike;
  private constructor(
    id: string,
    run: RunLike,
  ) {
    this.id = id;
    this.run = run;
  }

  /** Network + one echo container per alias, all started. */
  static async up(run: RunLike, aliases: string[] = ["a", "b"]): Promise<Testbed> {
    const bed = new Testbed(`${run.id}-bed${Math.random().toString(16).slice(2, 6)}`, run);
    bed.images.base.tag = await baseImage();
    const d = docker();
    const labels = (kind: string, alias?: string) => ({ ...runLabels(run.id, kind), "fleetlab.lab": bed.id, ...(alias ? { "fleetlab.alias": alias } : {}) });
    const name = `fleetlab-${bed.id}`;
    const net = await d.createNetwork({ Name: name, Internal: true, CheckDuplicate: true, Labels: labels("network") });
    bed.network = { name, id: net.id };
    try {
      await Promise.all(aliases.map((a) => bed.#start(a, labels("fault-test", a))));
    } catch (err) {
      await bed.down();
      throw err;
    }
    return bed;
  }

  async #start(alias: string, labels: Record<string, string>): Promise<void> {
    const c = await docker().createContainer({
      name: `fleetlab-${this.id}-${alias}`,
      Image: this.images.base.tag,
      Cmd: ["tini", "--", "node", "-e", ECHO],
      Labels: labels,
      HostConfig: { NetworkMode: this.network.name, DnsOptions: ["timeout:1", "attempts:1"] },
      NetworkingConfig: { EndpointsConfig: { [this.network.name]: { Aliases: [alias] } } },
    });
    await c.start();
    const ip = (await c.inspect()).NetworkSettings.Networks[this.network.name]!.IPAddress;
    this.members.set(alias, { alias, id: c.id, ip });
    // Wait until the server listens (the log line), so probes mean what they say.
    await waitFor(`${alias}: echo server listening`, async () => (await c.logs({ stdout: true, stderr: false })).toString().includes("listening"), { timeoutMs: 10_000, intervalMs: 20 });
  }

  member(alias: string): BedMember {
    const m = this.members.get(alias);
    if (!m) throw new Error(`no member '${alias}' in testbed ${this.id}`);
    return m;
  }

  exec(alias: string, cmd: string[]): Promise<ExecOut> {
    return execIn(this.member(alias).id, cmd);
  }

  /**
   * From inside `from`, echo `bytes` through `to`'s server (by `to`'s address now):
   * { ok, ms } or { ok:false, why }.
   */
  async echo(from: string, to: string | { ip: string }, opts: { bytes?: number; timeoutMs?: number; port?: number } = {}): Promise<{ ok: boolean; ms: number; why?: string }> {
    const ip = typeof to === "string" ? this.member(to).ip : to.ip;
    const r = await this.exec(from, ["node", "-e", CLIENT, ip, String(opts.port ?? ECHO_PORT), String(opts.bytes ?? 16), String(opts.timeoutMs ?? 1000)]);
    const line = r.stdout.trim().split("\n").pop() ?? "";
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`echo client in ${from} printed ${JSON.stringify(r.stdout)} ${r.stderr}`);
    }
  }

  /** Echo until it works (a restarted server needs a moment to listen), or the last failure. */
  async echoSoon(from: string, to: string | { ip: string }, withinMs = 10_000): Promise<{ ok: boolean; ms: number; why?: string; tries: number }> {
    let tries = 0;
    let last: { ok: boolean; ms: number; why?: string } | undefined;
    try {
      return await waitFor(
        `echo ${from} -> ${typeof to === "string" ? to : to.ip}`,
        async () => {
          tries++;
          last = await this.echo(from, to);
          return last.ok ? { ...last, tries } : undefined;
        },
        { timeoutMs: withinMs, intervalMs: 100, lastState: () => last?.why ?? "" },
      );
    } catch (err) {
      // Not within the time: the last failure, for the caller to assert on.
      if (err instanceof WaitTimeout && last) return { ...last, tries };
      throw err;
    }
  }

  /** Send one UDP datagram from inside `from` to `to`; see udpReceived. */
  async udp(from: string, to: string, text: string): Promise<string> {
    return (await this.exec(from, ["node", "-e", UDP_SEND, this.member(to).ip, String(UDP_PORT), text])).stdout.trim();
  }

  /** Texts of the datagrams `at` has received so far. */
  async udpReceived(at: string): Promise<string[]> {
    const log = (await docker().getContainer(this.member(at).id).logs({ stdout: true, stderr: false })).toString("utf8");
    return [...log.matchAll(/udp \S+ (\S+)/g)].map((m) => m[1]!);
  }

  /** Heal what is still registered (newest first), then remove everything this testbed made
   * (helpers first). Returns what the drain did. */
  async down(): Promise<DrainResult> {
    const drained = await this.teardown.drain();
    const d = docker();
    const mine = await d.listContainers({ all: true, filters: { label: [`fleetlab.lab=${this.id}`] } });
    mine.sort((a, b) => Number(b.Labels["fleetlab.kind"] === "fault-helper") - Number(a.Labels["fleetlab.kind"] === "fault-helper"));
    for (const c of mine) await d.getContainer(c.Id).remove({ force: true }).catch(() => {});
    if (this.network.id) await d.getNetwork(this.network.id).remove().catch(() => {});
    return drained;
  }
}
