// A running topology: spec -> internal network, its members (one module per kind in
// lab/members: recipe, readiness wait, handle), an approved operator and paired nodes.
// down() saves every log and removes every resource.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { docker, joinLabNetwork, LABEL_KIND, leaveLabNetwork } from "../engine/docker.ts";
import { cpuSecondsOf } from "../core/cpu-share.ts";
import { claimFolder, interrupted, onInterrupt, leftovers, OWNER_FILE, removeNetwork } from "../engine/cleanup.ts";
import { ensureImages, type ImageSet } from "../engine/images.ts";
import { probeCapabilities, type Capabilities, type Protocol } from "../engine/capabilities.ts";
import { info, LabError, step } from "../core/log.ts";
import { OPERATOR_DIR, SCRIPTED_IDENTITIES } from "../core/paths.ts";
import { saveContainerLogs } from "../evidence/logs.ts";
import { ContainerEvents } from "../evidence/containers.ts";
import type { LabRow, Run } from "../evidence/run.ts";
import { ContainerWatch, labLabels, openclawFailure, type LabContext, type Member, type MemberContainer } from "../members/member.ts";
import { GatewayContainer, gatewayConfig, gatewayReadiness, gatewayReadyUrl, gatewayUrl } from "../members/gateway.ts";
import { NodeHostContainer, nodeConfig } from "../members/node-host.ts";
import { ModelContainer, modelControl } from "../members/model.ts";
import { GitContainer, gitControl } from "../members/git.ts";
import { McpContainer, mcpControl } from "../members/mcp.ts";
import { TapContainer, redactTapLog, tapControl } from "../members/tap.ts";
import { Redactor } from "../evidence/redact.ts";
import { deadline, machineBusyIn, monitor } from "../core/pace.ts";
import { mcpContainers, nodeAliases, scriptedAliases, tapAlias, tappedAliases, tappedScriptedCount, type TopologySpec } from "../definitions/spec.ts";
import { ScriptedNode } from "../clients/scripted-node.ts";
import { writeTranscript, type TranscriptEntry } from "../clients/gateway.ts";
import { connectAndPair, type FleetHost } from "./fleet.ts";
import { Phases } from "../evidence/phases.ts";
import { TeardownStack } from "./teardown.ts";
import { LabOperator, NotPairedAfterRestore, isReadyNode, type OperatorHost } from "./operator.ts";
import { SnapshotStore, captureState, snapshotKey, snapshotMode, snapshotShape, type Snapshot, type SnapshotMode, type SnapshotRecord } from "./snapshot.ts";
import { loadOrCreateDeviceIdentity } from "../clients/device-identity.ts";
import { LabInfraError, SystemUnderTestError } from "../definitions/verdict.ts";
import { StopWaiting, WaitTimeout, waitFor } from "../core/wait.ts";
import type { ModelControl } from "../clients/model.ts";
import type { GitHttpControl } from "../clients/git.ts";
import type { McpControl } from "../clients/mcp.ts";
import type { TapControl } from "../clients/tap.ts";
import type { NodeEntry } from "../clients/operator.ts";
import { environment } from "../core/settings.ts";

export type { Member, MemberKind } from "../members/member.ts";

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

let labCounter = 0;

/** How long nodes restored from a snapshot get to connect as paired before the lab pairs from scratch (they connect in ~7-8 s once the gateway answers). */
const RESTORED_PAIRING_MS = 60_000;

/**
 * How a lab's members start: "cores" (the default: as many node hosts as the machine has cores
 * start with the gateway, the rest once it answers /readyz), "all" at once, or "gateway-first"
 * (no node host before it answers).
 */
export type StartOrder = "cores" | "gateway-first" | "all";
export function startOrder(env: NodeJS.ProcessEnv = environment()): StartOrder {
  const v = env.FLEETLAB_START_ORDER?.trim();
  if (!v) return "cores";
  if (v === "cores" || v === "gateway-first" || v === "all") return v;
  throw new LabError(`FLEETLAB_START_ORDER=${v} is not a start order: use cores (the default), all or gateway-first`);
}

/** How many of `nodes` node hosts start beside the gateway in this order. */
export function nodesBesideGateway(order: StartOrder, nodes: number, cores = os.cpus().length): number {
  return order === "all" ? nodes : order === "gateway-first" ? 0 : Math.min(nodes, cores);
}

export interface LabUpOptions {
  /**
   * "use" (default): restore the paired state of an earlier lab of the same OpenClaw image and
   * topology shape, or take it after pairing when there is none (lab/topology/snapshot.ts).
   * "fresh": pair from scratch (scenarios that test pairing itself). FLEETLAB_SNAPSHOT=0 forces "fresh".
   */
  snapshot?: SnapshotMode;
  /** How the members start (default: FLEETLAB_START_ORDER, else "cores"); the bench compares them. */
  startOrder?: StartOrder;
}

/** The configs the lab writes for a topology, as the capability probe validates them (the lab subnet is not known yet: a placeholder). */
export function labConfigs(spec: TopologySpec): { node: Record<string, unknown>; gateway: Record<string, unknown> } {
  return { node: nodeConfig(spec, nodeAliases(spec)[0]), gateway: gatewayConfig(spec, "10.0.0.0/24") };
}

/**
 * What node.list says a scenario left behind on the node hosts named (Lab.residue()): a worker
 * slot held, or an installed worker bundle reported before (`reported`) and not now; and which
 * of them report their bundle installed now.
 */
export function leftBehind(entries: Pick<NodeEntry, "displayName" | "workerSlots" | "workerBundle">[], aliases: string[], reported: ReadonlySet<string>): { left: string[]; installed: string[] } {
  const left: string[] = [];
  const installed: string[] = [];
  for (const alias of aliases) {
    const n = entries.find((x) => x.displayName === alias);
    const s = n?.workerSlots;
    if (s && s.available !== s.total) left.push(`${alias} holding ${s.total - s.available} of its ${s.total} worker slot(s)`);
    if (n?.workerBundle?.status === "installed") installed.push(alias);
    else if (reported.has(alias)) left.push(`${alias} no longer reported with its installed worker bundle (node.list workerBundle ${JSON.stringify(n?.workerBundle ?? null)}; it was before)`);
  }
  return { left, installed };
}

export class Lab {
  readonly members = new Map<string, Member>();
  operator!: LabOperator;
  images!: ImageSet;
  /** What the OpenClaw version offers, from its CLI (lab/engine/capabilities.ts). */
  capabilities!: Capabilities;
  network = { name: "", id: "", subnet: "" };
  readonly timings: Record<string, number> = {};
  /** Bring-up's phases and down's, timed, as run.json records them (lab/evidence/phases.ts). */
  readonly phases = new Phases();
  /** How this lab got its paired state (restored from a snapshot, paired and taken, or paired from scratch), as run.json records it. */
  snapshot: SnapshotRecord | undefined;
  #snapshotAsked: SnapshotMode | undefined;
  #startOrder: StartOrder | undefined;
  /** The snapshot whose archives go into the gateway's and node hosts' state volumes at their start. */
  #restoring: Snapshot | undefined;
  /** What undoes what scenarios, faults and helpers set up on this lab; drained newest first. */
  readonly teardown = new TeardownStack();
  /** The teardown under way or done (down() is idempotent: every caller awaits the same one). */
  #downing: Promise<void> | undefined;
  /** CPU seconds its containers had used at teardown, by kind (run.json labs[].cpuS). */
  readonly #cpuS: Record<string, number> = {};
  /** Creations under way (network, containers): down() waits for them, so nothing appears after it looked. */
  readonly #creating = new Set<Promise<unknown>>();
  #unregister: () => void = () => {};
  /** The engine's events for this lab's containers, into containers.jsonl (from bring-up to down()). */
  #containerEvents: ContainerEvents | undefined;

  readonly id: string;
  readonly spec: TopologySpec;
  readonly run: Run;
  /** Evidence folder of this lab (inside the run folder). */
  readonly dir: string;
  private constructor(
    id: string,
    spec: TopologySpec,
    run: Run,
    dir: string,
  ) {
    this.id = id;
    this.spec = spec;
    this.run = run;
    this.dir = dir;
    // The lab's shared token is a credential the run's final redaction pass must know.
    Redactor.credential(spec.gateway.token);
  }

  /** Bring a topology up and wait until it is ready; on any failure, take it down again. */
  static async up(spec: TopologySpec, run: Run, name = "lab", opts: LabUpOptions = {}): Promise<Lab> {
    const id = `${run.id}-${++labCounter}`;
    const lab = new Lab(id, spec, run, path.join(run.dir, name));
    lab.#snapshotAsked = opts.snapshot;
    lab.#startOrder = opts.startOrder;
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
    return gatewayUrl(this);
  }
  get model(): ModelControl {
    return modelControl(this);
  }
  /** Control API of an MCP server container (requests it saw, catalog, holds). */
  mcp(name: string): McpControl {
    return mcpControl(this, name);
  }
  /** The wire tap between a node host (or a scripted node) and the gateway (frames, HTTP exchanges, fault rules). */
  tap(node: string): TapControl {
    return tapControl(this, node);
  }

  readonly #scripted = new Map<string, ScriptedNode>();
  get #scriptedDir(): string {
    return path.join(os.tmpdir(), `fleetlab-${this.id}-scripted`);
  }
  /**
   * A scripted node of this lab (spec.scripted): one per alias, with a device identity of its
   * own (a key made for this lab, kept outside the run folder, which is evidence, and deleted
   * with the lab), not yet connected (its connect goes through tap-<alias>:
   * `node.connect(lab.scriptedUrl(alias))`; pairing: lab/kits/pairing.ts). Closed, and its
   * transcript saved as transcripts/<alias>.jsonl, when the lab goes down.
   */
  scripted(alias: string): ScriptedNode {
    let n = this.#scripted.get(alias);
    if (!n) {
      if (!this.#scriptedNames.all.has(alias)) throw new Error(`no scripted node '${alias}' in this lab (spec.scripted: ${this.spec.scripted.count ? `${this.spec.scripted.prefix}-1 to ${this.spec.scripted.prefix}-${this.spec.scripted.count}` : "none"})`);
      // A fleet paired at bring-up keeps its keys in the cache (beside the lab operator's), so a
      // later lab restoring the paired state from a snapshot connects as the same devices.
      const dir = this.spec.scripted.paired ? path.join(SCRIPTED_IDENTITIES, this.spec.scripted.prefix) : this.#scriptedDir;
      if (!this.spec.scripted.paired && !fs.existsSync(path.join(this.#scriptedDir, OWNER_FILE))) claimFolder(this.#scriptedDir);
      const identity = loadOrCreateDeviceIdentity(path.join(dir, alias, "identity.json"));
      this.#scripted.set(alias, (n = new ScriptedNode({ name: alias, identity, token: this.spec.gateway.token })));
    }
    return n;
  }

  /** Where a scripted node connects: its own tap, which forwards to the gateway, when it is a tapped one; else the gateway itself. */
  scriptedUrl(alias: string): string {
    return this.#scriptedNames.tapped.has(alias) ? `ws://${this.member(tapAlias(alias)).ip}:${this.spec.gateway.port}/` : this.gatewayUrl;
  }
  /** Every scripted node's alias, in order (spec.scripted). */
  get scriptedAliases(): string[] {
    return scriptedAliases(this.spec);
  }
  /** The scripted aliases, and those of them behind taps: from the spec, made once (scriptedUrl asks on every connect of a fleet). */
  get #scriptedNames(): { all: Set<string>; tapped: Set<string> } {
    if (!this.#names) {
      const all = scriptedAliases(this.spec);
      this.#names = { all: new Set(all), tapped: new Set(all.slice(0, tappedScriptedCount(this.spec))) };
    }
    return this.#names;
  }
  #names: { all: Set<string>; tapped: Set<string> } | undefined;
  /** The scripted nodes as the fleet routine (lab/topology/fleet.ts) drives them: this lab's nodes, their URLs, its operator. */
  get fleet(): FleetHost {
    return { scripted: (a) => this.scripted(a), scriptedUrl: (a) => this.scriptedUrl(a), operatorClient: this.operator.client };
  }
  /** How the fleet was brought up (spec.scripted.paired), as run.json records it. */
  fleetUp: { count: number; admitted: number; paired: number; refused: number; lost: number; seconds: number } | undefined;
  get git(): GitHttpControl {
    return gitControl(this);
  }

  /**
   * Bring-up as named phases, each timed into run.json (`phases`; the older `timings` stay):
   * images (and what the version offers), network, members, operator, then restore (nodes on
   * paired state from a snapshot) or pairing (from scratch, also when a restore did not hold),
   * and snapshot (the paired state kept for later labs). A phase that fails ends bring-up;
   * Lab.up then takes the lab down (itself the phase "down").
   */
  async #up(): Promise<void> {
    const t0 = performance.now();
    const phase = <T>(name: string, fn: () => Promise<T>) => this.phases.run(name, fn);
    await phase("images", () => this.#images());
    this.#time("images", t0);
    const tReady = performance.now();
    await phase("network", () => this.#network());
    await phase("members", () => this.#members());
    this.#time("gatewayReady", tReady);
    await phase("operator", () => this.#operator());
    const found = this.#restoring;
    if (this.spec.nodes.count > 0) {
      const restored = found ? await phase("restore", () => this.#restore(found)) : false;
      if (!restored) await phase("pairing", () => this.#pairFromScratch());
    }
    if (this.spec.scripted.paired && this.spec.scripted.count > 0) await phase("fleet", () => this.#fleet());
    this.#time("ready", tReady);
    if (this.snapshot && this.#snapshotAsked !== "fresh" && this.snapshot.path === "fresh" && !this.snapshot.reason) await phase("snapshot", () => this.#takeSnapshot());
    this.#time("up", t0);
    this.#record();
    info(`lab ${this.id} ready: gateway ${this.gatewayUrl}, ${this.spec.nodes.count} node host(s), network ${this.network.name} (internal)`);
  }

  /** The images of the lab's OpenClaw version (built once, cached by content), and what that version's CLI offers. */
  async #images(): Promise<void> {
    this.images = await step("images", () => ensureImages(this.spec.openclawVersion));
    this.#stillWanted();
    this.capabilities = await probeCapabilities(this.images.openclaw, labConfigs(this.spec));
    this.#stillWanted();
  }

  /** The lab's internal network (the engine's events for its containers followed from here on). */
  async #network(): Promise<void> {
    // Follow the engine's events for this lab's containers before the first one is created.
    this.#containerEvents = await ContainerEvents.follow(this.id, path.join(this.dir, "containers.jsonl")).catch((e: Error) => {
      info(`container events of lab ${this.id} are not recorded: ${e.message}`);
      return undefined;
    });
    const d = docker();
    this.#stillWanted();
    const net = await this.#creation(d.createNetwork({
      Name: `fleetlab-${this.id}`,
      Internal: true,
      CheckDuplicate: true,
      Labels: labLabels({ id: this.id, runId: this.run.id }, "network"),
    }));
    const inspected = await net.inspect();
    this.network = { name: `fleetlab-${this.id}`, id: net.id, subnet: inspected.IPAM?.Config?.[0]?.Subnet ?? "" };
    await joinLabNetwork(net.id); // in a runner container: its clients reach the members from inside
  }

  /**
   * Every member started and ready (its own wait strategy), on the paired state of a snapshot
   * when there is one for this version and shape.
   */
  async #members(): Promise<void> {
    const spec = this.spec;
    const found = this.#findSnapshot();
    // The gateway and the light members (model, git, MCP servers, taps) start at once, each
    // waiting for its own readiness (its wait strategy), with as many node hosts as the machine
    // has cores; the other node hosts start when the gateway answers /readyz. Eight node hosts
    // booting beside the gateway on 2 busy cores starved it until it exited by itself (code 78:
    // "state lease heartbeat did not become ready (phase=startup, trigger=timeout)"), while one
    // or two beside it cost it little and save their own boot afterwards (measured:
    // docs/reference/benchmarks.md#start-order). FLEETLAB_START_ORDER=all starts every member at
    // once (the former order), gateway-first no node host before the gateway answers.
    const ctx = this.#context();
    const early: MemberContainer[] = [
      new ModelContainer(ctx),
      ...(spec.git.enabled ? [new GitContainer(ctx)] : []),
      ...mcpContainers(spec).map((m) => new McpContainer(ctx, m)),
      ...tappedAliases(spec).map((n) => new TapContainer(ctx, n)),
      new GatewayContainer(ctx),
    ];
    const nodes: MemberContainer[] = nodeAliases(spec).map((n) => new NodeHostContainer(ctx, n));
    const beside = nodesBesideGateway(this.#startOrder ?? startOrder(), nodes.length);
    const recipes = [...early, ...nodes];
    this.#stillWanted();
    const begin = (rs: MemberContainer[]) => {
      const starts = rs.map((r) => r.startMember().then((m) => void this.members.set(m.alias, m)));
      for (const r of rs) void this.#creation(r.running);
      for (const p of starts) p.catch(() => {}); // reported through allOf (a step may fail before it awaits them)
      return starts;
    };
    // Fail at the first failure, but only once every container started so far exists, so that
    // down() finds and removes them all (the waits still running end when their container goes).
    const allOf = (rs: MemberContainer[], ps: Promise<unknown>[]) =>
      Promise.all(ps).catch(async (err: unknown) => {
        await Promise.allSettled(rs.map((r) => r.running));
        throw err;
      });
    const names = (rs: MemberContainer[]) => rs.map((r) => r.alias).join(", ");
    const first = [...early, ...nodes.slice(0, beside)];
    const starts = begin(first);
    await step(`containers started (${names(first)})`, () => allOf(first, first.map((r) => r.running)));
    const healthz = early.filter((r) => r.kind !== "gateway");
    const loadAtStart = Date.now();
    await step(`gateway /readyz${healthz.length ? `, ${names(healthz)} /healthz` : ""}`, () => allOf(first, starts.slice(0, early.length))).catch((e: unknown) => {
      throw this.#readyBlame(found ? this.#restoreBroke(found, "bringing the gateway and node hosts up", e) : e, beside, loadAtStart);
    });
    if (nodes.length) {
      this.#stillWanted();
      const later = nodes.slice(beside);
      const nodeStarts = [...starts.slice(early.length), ...begin(later)];
      const said = later.length ? `node hosts ${beside ? `(${names(nodes.slice(0, beside))} started with the gateway; ${names(later)} now)` : `started (${names(later)})`}` : `node hosts ready (${names(nodes)})`;
      await step(said, () => allOf(recipes, nodeStarts)).catch((e: unknown) => {
        throw found ? this.#restoreBroke(found, "bringing the node hosts up", e) : e;
      });
    }
  }

  /** The lab's operator connected to the gateway (known to restored gateway state, else approved through the gateway's own CLI). */
  async #operator(): Promise<void> {
    const restored = !!this.#restoring;
    this.operator = await step(`operator connected (${restored ? "known to the restored gateway state, else " : ""}approved by the gateway's own CLI)`, () =>
      LabOperator.connect(this.#operatorHost(), OPERATOR_DIR, path.join(this.dir, "transcripts", "operator.jsonl")).catch((e: unknown) => {
        throw openclawFailure("the gateway did not admit the lab's operator", e);
      }),
    );
    if (restored && this.operator.approvedByCli) info(`the restored gateway state did not know the lab's operator: approved it through the gateway's CLI`);
  }

  /**
   * Node hosts on paired state restored from a snapshot connect as paired devices: true when
   * they did. When a node asked for pairing, or never came, the restore did not hold: the
   * snapshot goes (the next lab takes a new one) and this returns false, so the lab pairs from
   * scratch (requests still pending are approved, a paused node restarted). A node host that
   * exited on restored state cannot be paired here: the lab could not tell (unknown).
   */
  async #restore(found: Snapshot): Promise<boolean> {
    const aliases = nodeAliases(this.spec);
    const tPair = performance.now();
    try {
      await step(`${aliases.join(", ")} connecting as paired devices (state restored from snapshot ${found.key.slice(0, 8)})`, () => this.#approveNodes(true, RESTORED_PAIRING_MS));
      info(`restored paired state from snapshot ${found.key.slice(0, 8)} (gateway and ${this.spec.nodes.count} node host(s), taken ${found.meta.takenAt} by run ${found.meta.fromRun}; nodes connected as paired ${((performance.now() - tPair) / 1000).toFixed(1)} s after the operator)`);
      return true;
    } catch (err) {
      if (!(err instanceof NotPairedAfterRestore || err instanceof WaitTimeout)) throw this.#restoreBroke(found, "nodes connecting as paired", err);
      new SnapshotStore().remove(found.key);
      const why = `restore from snapshot ${found.key.slice(0, 8)} did not hold (${(err as Error).message.split("\n")[0]})`;
      info(`${why}: snapshot removed; pairing from scratch`);
      this.snapshot = { path: "fresh", key: found.key, seconds: this.snapshot?.seconds ?? 0, reason: why };
      return false;
    }
  }

  /**
   * The scripted fleet connected and paired (spec.scripted.paired): the nodes the (restored)
   * gateway state knows are admitted at once, the rest paired through the operator's approvals
   * (lab/topology/fleet.ts). A node refused or lost ends bring-up: pairing is OpenClaw's to get
   * right (a fail), unless a lab deadline ran out on a busy machine.
   */
  async #fleet(): Promise<void> {
    const aliases = scriptedAliases(this.spec);
    const t = performance.now();
    const r = await step(`connecting the scripted fleet (${aliases.length} nodes; those the gateway does not know paired through the operator's approvals)`, () =>
      connectAndPair(this.fleet, aliases, { timeoutMs: 120_000 + aliases.length * 500, onProgress: info }),
    );
    this.fleetUp = { count: aliases.length, admitted: r.counts.connected, paired: r.counts.paired, refused: r.counts.refused, lost: r.counts.lost, seconds: Math.round(performance.now() - t) / 1000 };
    this.timings.fleet = this.fleetUp.seconds;
    info(`scripted fleet up in ${this.fleetUp.seconds} s: ${r.counts.connected} known to the gateway, ${r.counts.paired} paired now, ${r.counts.refused} refused, ${r.counts.lost} lost`);
    const bad = r.nodes.filter((n) => n.end === "refused" || n.end === "lost");
    if (bad.length) {
      const whys = [...new Set(bad.map((n) => n.why ?? n.end))].slice(0, 5);
      throw openclawFailure("pairing the scripted fleet", new Error(`${bad.length} of ${aliases.length} scripted nodes not paired: ${whys.join("; ")}`));
    }
    if (r.counts.paired && this.snapshot?.path === "restored") {
      // The restored state did not know every node (the fleet's keys in the cache are not the
      // ones it was taken with): it goes, as a restore that did not hold does, so the snapshot
      // phase can keep a new one (a snapshot already under the key is never overwritten).
      new SnapshotStore().remove(this.snapshot.key);
      this.snapshot = { path: "fresh", key: this.snapshot.key, seconds: this.snapshot.seconds };
    }
  }

  /** Pairing every node host from scratch: OpenClaw's to get right (a fail when it does not). */
  async #pairFromScratch(): Promise<void> {
    const spec = this.spec;
    await step(`pairing ${nodeAliases(spec).join(", ")} (${spec.nodes.devicePairing === "subnet" ? "device pairing auto-approved for the lab subnet" : "device and node pairing approved by the operator"})`, () =>
      this.#approveNodes(false, 120_000).catch((e: unknown) => {
        throw openclawFailure("pairing the node hosts", e);
      }),
    );
  }

  /** The operator approves every node host until each is connected and ready; a node host that exits meanwhile ends it at once. */
  #approveNodes(restored: boolean, timeoutMs: number): Promise<void> {
    return this.operator.approveNodes(nodeAliases(this.spec), { timeoutMs, host: this.#operatorHost(), watch: new ContainerWatch((a) => this.member(a).id, (a) => `node host ${a}`), restored });
  }

  /** The snapshot to restore, if there is one ("use" mode; the members start on its state); sets this.snapshot either way. */
  #findSnapshot(): Snapshot | undefined {
    const { mode, reason } = snapshotMode(this.#snapshotAsked);
    const identity = loadOrCreateDeviceIdentity(path.join(OPERATOR_DIR, "identity.json"));
    const key = snapshotKey(this.images.openclaw.id, snapshotShape(this.spec, identity));
    this.snapshot = { path: "fresh", key, seconds: 0, ...(mode === "fresh" ? { reason } : {}) };
    if (mode === "fresh") {
      info(`pairing from scratch (${reason}); no snapshot used`);
      return undefined;
    }
    const t = performance.now();
    const found = new SnapshotStore().find(key, [this.spec.gateway.alias, ...nodeAliases(this.spec)], info);
    if (!found) return undefined;
    this.#restoring = found;
    this.snapshot = { path: "restored", key, seconds: Math.round(performance.now() - t) / 1000 };
    this.timings.snapshot = this.snapshot.seconds;
    return found;
  }

  /** After pairing from scratch, keep the paired state of the gateway and every node host for later labs of this version and shape. */
  async #takeSnapshot(): Promise<void> {
    const key = this.snapshot!.key;
    const t = performance.now();
    const seconds = () => Math.round(performance.now() - t) / 1000;
    try {
      const aliases = [this.spec.gateway.alias, ...nodeAliases(this.spec)];
      const archives = new Map(await step(`snapshot of the paired state (${aliases.join(", ")})`, () => Promise.all(aliases.map(async (a) => [a, await captureState((cmd) => this.exec(a, cmd), docker().getContainer(this.member(a).id))] as const))));
      const identity = loadOrCreateDeviceIdentity(path.join(OPERATOR_DIR, "identity.json"));
      const kept = new SnapshotStore().write(
        { key, openclawVersion: this.spec.openclawVersion, imageId: this.images.openclaw.id, shape: snapshotShape(this.spec, identity), takenAt: new Date().toISOString(), fromRun: this.run.id, fromLab: this.id },
        archives,
      );
      this.snapshot = kept ? { path: "taken", key, seconds: seconds() } : { path: "fresh", key, seconds: seconds(), reason: "another lab wrote this snapshot meanwhile" };
      const kib = [...archives.values()].reduce((n, a) => n + a.data.length, 0) / 1024;
      if (kept) info(`took snapshot ${key.slice(0, 8)} of the paired state (${aliases.length} archives, ${kib.toFixed(0)} KiB, ${seconds()} s): later labs of openclaw@${this.spec.openclawVersion} in this shape restore it`);
    } catch (err) {
      this.snapshot = { path: "fresh", key, seconds: seconds(), reason: `taking a snapshot failed: ${(err as Error).message}` };
      info(`could not take a snapshot of the paired state: ${(err as Error).message}`);
    }
    this.timings.snapshot = this.snapshot.seconds;
  }

  /**
   * Who is to blame for a gateway that did not come up (its /readyz wait ran out, or it exited
   * while starting: a starved gateway exits by itself, code 78, its state lease heartbeat timed
   * out at startup). OpenClaw (fail) only when the machine was as the lab plans for: a readiness
   * deadline (paced) that passed, or an exit, while the machine was beyond the plan is the lab's
   * "could not tell" (unknown), naming the pace and load seen (lab/core/pace.ts); LabPool tries a
   * start the machine starved again on fresh state first (lab/run/admission.ts).
   */
  #readyBlame(err: unknown, beside: number, from: number): unknown {
    const gatewayFailed = err instanceof SystemUnderTestError && (err.cause instanceof WaitTimeout || err.cause instanceof StopWaiting) && err.message.includes("/readyz");
    if (!gatewayFailed) return err;
    // A start OpenClaw gave up (exit 78) within the plan is its own failure (LabPool tries it again
    // first when the machine was busier than the lab itself makes it: lab/run/admission.ts).
    const busy = machineBusyIn(err) ?? monitor().busierThanPlanned(from, Date.now());
    if (!busy) return err;
    const e = new LabInfraError(`the lab could not tell whether OpenClaw was slow: ${err.message}; the machine was busier than the lab planned for (${beside} node host(s) starting beside the gateway): ${busy}`, { cause: err });
    return Object.assign(e, { machineBusy: busy });
  }

  /** A restored lab that broke before it was ready: the snapshot goes (the next lab pairs from scratch), and the lab could not tell whether OpenClaw or the restore was at fault. */
  #restoreBroke(found: Snapshot, what: string, err: unknown): unknown {
    if (!(err instanceof SystemUnderTestError || err instanceof StopWaiting || err instanceof WaitTimeout)) return err;
    new SnapshotStore().remove(found.key);
    return new LabInfraError(`${what} failed on paired state restored from snapshot ${found.key.slice(0, 8)} (removed: the next lab pairs from scratch; FLEETLAB_SNAPSHOT=0 pairs from scratch everywhere): ${(err as Error).message}`, { cause: err });
  }

  /** What member recipes need to know about this lab. */
  #context(): LabContext {
    return {
      id: this.id,
      runId: this.run.id,
      spec: this.spec,
      images: this.images,
      capabilities: this.capabilities,
      network: this.network,
      keepLogs: (alias, id) => this.#saveLogs(alias, id),
      stateArchive: this.#restoring ? (alias) => this.#restoring?.archive(alias) : undefined,
    };
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

  /**
   * After a gateway restart the operator's socket is closed and does not reconnect by itself:
   * re-read the gateway's address, wait for /readyz, and connect the same client again with the
   * lab's approved identity (its transcript goes on). Returns how long each took; zeros when
   * the operator is still connected.
   */
  async reconnectOperator(opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<{ readyMs: number; connectMs: number }> {
    const timeoutMs = opts.timeoutMs ?? 90_000;
    if (this.operator.client.connected) return { readyMs: 0, connectMs: 0 };
    await this.operator.client.close().catch(() => {});
    const gw = await this.refresh(this.spec.gateway.alias);
    const readyMs = await step("waiting for the restarted gateway's /readyz, to reconnect the operator", () =>
      gatewayReadiness(this.network.name, this.spec).waitOn(docker().getContainer(gw.id), { timeoutMs, signal: opts.signal }),
    );
    opts.signal?.throwIfAborted();
    const t0 = performance.now();
    await this.operator.reconnect({ gatewayUrl: this.gatewayUrl }, { timeoutMs });
    return { readyMs, connectMs: Math.round(performance.now() - t0) };
  }

  /** Graceful restart of a member on the same container and state volume. */
  async restart(alias: string, timeoutSeconds = 5): Promise<void> {
    await docker().getContainer(this.member(alias).id).restart({ t: timeoutSeconds });
  }

  /** What is wrong with the lab now (empty when healthy): gateway ready, every node connected. */
  async health(): Promise<string[]> {
    const problems: string[] = [];
    try {
      const r = await fetch(gatewayReadyUrl(this), { signal: AbortSignal.timeout(deadline(3000)) }); // paced
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

  /** The node hosts node.list has said have their worker bundle installed, at a residue() that found none. */
  #bundlesReported = new Set<string>();

  /**
   * What a scenario left on a shared lab that the next one would trip on, after `timeoutMs`
   * (reference ms, at the machine's pace) for it to clear; [] when nothing. A shared lab's
   * hygiene once a scenario has ended (every turn it started is over):
   * - a node host still holding a worker slot (each comes back within moments of its turn's end).
   *   Seen: after a gateway restart node-1 kept one of its two slots for 11 minutes, and the next
   *   three scenarios on that lab waited for it and failed (run 20261204-052751-cda8871b3d3c583c);
   * - a node host whose installed worker bundle node.list reported at an earlier residue() and no
   *   longer does. Seen: after a gateway restart (R-gateway-restart-bundles, registered) node.list
   *   never again gave node-1 its workerBundle, through new turns on it, and every later scenario
   *   waiting for it read FAIL (make repro gateway-restart, run 20261204-120138-8c9e272b8a742aa6).
   */
  async residue(timeoutMs = 45_000): Promise<string[]> {
    let left: string[] = [];
    let installed: string[] = [];
    const probe = async (): Promise<boolean> => {
      ({ left, installed } = leftBehind(await this.operator.listNodes(), this.nodes.map((m) => m.alias), this.#bundlesReported));
      return left.length === 0;
    };
    try {
      await waitFor("every node host to offer all its worker slots and its installed worker bundle", probe, { timeoutMs, intervalMs: 500 });
    } catch (err) {
      if (!(err instanceof WaitTimeout)) throw err;
    }
    if (!left.length) for (const a of installed) this.#bundlesReported.add(a);
    return left;
  }

  /** Run a command inside a member's container. */
  async exec(alias: string, cmd: string[], opts: { user?: string } = {}): Promise<ExecResult> {
    const r = await this.member(alias).container.exec(cmd, { user: opts.user });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  }

  /**
   * Save every container's logs, then remove containers, network and volumes. Idempotent: a
   * second call (the interrupt handler and a failing bring-up both call it) waits for the
   * same teardown instead of returning at once, so nobody exits while it runs.
   */
  down(): Promise<void> {
    this.#downing ??= this.#down();
    return this.#downing;
  }

  /** The phase "down" (the lab's clean-up), then this lab's row of run.json, whatever happened. */
  async #down(): Promise<void> {
    const t0 = performance.now();
    try {
      await this.phases.run("down", () => this.#teardown());
    } finally {
      await this.#containerEvents?.stop();
      this.#time("down", t0);
      this.#record();
      this.#unregister();
    }
  }

  /** Undo what scenarios left, save logs and transcripts, remove containers, network and volumes. */
  async #teardown(): Promise<void> {
    // A Ctrl-C can come while bring-up is creating containers: wait until every creation
    // under way has ended (bring-up starts no new one once down() began, see #stillWanted),
    // so the listing below sees them all.
    await Promise.allSettled([...this.#creating]);
    // The teardown stack first: a fault is healed (and its helper removed) before its target goes.
    const undone = await this.teardown.drain();
    for (const f of undone.failed) info(`could not undo '${f.name}': ${f.error}`);
    await this.operator?.close().catch(() => {});
    await Promise.all([...this.#scripted.values()].map((n) => n.closeAll()));
    // A tapped scripted node's transcript is a file of its own; the direct ones (a fleet) share one, in time order.
    const direct: TranscriptEntry[] = [];
    for (const [alias, n] of this.#scripted) {
      if (this.#scriptedNames.tapped.has(alias)) {
        if (n.transcript().length) n.saveTranscript(path.join(this.dir, "transcripts", `${alias}.jsonl`));
      } else direct.push(...n.transcript());
    }
    if (direct.length) writeTranscript(path.join(this.dir, "transcripts", `${this.spec.scripted.prefix}-fleet.jsonl`), direct.sort((a, b) => a.t - b.t || a.n - b.n));
    if (this.#scripted.size && !this.spec.scripted.paired) fs.rmSync(this.#scriptedDir, { recursive: true, force: true });
    if (this.spec.tap.enabled) {
      await Promise.all(
        tappedAliases(this.spec)
          .filter((n) => this.members.has(tapAlias(n)))
          .map((n) =>
            this.tap(n)
              .saveTranscript(path.join(this.dir, "transcripts", `tap-${n}.jsonl`))
              .catch((e) => info(`could not save the tap transcript of ${n}: ${(e as Error).message}`)),
          ),
      );
    }
    const d = docker();
    const byLab = { all: true, filters: { label: [`fleetlab.lab=${this.id}`] } };
    const all = await d.listContainers(byLab);
    // A fault helper left over (healing failed) goes without its logs; the rest are saved.
    const helpers = all.filter((c) => c.Labels["fleetlab.kind"] === "fault-helper");
    await Promise.all(helpers.map((c) => d.getContainer(c.Id).remove({ force: true }).catch(() => {})));
    const mine = all.filter((c) => !helpers.includes(c));
    await Promise.all(
      mine.map(async (c) => {
        const alias = c.Labels["fleetlab.alias"] ?? c.Names[0]?.replace(/^\//, "") ?? c.Id.slice(0, 12);
        await this.#saveLogs(alias, c.Id).catch((e) => info(`could not save logs of ${alias}: ${(e as Error).message}`));
        // The tap prints every record it keeps: its log carries the same credentials as its transcript.
        if (c.Labels["fleetlab.kind"] === "tap") await redactTapLog(this, [".stdout.log", ".stderr.log"].map((x) => path.join(this.dir, "logs", alias + x))).catch((e) => info(`could not redact the logs of ${alias}: ${(e as Error).message}`));
      }),
    );
    // What each container used of the CPU, by kind, before it goes (lab/core/cpu-share.ts).
    for (const c of mine) {
      const s = cpuSecondsOf(c.Id);
      const kind = c.Labels[LABEL_KIND] ?? "other";
      if (s !== undefined) this.#cpuS[kind] = Math.round(((this.#cpuS[kind] ?? 0) + s) * 10) / 10;
    }
    // Graceful stop of OpenClaw is slow (seconds) and gains nothing at teardown: remove at once.
    await Promise.all(mine.map((c) => d.getContainer(c.Id).remove({ force: true }).catch(() => {})));
    // Whatever the engine still shows for this lab (a restart racing the removal) goes too.
    const seen = [...all];
    for (let round = 0; round < 3; round++) {
      const late = await d.listContainers(byLab);
      if (!late.length) break;
      seen.push(...late);
      await Promise.all(late.map((c) => d.getContainer(c.Id).remove({ force: true }).catch(() => {})));
    }
    // containers.jsonl ends with their removal.
    await this.#containerEvents?.stop({ destroyed: [...new Set(seen.map((c) => c.Id))] });
    // A network the engine will not remove (a stale endpoint) is named with its fix; the run goes on.
    const names = seen.flatMap((c) => c.Names.map((n) => n.replace(/^\//, "")));
    for (const n of await d.listNetworks({ filters: { label: [`fleetlab.lab=${this.id}`] } })) {
      await leaveLabNetwork(n.Id); // a runner container leaves first (no-op otherwise)
      const stuck = await removeNetwork(d.getNetwork(n.Id), n.Name, { alsoDisconnect: names });
      if (stuck) info(`fleetlab: ${stuck}`);
    }
    const vols = (await d.listVolumes({ filters: { label: [`fleetlab.lab=${this.id}`] } })).Volumes ?? [];
    await Promise.all(vols.map((v) => d.getVolume(v.Name).remove().catch((e: Error) => info(`fleetlab: volume ${v.Name} could not be removed (${e.message.replace(/\s+/g, " ")}); 'make prune' removes it later`))));
  }

  /** Bring-up stops at its next step once down() has begun or the process was interrupted (a
   * lab asked for after a Ctrl-C, e.g. by the next scenario, creates nothing). */
  #stillWanted(): void {
    if (this.#downing || interrupted()) throw new Error(`lab ${this.id} is being taken down (interrupted during bring-up)`);
  }

  /** Track a creation under way until it settles (see down()). */
  #creation<T>(p: Promise<T>): Promise<T> {
    this.#creating.add(p);
    const forget = () => void this.#creating.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** The methods and events the gateway advertised to the lab's operator (its hello-ok), once connected. */
  get protocol(): Protocol | undefined {
    const f = this.operator?.client.hello?.features;
    return f ? { methods: [...f.methods], events: [...f.events] } : undefined;
  }

  /** Lab resources still present (empty after a complete down()). */
  async leftovers(): Promise<string[]> {
    return leftovers({ lab: this.id });
  }

  /** This lab's part of run.json: topology, image ids, members, network, timings. */
  #record(): void {
    const row: LabRow = {
      evidence: path.relative(this.run.dir, this.dir),
      spec: this.spec,
      network: this.network,
      images: this.images && Object.fromEntries(Object.values(this.images).map((i) => [i.name, { tag: i.tag, id: i.id, cached: i.cached, seconds: i.seconds }])),
      members: [...this.members.values()].map((m) => ({ alias: m.alias, kind: m.kind, container: m.id.slice(0, 12), ip: m.ip, volume: m.volume })),
      timings: { ...this.timings },
      phases: [...this.phases.rows],
      capabilities: this.capabilities,
      protocol: this.protocol,
      snapshot: this.snapshot,
      ...(this.fleetUp ? { fleet: this.fleetUp } : {}),
      ...(Object.keys(this.#cpuS).length ? { cpuS: { ...this.#cpuS } } : {}),
    };
    this.run.update((r) => void ((r.labs ??= {})[this.id] = row));
  }

  /** A container's whole stdout and stderr into logs/<alias>.{stdout,stderr}.log. */
  async #saveLogs(alias: string, containerId: string): Promise<void> {
    const dir = path.join(this.dir, "logs");
    fs.mkdirSync(dir, { recursive: true });
    await saveContainerLogs(containerId, path.join(dir, `${alias}.stdout.log`), path.join(dir, `${alias}.stderr.log`));
  }

  #time(name: string, t0: number): void {
    this.timings[name] = Math.round(performance.now() - t0) / 1000;
  }
}
