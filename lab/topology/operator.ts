// The lab's operator: a persistent Ed25519 device identity that connects from the host to
// the gateway container, approved the way a real admin would (the gateway's own CLI inside
// the gateway container), which then approves node hosts through operator methods.
import path from "node:path";
import { GatewayClient, GatewayError } from "../clients/gateway.ts";
import { loadOrCreateDeviceIdentity } from "../clients/device-identity.ts";
import * as op from "../clients/operator.ts";
import { info, stepStatus } from "../core/log.ts";
import { StopWaiting, waitFor } from "../core/wait.ts";

export interface OperatorHost {
  gatewayUrl: string;
  token: string;
  /** Run the gateway's CLI (`openclaw ...`) where the gateway runs. */
  gatewayCli(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Last resort for a node host that stays paused after its device was approved. */
  restartNode?(name: string): Promise<void>;
}

/** A node host a scenario can place work on. */
export function isReadyNode(n: op.NodeEntry): boolean {
  return n.connected && n.paired && n.approvalState === "approved" && n.sessionHost === true && (n.workerSlots?.total ?? 0) > 0;
}

/**
 * The node hosts' containers while they are paired (ContainerWatch in lab/members/member.ts):
 * check() throws StopWaiting when one exited or restarted behind the lab's back.
 */
export interface NodeWatch {
  check(names: string[]): Promise<void>;
  /** The lab restarted this node itself (a paused node host, below). */
  restarted(name: string): void;
}

/**
 * A node host restored as already paired (lab/topology/snapshot.ts) asked for pairing after all:
 * the restore did not hold. Nothing was approved; the lab pairs from scratch instead.
 */
export class NotPairedAfterRestore extends StopWaiting {
  constructor(message: string) {
    super(message);
    this.name = "NotPairedAfterRestore";
  }
}

export class LabOperator {
  /** Whether this operator's first connect needed the gateway's CLI to approve it (false: the gateway already knew its device). */
  approvedByCli = false;

  readonly client: GatewayClient;
  readonly transcriptFile: string;
  private host: OperatorHost;
  private readonly identityDir: string;
  private constructor(
    client: GatewayClient,
    transcriptFile: string,
    host: OperatorHost,
    identityDir: string,
  ) {
    this.client = client;
    this.transcriptFile = transcriptFile;
    this.host = host;
    this.identityDir = identityDir;
  }

  /**
   * Connect the same client again (after a gateway restart its socket is gone and it does not
   * reconnect by itself), with the same identity and scopes: its transcript goes on, and
   * whoever holds `client` keeps a live one.
   */
  async reconnect(host: Partial<OperatorHost> = {}, opts: { timeoutMs?: number } = {}): Promise<void> {
    this.host = { ...this.host, ...host };
    await this.client.close().catch(() => {});
    await LabOperator.#connect(this.client, this.host, this.identityDir, opts.timeoutMs);
  }

  static async connect(host: OperatorHost, identityDir: string, transcriptFile: string): Promise<LabOperator> {
    const client = new GatewayClient({ name: "operator" });
    const approvedByCli = await LabOperator.#connect(client, host, identityDir);
    const operator = new LabOperator(client, transcriptFile, host, identityDir);
    operator.approvedByCli = approvedByCli;
    return operator;
  }

  /** Connect as the lab's operator device; a first connect is approved with the gateway's own CLI (then returns true). */
  static async #connect(client: GatewayClient, host: OperatorHost, identityDir: string, timeoutMs = 30_000): Promise<boolean> {
    const identity = loadOrCreateDeviceIdentity(path.join(identityDir, "identity.json"));
    const opts = {
      token: host.token,
      identity,
      role: "operator",
      scopes: [...op.OPERATOR_ADMIN_SCOPES],
      caps: ["approvals", "plugin-approvals"],
      timeoutMs,
    };
    try {
      stepStatus("connecting");
      await client.connect(host.gatewayUrl, opts);
      return false;
    } catch (err) {
      if (!(err instanceof GatewayError) || !err.isPairingRequired || !err.requestId) throw err;
      stepStatus(`pairing required: 'openclaw devices approve ${err.requestId}' in the gateway`);
      const r = await host.gatewayCli(["devices", "approve", err.requestId]);
      if (r.exitCode !== 0) throw new Error(`'openclaw devices approve ${err.requestId}' in the gateway failed (exit ${r.exitCode}): ${r.stderr || r.stdout}`);
      stepStatus("approved, connecting again");
      await client.connect(host.gatewayUrl, opts);
      return true;
    }
  }

  listNodes(): Promise<op.NodeEntry[]> {
    return op.listNodes(this.client);
  }

  /** One gateway-local agent turn; returns the assistant's final text. */
  async agentTurn(message: string, opts: op.AgentTurnOptions = {}): Promise<string> {
    return (await op.agentTurn(this.client, message, opts)).text;
  }

  /**
   * Approve the named node hosts' device pairing and node pairing, then wait until each is
   * approved, paired, connected and a session host with worker slots in node.list. Where each
   * node is goes to the progress line of the step this runs in. With `watch`, a node host that
   * exits or restarts on its own ends the wait at once, with its exit code and last log lines.
   * With `restored` (state from a snapshot, lab/topology/snapshot.ts) the nodes must come as the
   * paired devices they are: a pairing request from one of them approves nothing and throws
   * NotPairedAfterRestore at once, so the lab can pair from scratch instead.
   */
  async approveNodes(names: string[], opts: { timeoutMs: number; pausedAfterMs?: number; host?: OperatorHost; watch?: NodeWatch; restored?: boolean }): Promise<void> {
    const wanted = new Set(names);
    const deviceApprovedAt = new Map<string, number>();
    const restarted = new Set<string>();
    const phase = new Map<string, string>(names.map((n) => [n, "waiting for its pairing request"]));
    const showPhases = () => {
      const ready = names.filter((n) => phase.get(n) === "ready");
      const waiting = names.filter((n) => phase.get(n) !== "ready").map((n) => `${n} ${phase.get(n)}`);
      stepStatus([...waiting, ...(ready.length ? [`ready: ${ready.join(", ")}`] : [])].join("; "));
    };
    showPhases();
    await waitFor(
      `node hosts ${names.join(", ")} approved and connected`,
      async () => {
        // A node host that exited or restarted (not by the lab) will not pair: end the wait now, quoting it.
        await opts.watch?.check(names);
        const devices = await op.listDevicePairing(this.client);
        if (opts.restored) {
          const pairing = await op.listNodePairing(this.client);
          const asking = [...devices.pending.map((p) => ["device", p.displayName]), ...pairing.pending.map((p) => ["node", p.displayName])].filter(([, n]) => n && wanted.has(n));
          if (asking.length) throw new NotPairedAfterRestore(`restored as paired, yet asked for pairing: ${asking.map(([kind, n]) => `${n} (${kind} pairing)`).join(", ")}`);
        }
        for (const p of devices.pending) {
          if (p.displayName && wanted.has(p.displayName)) {
            await op.approveDevice(this.client, p.requestId);
            deviceApprovedAt.set(p.displayName, Date.now());
            phase.set(p.displayName, "device approved, waiting for it to ask for node pairing");
          }
        }
        const pairing = await op.listNodePairing(this.client);
        for (const p of pairing.pending) {
          if (p.displayName && wanted.has(p.displayName)) {
            await op.approveNode(this.client, p.requestId);
            phase.set(p.displayName, "node pairing approved, waiting for it to connect");
          }
        }
        const nodes = await this.listNodes();
        // Ready = what a scenario can use: approved, paired, connected and offering session
        // hosting with its worker slots published (the inventory arrives just after approval).
        const ready = names.filter((n) => nodes.some((x) => x.displayName === n && isReadyNode(x)));
        for (const n of names) {
          const x = nodes.find((e) => e.displayName === n);
          if (ready.includes(n)) phase.set(n, "ready");
          else if (x?.connected && x.approvalState === "approved") phase.set(n, "connected, waiting for its worker slots");
        }
        showPhases();
        if (ready.length === names.length) return true;
        // A node host whose device was approved can stay "reconnect paused" (seen with
        // 2026.9.6); restarting it on the same state volume resumes it, as an admin would.
        for (const [name, at] of deviceApprovedAt) {
          if (!ready.includes(name) && !restarted.has(name) && Date.now() - at > (opts.pausedAfterMs ?? 1_500) && opts.host?.restartNode) {
            restarted.add(name);
            phase.set(name, "paused after device approval: restarting it");
            showPhases();
            info(`node ${name} still not connected ${((Date.now() - at) / 1000).toFixed(0)} s after device approval: restarting it`);
            await opts.host.restartNode(name);
            opts.watch?.restarted(name);
            phase.set(name, "restarted, waiting for it to ask for node pairing");
          }
        }
        return undefined;
      },
      { timeoutMs: opts.timeoutMs, intervalMs: 300 },
    );
  }

  async close(): Promise<void> {
    // Close first, so the last connection's close (code, reason) is in the saved transcript.
    await this.client.close().catch(() => {});
    this.client.saveTranscript(this.transcriptFile);
  }
}
