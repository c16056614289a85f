// The same OpenClaw gateway and node hosts as bare processes on loopback: the baseline the
// benchmark compares the containerized topology against (same package, same Node, same
// config, same operator and approval code). Either pairing from scratch, or restored from the
// same snapshot of paired state a restored lab uses (restore(), lab/bench/restore.ts).
// The configs are the lab's with its container paths moved to this machine's (barePathMap: the
// approval plugin from the repository's fixtures, the agent's workspace in the member's home);
// what still differs from the lab: loopback instead of the lab network and no wire taps (nodes
// reach the gateway directly), the MCP servers, model and git server are not running (the
// gateway's config names them; nothing in bring-up calls them), and no container around them.
import { spawn, type ChildProcess, execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { nodeBinary } from "../engine/images.ts";
import { gatewayConfig } from "../members/gateway.ts";
import { nodeConfig } from "../members/node-host.ts";
import { nodeAliases, type TopologySpec } from "../definitions/spec.ts";
import type { OperatorHost } from "../topology/operator.ts";
import { barePathMap, rewritePaths, rewriteStateDb, tarEntries, unpackInto } from "./restore.ts";
import { waitFor } from "../core/wait.ts";
import { deadline } from "../core/pace.ts";
import { environment } from "../core/settings.ts";

const run = promisify(execFile);

const BASE_ENV = {
  OPENCLAW_NO_AUTO_UPDATE: "1",
  OPENCLAW_DISABLE_BONJOUR: "1",
  OPENCLAW_SKIP_GMAIL_WATCHER: "1",
  OPENCLAW_SKIP_CANVAS_HOST: "1",
  OPENCLAW_SKIP_BROWSER_CONTROL_SERVER: "1",
  OPENCLAW_NO_RESPAWN: "1",
};

export class BareTopology {
  readonly procs = new Map<string, ChildProcess>();
  /** The members' homes (mode 0700, as mkdtemp makes it: a restored state holds the devices' keys and tokens); removed by down(). */
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bare-"));
  readonly spec: TopologySpec;
  readonly packageDir: string;
  readonly port: number;
  constructor(
    spec: TopologySpec,
    packageDir: string,
    port = 28789,
  ) {
    this.spec = spec;
    this.packageDir = packageDir;
    this.port = port;
  }

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  home(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * Put a snapshot's paired state into each member's home before it starts: the archives a
   * restored lab copies into its state volumes, unpacked here, their container paths rewritten
   * to this machine's (lab/bench/restore.ts says what the archives bake in). Returns how many
   * values were rewritten per member and table.
   */
  restore(archive: (alias: string) => Buffer): Record<string, Record<string, number>> {
    const rewritten: Record<string, Record<string, number>> = {};
    for (const [name, alias] of [["gateway", this.spec.gateway.alias], ...nodeAliases(this.spec).map((a) => [a, a])] as const) {
      const home = this.home(name);
      unpackInto(tarEntries(archive(alias)), home);
      rewritten[name] = rewriteStateDb(path.join(home, ".openclaw", "state", "openclaw.sqlite"), barePathMap(home, this.packageDir));
    }
    return rewritten;
  }

  #env(name: string, config: unknown): NodeJS.ProcessEnv {
    const home = this.home(name);
    const state = path.join(home, ".openclaw");
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(path.join(state, "openclaw.json"), rewritePaths(JSON.stringify(config, null, 2), barePathMap(home, this.packageDir)));
    return { ...environment(), ...BASE_ENV, HOME: home, OPENCLAW_STATE_DIR: state, OPENCLAW_CONFIG_PATH: path.join(state, "openclaw.json"), OPENCLAW_GATEWAY_TOKEN: this.spec.gateway.token };
  }

  #cli(): string[] {
    return [path.join(this.packageDir, "node_modules", "openclaw", "openclaw.mjs")];
  }

  #spawn(name: string, args: string[], config: unknown): ChildProcess {
    const log = fs.openSync(path.join(this.dir, `${name}.log`), "a");
    // Its own process group: OpenClaw starts processes of its own (a node host's outlived a
    // SIGKILL of the one started here by a minute and more), and stop() ends the whole group, as
    // removing a container ends everything in it.
    const p = spawn(nodeBinary().file, [...this.#cli(), ...args], { env: this.#env(name, config), stdio: ["ignore", log, log], detached: true });
    fs.closeSync(log);
    this.procs.set(name, p);
    return p;
  }

  startGateway(): void {
    const cfg = gatewayConfig(this.spec) as { gateway: Record<string, unknown> };
    cfg.gateway = { ...cfg.gateway, bind: "loopback", port: this.port };
    this.#spawn("gateway", ["gateway", "run", "--port", String(this.port), "--bind", "loopback", "--allow-unconfigured"], cfg);
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    await waitFor("bare gateway /readyz", async () => ((await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(deadline(2000)) })).ok ? true : undefined), { // paced
      timeoutMs,
      intervalMs: 250,
    });
  }

  startNode(name: string): void {
    this.#spawn(name, ["node", "run", "--host", "127.0.0.1", "--port", String(this.port), "--display-name", name, "--session-host"], nodeConfig(this.spec, name));
  }

  /**
   * The gateway with the first `beside` node hosts, the rest once it answers /readyz: the lab's
   * start order (nodesBesideGateway in lab/topology/lab.ts). Resolves when every one is started.
   */
  async startInOrder(beside: number): Promise<void> {
    const names = nodeAliases(this.spec);
    this.startGateway();
    for (const n of names.slice(0, beside)) this.startNode(n);
    await this.waitReady();
    for (const n of names.slice(beside)) this.startNode(n);
  }

  operatorHost(): OperatorHost {
    return {
      gatewayUrl: this.gatewayUrl,
      token: this.spec.gateway.token,
      gatewayCli: async (args) => {
        try {
          const r = await run(nodeBinary().file, [...this.#cli(), ...args], { env: this.#env("gateway", JSON.parse(fs.readFileSync(path.join(this.dir, "gateway", ".openclaw", "openclaw.json"), "utf8"))) });
          return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
        } catch (err) {
          const e = err as { code?: number; stdout?: string; stderr?: string };
          return { exitCode: e.code ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
        }
      },
      restartNode: async (name) => {
        await this.stop(name);
        this.startNode(name);
      },
    };
  }

  pid(name: string): number | undefined {
    return this.procs.get(name)?.pid;
  }

  /** SIGKILL to the member's process group (what it started too), once; resolves when the process started here has exited. */
  async stop(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p?.pid) return;
    this.procs.delete(name);
    const exited = p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once("exit", r));
    try {
      process.kill(-p.pid, "SIGKILL");
    } catch {
      // The group is gone already.
    }
    await exited;
  }

  async down(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((n) => this.stop(n)));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
