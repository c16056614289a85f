import { describe, expect, it } from "vitest";
import { fitConfig, nodeRunExtraArgs, optionsFromHelp, unknownKeys, unmet } from "./capabilities.ts";

// `openclaw node run --help` of openclaw@2026.9.6 (trimmed), as the probe reads it.
const HELP_2026_9_6 = `
OpenClaw 2026.9.6 (eb377ac) — All your chats, one OpenClaw.

Usage: openclaw node run [options]

Run the headless node host (foreground)

Options:
  --all-commands                  Advertise the full default command surface and
                                  forget any saved --commands allowlist
  --display-name <name>           Override node display name
  -h, --help                      Display help for command
  --host <host>                   Gateway host
  --no-tls                        Disable TLS for the gateway connection
  --port <port>                   Gateway port
  --session-host                  Host worker sessions for this foreground
                                  process
`;

// The same command in openclaw@2026.9.5 (its options as the package's node-cli defines them):
// no --session-host; a description that mentions it must not count as the option.
const HELP_2026_9_5 = `
Usage: openclaw node run [options]

Options:
  --pair <code-or-url>        Pair with a setup code or oc-pair URL; explicit
                              gateway flags take precedence over --session-host
  --host <host>               Gateway host
  --port <port>               Gateway port
  --display-name <name>       Override node display name
  -h, --help                  Display help for command

Examples:
  --not-an-option here
`;

describe("capabilities from the package's CLI help", () => {
  it("reads the long options of a command, not those its descriptions or examples mention", () => {
    expect(optionsFromHelp(HELP_2026_9_6)).toEqual(["--all-commands", "--display-name", "--help", "--host", "--no-tls", "--port", "--session-host"]);
    expect(optionsFromHelp(HELP_2026_9_5)).toEqual(["--pair", "--host", "--port", "--display-name", "--help"]);
    expect(optionsFromHelp("no options section at all")).toEqual([]);
  });

  it("starts a node host with --session-host only where the version has it", () => {
    expect(nodeRunExtraArgs({ nodeRunOptions: optionsFromHelp(HELP_2026_9_6) })).toEqual(["--session-host"]);
    expect(nodeRunExtraArgs({ nodeRunOptions: optionsFromHelp(HELP_2026_9_5) })).toEqual([]);
  });

  it("says which need a version does not meet, and why", () => {
    const caps = { nodeRunOptions: optionsFromHelp(HELP_2026_9_5), gatewayRunOptions: ["--port"] };
    expect(unmet({ nodeRunOption: "--session-host", why: "a foreground session host" }, caps)).toBe("`openclaw node run` has no --session-host option (a foreground session host)");
    expect(unmet({ nodeRunOption: "--host" }, caps)).toBeUndefined();
    expect(unmet({ gatewayRunOption: "--bind" }, caps)).toMatch(/gateway run` has no --bind/);
    // A protocol need is judged only once the gateway said what it offers.
    expect(unmet({ method: "sessions.reclaim" }, caps)).toBeUndefined();
    const protocol = { methods: ["sessions.dispatch"], events: ["chat"] };
    expect(unmet({ method: "sessions.reclaim" }, caps, protocol)).toMatch(/does not offer the method sessions.reclaim/);
    expect(unmet({ method: "sessions.dispatch" }, caps, protocol)).toBeUndefined();
    expect(unmet({ event: "node.event" }, caps, protocol)).toMatch(/does not offer the event node.event/);
  });
});

describe("config keys a version does not know", () => {
  // `openclaw config validate --json` of openclaw@2026.9.4 on the lab's node config (verbatim).
  const VALIDATE_2026_9_4 = `{
  "ok": false,
  "error": { "type": "cli_error", "message": "OpenClaw config is invalid: ~/c.json" },
  "valid": false,
  "path": "/tmp/c.json",
  "issues": [ { "path": "nodeHost", "message": "Unrecognized key: \\"autoUpdate\\"" } ]
}`;

  it("reads the unrecognized keys as dotted paths from the validator's JSON", () => {
    expect(unknownKeys(VALIDATE_2026_9_4)).toEqual(["nodeHost.autoUpdate"]);
    expect(unknownKeys('{"issues":[{"path":"","message":"Unrecognized keys: \\"a\\", \\"b\\""}]}')).toEqual(["a", "b"]);
    expect(unknownKeys('{"ok":true,"valid":true}')).toEqual([]);
    expect(unknownKeys("not json at all")).toEqual([]);
  });

  it("leaves out only the keys the lab sets to switch something off; others stay, so the member fails naming them", () => {
    const cfg = { nodeHost: { workerRuns: { enabled: true }, autoUpdate: { enabled: false } }, update: { checkOnStart: false } };
    expect(fitConfig(cfg, ["nodeHost.autoUpdate"])).toEqual({ nodeHost: { workerRuns: { enabled: true } }, update: { checkOnStart: false } });
    expect(fitConfig(cfg, ["nodeHost.workerRuns"])).toEqual(cfg);
    expect(cfg.nodeHost.autoUpdate).toEqual({ enabled: false }); // a copy: the template is untouched
  });
});
