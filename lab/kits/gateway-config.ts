// The gateway container's configuration as an operator changes it on the host: a file replaced
// as an editor would (the live config, the host tool policy file, the approvals document), and
// what the gateway's config watcher made of the change, read from the gateway's log
// (dist/server-reload-managed-*.mjs logs one outcome per change: "config hot reload applied
// (<paths>)", "config reload skipped (invalid config): <why>" or "config reload failed: <why>";
// docs/gateway/configuration/hot-reload.md).
import { GATEWAY_CONFIG_PATH, TOOL_POLICY_FILE, toolPolicyBytes } from "../members/gateway.ts";
import type { Lab } from "../topology/lab.ts";
import { LabInfraError } from "../definitions/verdict.ts";
import { WaitTimeout, waitFor } from "../core/wait.ts";
import { memberLog } from "./logs.ts";

/** How long the watcher gets to log its outcome of a change (it reacts within a second or two). */
export const RELOAD_WAIT_MS = 20_000;

/** Replaces a file inside the gateway container atomically (a temp file beside it, then rename), as an editor would. */
export async function writeGatewayFile(lab: Lab, target: string, content: string, user: "root" | "lab" = "lab"): Promise<void> {
  const b64 = Buffer.from(content).toString("base64");
  const tmp = `${target}.fleetlab-edit`;
  const r = await lab.exec(lab.gateway.alias, ["sh", "-c", `printf '%s' '${b64}' | base64 -d > '${tmp}' && mv '${tmp}' '${target}'`], { user });
  // The lab's own step (a shell in the container), not OpenClaw's behaviour: unknown if it fails.
  if (r.exitCode !== 0) throw new LabInfraError(`writing ${target} in the gateway container failed (exit ${r.exitCode}): ${r.stderr}`);
}

/** Edits the gateway's live config file (as the gateway's user). */
export async function editGatewayConfig(lab: Lab, edit: (config: Record<string, unknown>) => void): Promise<void> {
  const r = await lab.exec(lab.gateway.alias, ["cat", GATEWAY_CONFIG_PATH]);
  if (r.exitCode !== 0) throw new LabInfraError(`reading ${GATEWAY_CONFIG_PATH} in the gateway container failed (exit ${r.exitCode}): ${r.stderr}`);
  const config = JSON.parse(r.stdout) as Record<string, unknown>;
  edit(config);
  await writeGatewayFile(lab, GATEWAY_CONFIG_PATH, `${JSON.stringify(config, null, 2)}\n`);
}

/** Replaces the host tool policy file (spec `gateway.toolPolicy`: root-owned, outside the gateway's state). */
export async function writeToolPolicy(lab: Lab, policy: Record<string, unknown>): Promise<void> {
  await writeGatewayFile(lab, TOOL_POLICY_FILE, toolPolicyBytes(policy), "root");
}

/** The approvals document (exec approvals and MCP tool grants) replaced with `openclaw approvals set`. */
export async function setApprovalsDocument(lab: Lab, doc: unknown): Promise<{ exitCode: number; output: string }> {
  const tmp = "/tmp/fleetlab-approvals.json";
  await writeGatewayFile(lab, tmp, JSON.stringify(doc));
  const r = await lab.exec(lab.gateway.alias, ["openclaw", "approvals", "set", "--file", tmp]);
  return { exitCode: r.exitCode, output: `${r.stdout}${r.stderr}`.trim().split("\n").slice(-3).join("\n") };
}

export interface GatewayLogLine {
  /** The engine's timestamp (epoch ms). */
  t: number;
  /** The line without its colours. */
  line: string;
}

/** The gateway container's log lines written at or after `sinceMs` (every start), oldest first, without colours. */
export async function gatewayLog(lab: Lab, sinceMs = 0): Promise<GatewayLogLine[]> {
  return (await memberLog(lab, lab.gateway.alias, sinceMs))
    .map((l) => ({ t: l.at, line: l.line.replace(/\x1b\[[0-9;]*m/g, "") })) // eslint-disable-line no-control-regex
    .sort((a, b) => a.t - b.t);
}

export type Reload = { verdict: "applied" | "refused" | "failed" | "not seen"; detail: string; lines: string[] };

const DECISIVE = /config hot reload applied \(([^)]*)\)|config reload skipped \(([^)]*)\):? ?(.*)|config reload failed: (.*)/;

/** The watcher's outcome in `lines` (the first decisive line), or undefined when there is none yet. */
export function reloadVerdict(lines: string[]): Omit<Reload, "lines"> | undefined {
  for (const line of lines) {
    const m = DECISIVE.exec(line);
    if (!m) continue;
    if (m[1] !== undefined) return { verdict: "applied", detail: m[1].split(", ").sort().join(", ") };
    if (m[2] !== undefined) return { verdict: "refused", detail: `${m[2]}: ${m[3] ?? ""}`.trim() };
    return { verdict: "failed", detail: m[4] ?? "" };
  }
  return undefined;
}

/**
 * The config watcher's verdict on the first change after `since` (epoch ms): applied, refused
 * (skipped) or failed. A change detected ("config change detected; evaluating reload") with no
 * outcome, or nothing at all, within `timeoutMs` (RELOAD_WAIT_MS) is recorded as "not seen".
 */
export async function waitReload(lab: Lab, since: number, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Reload> {
  const timeoutMs = opts.timeoutMs ?? RELOAD_WAIT_MS;
  let lines: string[] = [];
  const hit = await waitFor(
    "the gateway's config watcher to react to the edit",
    async () => {
      lines = (await gatewayLog(lab, since)).filter((l) => /config|reload/i.test(l.line)).map((l) => l.line);
      return reloadVerdict(lines);
    },
    // expectation: a time-out is the verdict "not seen": the window is fixed, not paced
    { timeoutMs, bound: "expectation", intervalMs: 250, signal: opts.signal },
  ).catch((err: unknown) => {
    if (err instanceof WaitTimeout) return undefined;
    throw err;
  });
  if (!hit) return { verdict: "not seen", detail: `no config watcher outcome within ${timeoutMs / 1000} s${lines.some((l) => l.includes("config change detected")) ? " (change detected)" : ""}`, lines };
  return { ...hit, lines };
}
