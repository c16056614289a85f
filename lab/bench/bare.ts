// The same OpenClaw gateway and node hosts as bare processes on loopback: the baseline the
// benchmark compares the containerized topology against (same package, same Node, same
// config, same operator and approval code).
import { spawn, type ChildProcess, execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { nodeBinary } from "../engine/images.ts";
import { gatewayConfig } from "../members/gateway.ts";
import { nodeConfig } from "../members/node-host.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import type { OperatorHost } from "../topology/operator.ts";
import { waitFor } from "../core/wait.ts";

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
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bare-"));
  constructor(
    readonly spec: TopologySpec,
    readonly packageDir: string,
    readonly port = 28789,
  ) {}

  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  #env(name: string, config: unknown): NodeJS.ProcessEnv {
    const home = path.join(this.dir, name);
    const state = path.join(home, ".openclaw");
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(path.join(state, "openclaw.json"), JSON.stringify(config, null, 2));
    return { ...process.env, ...BASE_ENV, HOME: home, OPENCLAW_STATE_DIR: state, OPENCLAW_CONFIG_PATH: path.join(state, "openclaw.json"), OPENCLAW_GATEWAY_TOKEN: this.spec.gateway.token };
  }

  #cli(): string[] {
    return [path.join(this.packageDir, "node_modules", "openclaw", "openclaw.mjs")];
  }

  #spawn(name: string, args: string[], config: unknown): ChildProcess {
    const log = fs.openSync(path.join(this.dir, `${name}.log`), "a");
    const p = spawn(nodeBinary().file, [...this.#cli(), ...args], { env: this.#env(name, config), stdio: ["ignore", log, log] });
    this.procs.set(name, p);
    return p;
  }

  startGateway(): void {
    const cfg = gatewayConfig(this.spec) as { gateway: Record<string, unknown> };
    cfg.gateway = { ...cfg.gateway, bind: "loopback", port: this.port };
    this.#spawn("gateway", ["gateway", "run", "--port", String(this.port), "--bind", "loopback", "--allow-unconfigured"], cfg);
  }

  async waitReady(timeoutMs = 90_000): Promise<void> {
    await waitFor("bare gateway /readyz", async () => ((await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok ? true : undefined), {
      timeoutMs,
      intervalMs: 250,
    });
  }

  startNode(name: string): void {
    this.#spawn(name, ["node", "run", "--host", "127.0.0.1", "--port", String(this.port), "--display-name", name, "--session-host"], nodeConfig(this.spec));
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

  async stop(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGKILL");
    await exited;
  }

  async down(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((n) => this.stop(n)));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
