// A running topology: spec -> internal network, state volumes, containers, readiness, an
// approved operator and paired nodes. down() saves every log and removes every resource.
import fs from "node:fs";
import path from "node:path";
import type { StartedTestContainer } from "testcontainers";
import { docker } from "../docker.ts";
import { onInterrupt, runLabels, leftovers } from "../cleanup.ts";
import { ensureImages, type ImageSet } from "../images.ts";
import { info, step } from "../log.ts";
import { FIXTURES, STATE } from "../paths.ts";
import { saveContainerLogs } from "../evidence/logs.ts";
import type { Run } from "../evidence/run.ts";
import { LabContainer, ipOn } from "./container.ts";
import { APPROVAL_PLUGIN, APPROVAL_PLUGIN_DIR, gatewayConfig, nodeConfig } from "./config.ts";
import { mcpContainers, nodeAliases, tapAlias, type TopologySpec } from "./spec.ts";
import { StopWaiting, waitUntil } from "./wait.ts";
import { TeardownStack } from "./teardown.ts";
import { LabOperator, isReadyNode, type OperatorHost } from "./operator.ts";
import { ModelControl } from "../clients/model.ts";
import { GitHttpControl } from "../clients/git.ts";
import { McpControl } from "../clients/mcp.ts";
import { TapControl } from "../clients/tap.ts";

export type MemberKind = "gateway" | "node" | "model" | "git" | "mcp" | "tap";

export interface Member {
  alias: string;
  kind: MemberKind;
  container: StartedTestContainer;
  id: string;
  ip: string;
  volume?: string;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

let labCounter = 0;

export class Lab {
  readonly members = new Map<string, Member>();
  operator!: LabOperator;
  images!: ImageSet;
  network = { name: "", id: "", subnet: "" };
  readonly timings: Record<string, number> = {};
  /** What undoes what scenarios, faults and helpers set up on this lab; drained newest first. */
  readonly teardown = new TeardownStack();
  #down = false;
  #unregister: () => void = () => {};

  private constructor(
    readonly id: string,
    readonly spec: TopologySpec,
    readonly run: Run,
    /** Evidence folder of this lab (inside the run folder). */
    readonly dir: string,
  ) {}

  /** Bring a topology up and wait until it is ready; on any failure, take it down again. */
  static async up(spec: TopologySpec, run: Run, name = "lab"): Promise<Lab> {
    const id = `${run.id}-${++labCounter}`;
    const lab = new Lab(id, spec, run, path.join(run.dir, name));
    lab.#unregister = onInterrupt(`lab ${id}`, () => lab.down());
    try {
      await lab.#up();
      return lab;
    } catch (err) {
      await lab.down().catch((e) => info(`teardown after failed start also failed: ${(e as Error).message}`));
      throw err;
    }
  }

  get gateway(): Member {
    return this.member(this.spec.gateway.alias);
  }
  get nodes(): Member[] {
    return nodeAliases(this.spec).map((a) => this.member(a));
  }
  member(alias: string): Member {
    const m = this.members.get(alias);
    if (!m) throw new Error(`no member '${alias}' in this lab (members: ${[...this.members.keys()].join(", ")})`);
    return m;
  }
  /** WebSocket URL of the gateway as the host reaches it (container IP on the internal network). */
  get gatewayUrl(): string {
    return `ws://${this.gateway.ip}:${this.spec.gateway.port}`;
  }
  get model(): ModelControl {
    return new ModelControl(`http://${this.member(this.spec.model.alias).ip}:${this.spec.model.port}`);
  }
  /** Control API of an MCP server container (requests it saw, catalog, holds). */
  mcp(name: string): McpControl {
    const m = mcpContainers(this.spec).find((x) => x.name === name);
    if (!m) throw new Error(`no MCP server '${name}' in this topology (servers: ${mcpContainers(this.spec).map((x) => x.name).join(", ") || "none"})`);
    return new McpControl(`http://${this.member(name).ip}:${m.port}`);
  }
  /** The wire tap between a node host and the gateway (frames, HTTP exchanges, fault rules). */
  tap(node: string): TapControl {
    if (!this.spec.tap.enabled) throw new Error("this topology has no wire taps (tap.enabled is false)");
    return new TapControl(`http://${this.member(tapAlias(node)).ip}:${this.spec.tap.controlPort}`);
  }
  get git(): GitHttpControl {
    return new GitHttpControl(`http://${this.member(this.spec.git.alias).ip}:${this.spec.git.port}`);
  }

  async #up(): Promise<void> {
    const t0 = performance.now();
    const spec = this.spec;
    this.images = await step("images", () => ensureImages(spec.openclawVersion));
    this.#time("images", t0);
    const tReady = performance.now();

    const d = docker();
    const net = await d.createNetwork({
      Name: `fleetlab-${this.id}`,
      Internal: true,
      CheckDuplicate: true,
      Labels: this.#labels("network"),
    });
    const inspected = await net.inspect();
    this.network = { name: `fleetlab-${this.id}`, id: net.id, subnet: inspected.IPAM?.Config?.[0]?.Subnet ?? "" };

    // Every container starts at once: the gateway resolves the model only at its first turn,
    // and node hosts retry their connection while the gateway starts (OpenClaw answers them
    // "gateway starting" with a retry delay), so nothing here waits on anything else.
    await step(`containers started (model, git, gateway, ${spec.nodes.count} node host(s))`, async () => {
      const model = new LabContainer(this.images.model.tag, this.run.id, "model")
        .withLabels(this.#labels("model", spec.model.alias))
        .onLabNetwork(this.network.name, [spec.model.alias])
        .withName(`fleetlab-${this.id}-${spec.model.alias}`)
        .withEnvironment({ MODEL_PORT: String(spec.model.port), MODEL_SCRIPTS: "/fixtures/model", MODEL_DEFAULT_SCRIPT: spec.model.script })
        .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "model"), target: "/fixtures/model" }]);
      const starts: Promise<unknown>[] = [this.#start(spec.model.alias, "model", model)];
      if (spec.git.enabled) {
        const git = new LabContainer(this.images["git-http"].tag, this.run.id, "git")
          .withLabels(this.#labels("git", spec.git.alias))
          .onLabNetwork(this.network.name, [spec.git.alias])
          .withName(`fleetlab-${this.id}-${spec.git.alias}`)
          .withEnvironment({ GIT_HTTP_PORT: String(spec.git.port), GIT_ROOT: "/srv/git" });
        starts.push(this.#start(spec.git.alias, "git", git));
      }
      for (const m of mcpContainers(spec)) starts.push(this.#startMcp(m));
      if (spec.tap.enabled) for (const n of nodeAliases(spec)) starts.push(this.#startTap(n));
      const gw = this.#openclaw(spec.gateway.alias, "gateway", gatewayConfig(spec, this.network.subnet))
        .withEnvironment({
          FLEETLAB_ROLE: "gateway",
          GATEWAY_PORT: String(spec.gateway.port),
          OPENCLAW_GATEWAY_TOKEN: spec.gateway.token,
        })
        .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "plugins", APPROVAL_PLUGIN), target: APPROVAL_PLUGIN_DIR }]);
      starts.push(this.#volume(spec.gateway.alias).then((v) => this.#start(spec.gateway.alias, "gateway", gw, v)));
      starts.push(...nodeAliases(spec).map((alias) => this.#startNode(alias)));
      await Promise.all(starts);
    });

    await step("gateway /readyz, model and git healthy", () =>
      Promise.all([
        this.#waitReady(),
        waitUntil("model /healthz", async () => ((await this.model.healthy()) ? true : undefined), { timeoutMs: 20_000 }),
        spec.git.enabled ? waitUntil("git-http /healthz", async () => ((await this.git.healthy()) ? true : undefined), { timeoutMs: 20_000 }) : null,
        ...(spec.tap.enabled ? nodeAliases(spec) : []).map((n) => waitUntil(`tap for ${n} /healthz`, async () => ((await this.tap(n).healthy()) ? true : undefined), { timeoutMs: 20_000 })),
        ...mcpContainers(spec).map((m) => waitUntil(`MCP server ${m.name} /healthz`, async () => ((await this.mcp(m.name).healthy()) ? true : undefined), { timeoutMs: 20_000 })),
      ]),
    );
    this.#time("gatewayReady", tReady);

    this.operator = await step("operator connected (approved by the gateway's own CLI)", () =>
      LabOperator.connect(this.#operatorHost(), path.join(STATE, "operator"), path.join(this.dir, "transcripts", "operator.jsonl")),
    );

    if (spec.nodes.count > 0) {
      await step(`${spec.nodes.count} node host(s) paired (${spec.nodes.devicePairing === "subnet" ? "device pairing auto-approved for the lab subnet" : "device and node pairing approved by the operator"}) and connected`, () =>
        this.operator.approveNodes(nodeAliases(spec), { timeoutMs: 120_000, host: this.#operatorHost() }),
      );
    }
    this.#time("ready", tReady);
    this.#time("up", t0);
    this.#record();
    info(`lab ${this.id} ready: gateway ${this.gatewayUrl}, ${spec.nodes.count} node host(s), network ${this.network.name} (internal)`);
  }

  #operatorHost(): OperatorHost {
    return {
      gatewayUrl: this.gatewayUrl,
      token: this.spec.gateway.token,
      gatewayCli: (args) => this.exec(this.spec.gateway.alias, ["openclaw", ...args]),
      restartNode: (name) => this.restart(name),
    };
  }

  /** Re-read a member's address from the engine (it can change when the container restarts). */
  async refresh(alias: string): Promise<Member> {
    const m = this.member(alias);
    const info = await docker().getContainer(m.id).inspect();
    const ip = info.NetworkSettings.Networks[this.network.name]?.IPAddress;
    if (ip) m.ip = ip;
    return m;
  }

  /** After a gateway restart: wait for /readyz, then connect the operator again (same identity). */
  async reconnectOperator(timeoutMs = 90_000): Promise<void> {
    await this.refresh(this.spec.gateway.alias);
    await this.#waitReady(timeoutMs);
    await this.operator.reconnect({ gatewayUrl: this.gatewayUrl });
  }

  /** Graceful restart of a member on the same container and state volume. */
  async restart(alias: string, timeoutSeconds = 5): Promise<void> {
    await docker().getContainer(this.member(alias).id).restart({ t: timeoutSeconds });
  }

  async #startMcp(m: { name: string; catalog: string; port: number }): Promise<void> {
    const c = new LabContainer(this.images.mcp.tag, this.run.id, "mcp")
      .withLabels(this.#labels("mcp", m.name))
      .onLabNetwork(this.network.name, [m.name])
      .withName(`fleetlab-${this.id}-${m.name}`)
      .withEnvironment({ MCP_PORT: String(m.port), MCP_NAME: m.name, MCP_CATALOG: `/fixtures/mcp/${m.catalog}.json`, MCP_ALLOWED_HOSTS: m.name })
      .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "mcp"), target: "/fixtures/mcp" }]);
    await this.#start(m.name, "mcp", c);
  }

  async #startTap(node: string): Promise<void> {
    const spec = this.spec;
    const alias = tapAlias(node);
    const c = new LabContainer(this.images.faultproxy.tag, this.run.id, "tap")
      .withLabels(this.#labels("tap", alias))
      .onLabNetwork(this.network.name, [alias])
      .withName(`fleetlab-${this.id}-${alias}`)
      .withEnvironment({
        TAP_LISTEN_PORT: String(spec.gateway.port),
        TAP_UPSTREAM: `${spec.gateway.alias}:${spec.gateway.port}`,
        TAP_CONTROL_PORT: String(spec.tap.controlPort),
      });
    await this.#start(alias, "tap", c);
  }

  async #startNode(alias: string): Promise<void> {
    const spec = this.spec;
    const c = this.#openclaw(alias, "node", nodeConfig(spec, alias)).withEnvironment({
      FLEETLAB_ROLE: "node",
      // Through its wire tap when taps are on: everything the node sends to "its gateway" passes it.
      GATEWAY_HOST: spec.tap.enabled ? tapAlias(alias) : spec.gateway.alias,
      GATEWAY_PORT: String(spec.gateway.port),
      NODE_NAME: alias,
      OPENCLAW_GATEWAY_TOKEN: spec.gateway.token,
    });
    await this.#start(alias, "node", c, await this.#volume(alias));
  }

  #openclaw(alias: string, kind: "gateway" | "node", config: unknown): LabContainer {
    return new LabContainer(this.images.openclaw.tag, this.run.id, kind)
      .withLabels(this.#labels(kind, alias))
      .onLabNetwork(this.network.name, [alias])
      .withName(`fleetlab-${this.id}-${alias}`)
      .withCopyContentToContainer([{ content: JSON.stringify(config, null, 2), target: "/etc/fleetlab/openclaw.json", mode: 0o644 }]);
  }

  async #volume(alias: string): Promise<string> {
    const name = `fleetlab-${this.id}-${alias}-state`;
    await docker().createVolume({ Name: name, Labels: this.#labels("volume") });
    return name;
  }

  async #start(alias: string, kind: MemberKind, c: LabContainer, volume?: string): Promise<Member> {
    if (volume) c.withBindMounts([{ source: volume, target: "/home/lab", mode: "rw" }]);
    const started = await c.start();
    const m: Member = { alias, kind, container: started, id: started.getId(), ip: ipOn(started, this.network.name), volume };
    this.members.set(alias, m);
    return m;
  }

  async #waitReady(timeoutMs = 90_000): Promise<void> {
    const gw = this.gateway;
    await waitUntil(
      "gateway /readyz",
      async () => {
        const st = await docker().getContainer(gw.id).inspect();
        if (!st.State.Running) throw new StopWaiting(`gateway container exited (code ${st.State.ExitCode}); its log is in ${this.dir}`);
        const r = await fetch(`http://${gw.ip}:${this.spec.gateway.port}/readyz`, { signal: AbortSignal.timeout(2000) });
        return r.ok ? true : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  /** What is wrong with the lab now (empty when healthy): gateway ready, every node connected. */
  async health(): Promise<string[]> {
    const problems: string[] = [];
    try {
      const r = await fetch(`http://${this.gateway.ip}:${this.spec.gateway.port}/readyz`, { signal: AbortSignal.timeout(3000) });
      if (!r.ok) problems.push(`gateway /readyz answered ${r.status}`);
    } catch (err) {
      problems.push(`gateway /readyz: ${(err as Error).message}`);
    }
    try {
      const nodes = await this.operator.listNodes();
      for (const m of this.nodes) {
        const n = nodes.find((x) => x.displayName === m.alias);
        if (!n || !isReadyNode(n)) {
          problems.push(`node ${m.alias}: ${n ? JSON.stringify({ connected: n.connected, approvalState: n.approvalState, sessionHost: n.sessionHost, workerSlots: n.workerSlots }) : "missing from node.list"}`);
        }
      }
    } catch (err) {
      problems.push(`node.list: ${(err as Error).message}`);
    }
    return problems;
  }

  /** Run a command inside a member's container. */
  async exec(alias: string, cmd: string[], opts: { user?: string } = {}): Promise<ExecResult> {
    const r = await this.member(alias).container.exec(cmd, { user: opts.user });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  }

  /** Save every container's logs, then remove containers, network and volumes. Idempotent. */
  async down(): Promise<void> {
    if (this.#down) return;
    this.#down = true;
    const t0 = performance.now();
    try {
      // The teardown stack first: a fault is healed (and its helper removed) before its target goes.
      const undone = await this.teardown.drain();
      for (const f of undone.failed) info(`could not undo '${f.name}': ${f.error}`);
      await this.operator?.close().catch(() => {});
      if (this.spec.tap.enabled) {
        await Promise.all(
          nodeAliases(this.spec)
            .filter((n) => this.members.has(tapAlias(n)))
            .map((n) =>
              this.tap(n)
                .saveTranscript(path.join(this.dir, "transcripts", `tap-${n}.jsonl`))
                .catch((e) => info(`could not save the tap transcript of ${n}: ${(e as Error).message}`)),
            ),
        );
      }
      const d = docker();
      const all = await d.listContainers({ all: true, filters: { label: [`fleetlab.lab=${this.id}`] } });
      // A fault helper left over (healing failed) goes without its logs; the rest are saved.
      const helpers = all.filter((c) => c.Labels["fleetlab.kind"] === "fault-helper");
      await Promise.all(helpers.map((c) => d.getContainer(c.Id).remove({ force: true }).catch(() => {})));
      const mine = all.filter((c) => !helpers.includes(c));
      await Promise.all(
        mine.map(async (c) => {
          const alias = c.Labels["fleetlab.alias"] ?? c.Names[0]?.replace(/^\//, "") ?? c.Id.slice(0, 12);
          const dir = path.join(this.dir, "logs");
          fs.mkdirSync(dir, { recursive: true });
          await saveContainerLogs(c.Id, path.join(dir, `${alias}.stdout.log`), path.join(dir, `${alias}.stderr.log`)).catch((e) =>
            info(`could not save logs of ${alias}: ${(e as Error).message}`),
          );
        }),
      );
      // Graceful stop of OpenClaw is slow (seconds) and gains nothing at teardown: remove at once.
      await Promise.all(mine.map((c) => d.getContainer(c.Id).remove({ force: true }).catch(() => {})));
      for (const n of await d.listNetworks({ filters: { label: [`fleetlab.lab=${this.id}`] } })) await d.getNetwork(n.Id).remove().catch(() => {});
      const vols = (await d.listVolumes({ filters: { label: [`fleetlab.lab=${this.id}`] } })).Volumes ?? [];
      await Promise.all(vols.map((v) => d.getVolume(v.Name).remove().catch(() => {})));
    } finally {
      this.#time("down", t0);
      this.#record();
      this.#unregister();
    }
  }

  /** Lab resources still present (empty after a complete down()). */
  async leftovers(): Promise<string[]> {
    return leftovers({ lab: this.id });
  }

  /** This lab's part of run.json: topology, image ids, members, network, timings. */
  #record(): void {
    const labs = ((this.run.record.labs as Record<string, unknown>) ??= {});
    labs[this.id] = {
      evidence: path.relative(this.run.dir, this.dir),
      spec: this.spec,
      network: this.network,
      images: this.images && Object.fromEntries(Object.values(this.images).map((i) => [i.name, { tag: i.tag, id: i.id, cached: i.cached, seconds: i.seconds }])),
      members: [...this.members.values()].map((m) => ({ alias: m.alias, kind: m.kind, container: m.id.slice(0, 12), ip: m.ip, volume: m.volume })),
      timings: this.timings,
    };
    this.run.save();
  }

  #labels(kind: string, alias?: string): Record<string, string> {
    return { ...runLabels(this.run.id, kind), "fleetlab.lab": this.id, ...(alias ? { "fleetlab.alias": alias } : {}) };
  }

  #time(name: string, t0: number): void {
    this.timings[name] = Math.round(performance.now() - t0) / 1000;
  }
}
