// What an OpenClaw version can do, learnt from the package itself, never from a hand-kept
// version list:
//   - its CLI: `openclaw node run --help` and `openclaw gateway run --help`, run once per
//     openclaw image in a throwaway container with no network (cached by image id under
//     capabilities/ in the shared cache, lab/core/paths.ts). 2026.9.6's `node run` has `--session-host`; up to 2026.9.5 it
//     has not (a worker-session host there is `node run` with nodeHost.workerRuns.enabled in
//     its config, which the lab always writes), and passing it made the node exit at once;
//   - its protocol: the methods and events the gateway advertises in its hello-ok
//     (`features.methods`, `features.events`), read when a lab's operator connects.
// The lab starts members with what the version offers (lab/members/node-host.ts), and a
// scenario declares what it needs (`needs` in lab/scenario.ts): when the version lacks it, the
// scenario's verdict is "n/a" with the reason, at once, instead of a wait that times out.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { runLabels } from "./cleanup.ts";
import { demux, docker } from "./docker.ts";
import { info, step } from "../core/log.ts";
import { CACHE } from "../core/paths.ts";
import { deadline } from "../core/pace.ts";

export interface Capabilities {
  /** openclaw image id the probe ran in. */
  image: string;
  /**
   * Keys of the lab's configs this version does not know (`openclaw config validate --json`:
   * "Unrecognized key"), as dotted paths: members leave out those the lab only sets to switch
   * something off (OPTIONAL_KEYS); any other one stays, and the member fails quoting it.
   */
  unknownConfig?: { node: string[]; gateway: string[] };
  /** Long options `openclaw node run --help` lists (e.g. "--session-host"). */
  nodeRunOptions: string[];
  /** Long options `openclaw gateway run --help` lists. */
  gatewayRunOptions: string[];
}

/** Protocol surface of a live gateway (its hello-ok). */
export interface Protocol {
  methods: string[];
  events: string[];
}

/** What a scenario needs of the version under test. */
export type Need =
  | { nodeRunOption: string; why?: string }
  | { gatewayRunOption: string; why?: string }
  | { method: string; why?: string }
  | { event: string; why?: string };

/** The long options a commander `--help` text lists, in order of appearance. */
export function optionsFromHelp(help: string): string[] {
  const out: string[] = [];
  let inOptions = false;
  for (const line of help.split("\n")) {
    if (/^Options:\s*$/.test(line.trim())) {
      inOptions = true;
      continue;
    }
    if (inOptions && /^\S/.test(line)) inOptions = false; // the next section ("Examples:", "Docs:")
    if (!inOptions) continue;
    // "  -p, --port <port>   ..." / "  --session-host   ..."; a wrapped description line is
    // indented far deeper, and an option it mentions is not one of this command's.
    const m = /^\s{1,4}(?:-[a-zA-Z], )?(--[a-z][a-z0-9-]*)/.exec(line);
    if (m && !out.includes(m[1]!)) out.push(m[1]!);
  }
  return out;
}

/**
 * Config keys the lab writes only to switch something off (auto-update, the browser proxy,
 * update checks, mDNS): a version that does not know one does not have what it switches off,
 * so leaving it out is the same configuration. (2026.9.4's node host refuses its whole config
 * over `nodeHost.autoUpdate`.)
 */
export const OPTIONAL_KEYS = ["nodeHost.autoUpdate", "nodeHost.browserProxy", "update.checkOnStart", "update", "discovery.mdns", "discovery"];

/** `config` without the optional keys this version does not know (a copy; the rest as given). */
export function fitConfig(config: Record<string, unknown>, unknown: string[] = []): Record<string, unknown> {
  const out = structuredClone(config);
  for (const key of unknown.filter((k) => OPTIONAL_KEYS.includes(k))) {
    const parts = key.split(".");
    let o: Record<string, unknown> | undefined = out;
    for (const p of parts.slice(0, -1)) o = o?.[p] as Record<string, unknown> | undefined;
    if (o) delete o[parts.at(-1)!];
  }
  return out;
}

/** The dotted paths of the keys `openclaw config validate --json` calls unrecognized. */
export function unknownKeys(validateJson: string): string[] {
  let parsed: { issues?: { path?: string; message?: string }[] };
  try {
    parsed = JSON.parse(validateJson.slice(validateJson.indexOf("{"), validateJson.lastIndexOf("}") + 1)) as typeof parsed;
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const i of parsed.issues ?? []) {
    for (const m of (i.message ?? "").matchAll(/Unrecognized keys?: ((?:"[^"]+"(?:, )?)+)/g)) {
      for (const k of m[1]!.matchAll(/"([^"]+)"/g)) out.push(i.path ? `${i.path}.${k[1]}` : k[1]!);
    }
  }
  return out;
}

/** The node host's command line beyond host, port and name: what this version offers. */
export function nodeRunExtraArgs(c: Pick<Capabilities, "nodeRunOptions">): string[] {
  return c.nodeRunOptions.includes("--session-host") ? ["--session-host"] : [];
}

/** Why a need is not met, or undefined when it is. A protocol need is unmet only once the protocol is known. */
export function unmet(need: Need, c: Pick<Capabilities, "nodeRunOptions" | "gatewayRunOptions">, p?: Protocol): string | undefined {
  const why = need.why ? ` (${need.why})` : "";
  if ("nodeRunOption" in need) return c.nodeRunOptions.includes(need.nodeRunOption) ? undefined : `\`openclaw node run\` has no ${need.nodeRunOption} option${why}`;
  if ("gatewayRunOption" in need) return c.gatewayRunOptions.includes(need.gatewayRunOption) ? undefined : `\`openclaw gateway run\` has no ${need.gatewayRunOption} option${why}`;
  if (!p) return undefined;
  if ("method" in need) return p.methods.includes(need.method) ? undefined : `the gateway does not offer the method ${need.method} (not in its hello-ok features.methods)${why}`;
  return p.events.includes(need.event) ? undefined : `the gateway does not offer the event ${need.event} (not in its hello-ok features.events)${why}`;
}

export const isProtocolNeed = (n: Need): boolean => "method" in n || "event" in n;

const DIR = path.join(CACHE, "capabilities");

/**
 * Probe the openclaw image (cached by image id). The probe container has no network and is
 * removed when done; its output is the two help texts.
 */
export async function probeCapabilities(image: { tag: string; id: string }, configs: { node: Record<string, unknown>; gateway: Record<string, unknown> }): Promise<Capabilities> {
  const nodeCfg = JSON.stringify(configs.node);
  const gwCfg = JSON.stringify(configs.gateway);
  const key = createHash("sha256").update(image.id).update("\0").update(nodeCfg).update("\0").update(gwCfg).digest("hex").slice(0, 16);
  const file = path.join(DIR, `${key}.json`);
  if (fs.existsSync(file)) {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8")) as Capabilities;
    } catch {
      /* probed again below */
    }
  }
  // Once more if the first probe hangs (seen once in a matrix run on a loaded machine: 90 s with
  // no end, while the same probe took 3 s before and after), or gives a help text with no
  // options: seen once on 2026.9.4 while a matrix built images beside running labs, `node run
  // --help` printed nothing (under a 25 s timeout then, now 60 s), and the scenario read unknown.
  const probe = () => runHelp(image.tag, nodeCfg, gwCfg);
  const read = (help: string): Capabilities => {
    const [node = "", gateway = "", nodeValid = "", gwValid = ""] = help.split("\n==fleetlab==\n");
    return { image: image.id, nodeRunOptions: optionsFromHelp(node), gatewayRunOptions: optionsFromHelp(gateway), unknownConfig: { node: unknownKeys(nodeValid), gateway: unknownKeys(gwValid) } };
  };
  const readable = (c: Capabilities) => c.nodeRunOptions.length > 0 && c.gatewayRunOptions.length > 0;
  let help = "";
  const caps = await step(`what ${image.tag} offers (its CLI help and config schema, once per image)`, async () => {
    help = await probe().catch((err: Error) => {
      info(`the probe of ${image.tag} did not finish (${err.message}); trying once more`);
      return probe();
    });
    const first = read(help);
    if (readable(first)) return first;
    info(`the probe of ${image.tag} gave no CLI options (${first.nodeRunOptions.length ? "gateway" : "node"} run --help printed none); trying once more`);
    help = await probe();
    return read(help);
  });
  if (!readable(caps)) {
    throw new Error(`could not read the options of ${image.tag}'s CLI (openclaw node run --help / gateway run --help); its output began:\n${help.slice(0, 600)}`);
  }
  fs.mkdirSync(DIR, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(caps, null, 2) + "\n");
  return caps;
}

/** The probe container's whole budget: two help texts (60 s each at most) and two config checks (25 s each). */
const PROBE_WAIT_MS = 180_000;

async function runHelp(tag: string, nodeCfg: string, gwCfg: string): Promise<string> {
  const d = docker();
  const sep = "echo; echo ==fleetlab==";
  const validate = (v: string, f: string) => `printf '%s' "$${v}" > ${f}; OPENCLAW_CONFIG_PATH=${f} timeout 25 openclaw config validate --json 2>&1`;
  const c = await d.createContainer({
    Image: tag,
    Entrypoint: ["sh", "-c", `timeout 60 openclaw node run --help 2>&1; ${sep}; timeout 60 openclaw gateway run --help 2>&1; ${sep}; ${validate("FL_NODE_CFG", "/tmp/node.json")}; ${sep}; ${validate("FL_GW_CFG", "/tmp/gateway.json")}`],
    Env: ["OPENCLAW_STATE_DIR=/tmp/probe-state", "HOME=/tmp", "NO_COLOR=1", "TERM=dumb", `FL_NODE_CFG=${nodeCfg}`, `FL_GW_CFG=${gwCfg}`],
    // Labelled like a run's own containers: a probe whose process was killed is pruned like them.
    Labels: runLabels(`probe-${process.pid}`, "probe"),
    HostConfig: { NetworkMode: "none", AutoRemove: false },
  });
  try {
    await c.start();
    // The lab's own wait for its probe container (bring-up): at the machine's pace.
    const waited = await Promise.race([c.wait(), new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline(PROBE_WAIT_MS)))]); // paced
    if (!waited) {
      const so_far = demux((await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer);
      throw new Error(`the CLI help and config check of ${tag} did not finish within ${PROBE_WAIT_MS / 1000} s (output so far: ${so_far.slice(-300).trim() || "none"})`);
    }
    const buf = (await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    return demux(buf) || buf.toString("utf8");
  } finally {
    await c.remove({ force: true }).catch(() => {});
  }
}
