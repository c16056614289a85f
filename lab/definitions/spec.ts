// The one description of what runs. Defaults give the standard lab; every override is
// validated before any container starts, and an error names the field, the value and a fix.
import { z } from "zod";
import { LabError } from "../core/log.ts";
import { environment, setting } from "../core/settings.ts";
import { BUILD_LABEL, resolveBuild } from "./build.ts";
import { CACHE } from "../core/paths.ts";

/** The OpenClaw version a run uses unless told otherwise (OPENCLAW_VERSION=...); the nightly reads it from this line. */
export const DEFAULT_OPENCLAW_VERSION = "2026.9.6";

/** OpenClaw's default gateway.auth.rateLimit.maxAttempts (docs/gateway/security/rate-limiting.md): failures per client IP and scope in 60 s before a 5 min lockout. */
export const OPENCLAW_AUTH_MAX_ATTEMPTS = 10;
/** The most scripted nodes one lab holds (each a WebSocket and a key in the lab's process). */
export const MAX_SCRIPTED = 1000;
const name = z.string().regex(/^[a-z][a-z0-9-]{0,30}$/, "must be lower-case letters, digits and dashes, starting with a letter");

export const TopologySpec = z
  .object({
    openclawVersion: z
      .string()
      .refine((v) => /^\d+\.\d+\.\d+([-.][0-9A-Za-z.-]+)?$/.test(v) || BUILD_LABEL.test(v), "must be an exact version such as 2026.9.6 (no ranges or tags), or a build's name <version>+<hash> (OPENCLAW_PACKAGE makes one)")
      .default(DEFAULT_OPENCLAW_VERSION),
    /**
     * Your own build under test (OPENCLAW_PACKAGE, lab/definitions/build.ts): where it came from
     * and the tarball's sha256; openclawVersion is then its name, `<version>+<hash>`.
     */
    openclawBuild: z.object({ source: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict().optional(),
    gateway: z
      .object({
        alias: name.default("gateway"),
        port: z.number().int().min(1024).max(65535).default(18789),
        token: z.string().min(16, "must be at least 16 characters").default("fleetlab-gateway-token-0001"),
        /**
         * OpenClaw's tool policy (the `tools` section: `allow`, `alsoAllow`, `deny`, ...) kept in
         * a file of its own, the host tool policy: written to TOOL_POLICY_FILE
         * (lab/members/gateway.ts), a root-owned directory outside the gateway's state and the
         * agent's workspace that the gateway admits as an include root (OPENCLAW_INCLUDE_ROOTS),
         * and included by the config as `tools.$include`. It stays on the container's filesystem
         * across restarts, so a scenario can edit it while the gateway runs or before it starts
         * again. Unset (the default): no policy file.
         */
        toolPolicy: z.record(z.string(), z.unknown()).optional(),
        /**
         * OpenClaw's failed-auth limiter, gateway.auth.rateLimit (docs/gateway/security/rate-limiting.md;
         * unset: OpenClaw's defaults, 10 failures / 60 s, then 5 min locked out per client IP and
         * credential scope). A fleet of scripted nodes connects from one address, the lab's, as a
         * fleet behind one NAT does: the fleet scenarios that are not about enrolment raise
         * maxAttempts the way such a fleet's operator would.
         */
        authRateLimit: z
          .object({ maxAttempts: z.number().int().min(1).optional(), windowMs: z.number().int().min(1).optional(), lockoutMs: z.number().int().min(0).optional() })
          .strict()
          .optional(),
      })
      .strict()
      .default({ alias: "gateway", port: 18789, token: "fleetlab-gateway-token-0001" }),
    nodes: z
      .object({
        count: z.number().int().min(0).max(8, "must be at most 8 (each node host needs ~0.6-0.8 GiB)").default(2),
        /**
         * Worker slots of each node host (its nodeHost.workerRuns.capacity): one number for every
         * node, or one per node in alias order (`[1, 2]`: node-1 has 1, node-2 has 2; a node past
         * the list's end takes its last entry). node.list shows it as workerSlots.total.
         */
        capacity: z.union([z.number().int().min(1).max(8), z.array(z.number().int().min(1).max(8)).min(1).max(8)]).default(2),
        prefix: name.default("node"),
        /**
         * "operator": the operator approves each node's device pairing (device.pair.approve)
         * and node pairing (node.pair.approve), as an admin would. "subnet": the gateway
         * auto-approves device pairing from the lab subnet (autoApproveCidrs) and the operator
         * approves node pairing only; faster, because the pinned node host pauses after an
         * operator device approval until it is restarted.
         */
        devicePairing: z.enum(["operator", "subnet"]).default("operator"),
      })
      .strict()
      .default({ count: 2, capacity: 2, prefix: "node", devicePairing: "operator" }),
    /**
     * Scripted nodes (lab/clients/scripted-node.ts): node clients the scenario drives step by
     * step from the lab's own process. They cost a WebSocket and a key each, not a container, so
     * a lab holds hundreds (a fleet: lab/kits/fleet.ts). The first `tapped` of them connect
     * through a wire tap of their own (tap-<alias>, a container each), so their frames are in
     * the tap transcript like a real node host's; the rest connect to the gateway directly.
     * `tapped` defaults to all of them when there are at most 4, else none; tapped ones need
     * tap.enabled. `paired`: false (default): not paired at bring-up, a scenario pairs them
     * when it wants (lab/kits/pairing.ts); true: the lab pairs them all at bring-up through
     * the operator's approvals, and later labs of the same shape restore that from a snapshot.
     */
    scripted: z
      .object({
        count: z.number().int().min(0).max(MAX_SCRIPTED).default(0),
        prefix: name.default("scripted"),
        tapped: z.number().int().min(0).max(4).optional(),
        paired: z.boolean().default(false),
      })
      .strict()
      .default({ count: 0, prefix: "scripted", paired: false }),
    model: z
      .object({ alias: name.default("model"), port: z.number().int().min(1).max(65535).default(8080), script: name.default("default") })
      .strict()
      .default({ alias: "model", port: 8080, script: "default" }),
    git: z
      .object({ enabled: z.boolean().default(true), alias: name.default("git"), port: z.number().int().min(1).max(65535).default(8080) })
      .strict()
      .default({ enabled: true, alias: "git", port: 8080 }),
    tap: z
      .object({
        /**
         * A wire tap (docker/faultproxy) in front of the gateway for each node host: the node's
         * WebSocket, its workers' WebSockets and its HTTP (bundle download, transfers) all pass
         * it; every frame is recorded and wire faults are injected there.
         */
        enabled: z.boolean().default(true),
        controlPort: z.number().int().min(1).max(65535).default(9099),
      })
      .strict()
      .default({ enabled: true, controlPort: 9099 }),
    mcp: z
      .object({
        /** MCP tool servers, each in its own container, reached by the gateway at http://<name>:<port>/mcp. */
        servers: z
          .array(z.object({ name, catalog: name, port: z.number().int().min(1).max(65535).default(8080) }).strict())
          .max(6)
          .default([
            { name: "north", catalog: "north", port: 8080 },
            { name: "south", catalog: "south", port: 8080 },
          ]),
        /**
         * MCP servers a node host offers (nodeHost.mcp.servers on that node): each in its own
         * container, reached by the node only; the gateway calls them through the node
         * (node.invoke mcp.tools.call.v1) and the model sees `<name>_<tool>`.
         */
        nodeServers: z
          .array(z.object({ name, catalog: name, port: z.number().int().min(1).max(65535).default(8080), node: name }).strict())
          .max(4)
          .default([]),
        /**
         * Tool names the approval plugin parks for the operator, as the model sees them:
         * `<server>__<tool>` for gateway-side servers, `<server>_<tool>` for node-hosted ones;
         * `*` wildcards.
         */
        approvalTools: z.array(z.string().min(1)).default(["south__write_file"]),
      })
      .strict()
      .default({
        servers: [
          { name: "north", catalog: "north", port: 8080 },
          { name: "south", catalog: "south", port: 8080 },
        ],
        nodeServers: [],
        approvalTools: ["south__write_file"],
      }),
    seed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const build = BUILD_LABEL.exec(spec.openclawVersion);
    if (build && spec.openclawBuild && !spec.openclawBuild.sha256.startsWith(build[2]!)) {
      ctx.addIssue({ code: "custom", path: ["openclawBuild", "sha256"], message: `does not match the build's name ${spec.openclawVersion}` });
    }
    const nodes = Array.from({ length: spec.nodes.count }, (_, i) => `${spec.nodes.prefix}-${i + 1}`);
    const tapped = tappedScriptedCount(spec);
    if (spec.scripted.tapped !== undefined && spec.scripted.tapped > spec.scripted.count) {
      ctx.addIssue({ code: "custom", path: ["scripted", "tapped"], message: `more than scripted.count (${spec.scripted.count}): give at most that many` });
    }
    const maxAttempts = spec.gateway.authRateLimit?.maxAttempts ?? OPENCLAW_AUTH_MAX_ATTEMPTS;
    if (spec.scripted.paired && spec.scripted.count > maxAttempts) {
      ctx.addIssue({
        code: "custom",
        path: ["gateway", "authRateLimit", "maxAttempts"],
        message: `${spec.scripted.count} scripted nodes paired at bring-up need gateway.authRateLimit.maxAttempts of at least ${spec.scripted.count} (now ${maxAttempts}): OpenClaw's failed-auth limiter counts each node pairing request from the lab's one address and locks it out for 5 min past ${maxAttempts} (scenarios/fleet/fleet-pairing-storm.ts)`,
      });
    }
    if (tapped > 0 && !spec.tap.enabled) {
      ctx.addIssue({ code: "custom", path: ["scripted", spec.scripted.tapped === undefined ? "count" : "tapped"], message: `${tapped} scripted node(s) connect through wire taps: set tap.enabled true (or scripted.tapped 0 to connect them to the gateway directly)` });
    }
    if (spec.scripted.count > 0 && spec.scripted.prefix === spec.nodes.prefix) {
      ctx.addIssue({ code: "custom", path: ["scripted", "prefix"], message: `must differ from nodes.prefix ("${spec.nodes.prefix}")` });
    }
    spec.mcp.nodeServers.forEach((m, i) => {
      if (!nodes.includes(m.node)) {
        ctx.addIssue({ code: "custom", path: ["mcp", "nodeServers", i, "node"], message: `no such node host (this topology has: ${nodes.join(", ") || "none"})` });
      }
    });
  });

export type TopologySpec = z.infer<typeof TopologySpec>;
export type TopologyInput = z.input<typeof TopologySpec>;

/** Parse a spec, or throw a LabError naming each bad field and its value. */
export function parseTopology(input: unknown, source = "topology spec"): TopologySpec {
  const r = TopologySpec.safeParse(input ?? {});
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    const where = i.path.length ? i.path.join(".") : "(top level)";
    const value = valueAt(input, i.path);
    const shown = value === undefined ? "" : ` = ${JSON.stringify(value)}`;
    const hint = i.code === "unrecognized_keys" ? ` (known fields here: ${knownKeys(i.path).join(", ")})` : "";
    return `  ${where}${shown}: ${i.message}${hint}`;
  });
  throw new LabError(`${source} is invalid:\n${lines.join("\n")}`);
}

function valueAt(input: unknown, p: PropertyKey[]): unknown {
  let v: unknown = input;
  for (const k of p) v = v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

function knownKeys(p: PropertyKey[]): string[] {
  let s: z.ZodTypeAny = TopologySpec;
  for (const k of p) {
    while (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = s.unwrap() as z.ZodTypeAny;
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, z.ZodTypeAny>)[String(k)];
  }
  while (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = s.unwrap() as z.ZodTypeAny;
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/**
 * Overrides users give from the Makefile/CLI environment: NODES, OPENCLAW_VERSION, SEED,
 * TOPOLOGY (a JSON spec). Strings are turned into numbers here so a bad value is reported by
 * the same validation, under the spec's field name.
 */
export function topologyFromEnv(env: NodeJS.ProcessEnv = environment(), base: TopologyInput = {}): TopologySpec {
  let input: Record<string, unknown> = structuredClone(base) as Record<string, unknown>;
  const topology = setting("TOPOLOGY", env);
  if (topology) {
    try {
      input = { ...input, ...(JSON.parse(topology) as Record<string, unknown>) };
    } catch (err) {
      throw new LabError(`TOPOLOGY is not valid JSON (${(err as Error).message}); example: TOPOLOGY='{"nodes":{"count":3}}'`);
    }
  }
  const num = (v: string) => (/^-?\d+$/.test(v.trim()) ? Number(v) : v);
  const nodes = setting("NODES", env);
  const version = setting("OPENCLAW_VERSION", env);
  const pkg = setting("OPENCLAW_PACKAGE", env);
  const seed = setting("SEED", env);
  if (nodes) input.nodes = { ...(input.nodes as object), count: num(nodes) };
  if (version && pkg) throw new LabError(`OPENCLAW_VERSION=${version} and OPENCLAW_PACKAGE=${pkg} both name what is under test: give one (the package is named by its own version)`);
  if (version) input.openclawVersion = version;
  if (pkg) Object.assign(input, buildInput(resolveBuild(pkg, env.FLEETLAB_CACHE ?? CACHE)));
  if (seed) input.seed = num(seed);
  return parseTopology(input, "topology spec (from TOPOLOGY/NODES/OPENCLAW_VERSION/SEED)");
}

/** The spec fields that put a build under test. */
export function buildInput(b: { label: string; source: string; sha256: string }): { openclawVersion: string; openclawBuild: { source: string; sha256: string } } {
  return { openclawVersion: b.label, openclawBuild: { source: b.source, sha256: b.sha256 } };
}

/** Every MCP server container of the topology: gateway-side and node-hosted. */
export function mcpContainers(spec: TopologySpec): { name: string; catalog: string; port: number; node?: string }[] {
  return [...spec.mcp.servers, ...spec.mcp.nodeServers];
}

/** The tap a node host connects through (its "gateway address"), when taps are on. */
export function tapAlias(node: string): string {
  return `tap-${node}`;
}

/** The worker slots of the node host `alias` (spec.nodes.capacity: one for all, or one per node in alias order, the last for the rest). */
export function nodeCapacity(spec: TopologySpec, alias: string): number {
  const c = spec.nodes.capacity;
  if (typeof c === "number") return c;
  const i = nodeAliases(spec).indexOf(alias);
  return c[Math.min(i < 0 ? c.length - 1 : i, c.length - 1)]!;
}

/** Container names inside the lab network (DNS aliases). */
export function nodeAliases(spec: TopologySpec): string[] {
  return Array.from({ length: spec.nodes.count }, (_, i) => `${spec.nodes.prefix}-${i + 1}`);
}

/** The scripted nodes' aliases (each also names its tap: tap-<alias>). */
export function scriptedAliases(spec: TopologySpec): string[] {
  return Array.from({ length: spec.scripted.count }, (_, i) => `${spec.scripted.prefix}-${i + 1}`);
}

/** How many scripted nodes connect through taps of their own (the first ones): `tapped`, else all of them when there are at most 4, else none. */
export function tappedScriptedCount(spec: Pick<TopologySpec, "scripted">): number {
  return Math.min(spec.scripted.count, spec.scripted.tapped ?? (spec.scripted.count <= 4 ? spec.scripted.count : 0));
}

/** Every alias that has a wire tap of its own: node hosts and the tapped scripted nodes. */
export function tappedAliases(spec: TopologySpec): string[] {
  return spec.tap.enabled ? [...nodeAliases(spec), ...scriptedAliases(spec).slice(0, tappedScriptedCount(spec))] : [];
}

/** A scenario's topology overrides, merged field by field into the run's spec. */
export function mergeSpec(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeSpec(base[k], v);
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
