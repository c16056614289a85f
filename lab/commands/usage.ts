// What the CLI takes and how it is told: the usage text, each command's options, the parse of
// argv with its one-line refusals, and the answers that need nothing else (help, --help, a
// mistyped command or option). Kept apart from the commands so that scenarios/main.ts can give
// these answers before it loads the lab and its scenarios (compiling those takes seconds).
import fs from "node:fs";
import { parseArgs } from "node:util";
import { LabError } from "../core/log.ts";
import { selectNames, settingsTable, unmatchedText } from "../core/settings.ts";

export const USAGE = `usage: fleetlab <command> [options]   (fleetlab help COMMAND, fleetlab COMMAND --help, fleetlab --version)

  run [scenario...]   bring up labs, run scenarios (all when none named), print verdicts
                      (a scenario is a name or a quoted pattern: 'mcp-*', 'repro-13?', '[ab]*')
        --seed N          seed every random choice (default: random, printed)
        --replay FILE     re-run with the seed and topology of an earlier run.json
        --shard K/N       run only shard K of N (also SHARD=K/N): split by scenarios/costs.json
        --in-network      run inside a runner container on the engine DOCKER_HOST names (local
                          or remote); the run folder is copied back here
  repro SCENARIO      run one scenario N times; each attempt is reproduced (a bug check short with
                      its registered signature), new signature, failed otherwise (another check or
                      a step: never counted as reproduced), not reproduced, or could not tell
                      (a fresh lab each time unless it shares one)
        --n N             attempts (default 10)
        --until           stop at the first attempt that reproduced
        --aim-off         the premise self-test: aim the scenario's fault off the path one premise
                          needs, each premise with an aim-off on its own (N attempts each); every
                          attempt must read unknown with that premise unmet (exit 0 only then;
                          AIM_OFF=1). Premises without an aim-off are named as not self-tested
        --premise P-ID    with --aim-off: aim off only this premise (AIM_OFF=P-ID)
  soak [scenario...]  the stability run: the suite (or the scenarios named) R rounds, each a normal
                      run; a table per scenario of its verdicts, each check's signatures and times,
                      the ones that moved first (soak.json, soak.md, soak.html in .lab/runs/soak-<id>/)
        --rounds R        rounds (default 5, 1-100); also ROUNDS=; SHARD=K/N applies to each round
        --from DIR...     the table again from soak folders, run folders or run ids (shards of one
                          soak on several runners, or last night's rounds beside tonight's)
  matrix [scenario...] run the scenarios on each OpenClaw version and print a scenario x version
                      table (saved as matrix.json in .lab/runs/matrix-<id>/)
        --versions "A B"  exact versions, newest, lastN (e.g. last3), or a packed build's
                          path (./openclaw-dev.tgz); also VERSIONS=
  bisect SCENARIO     the first version that broke: the scenario N times on each published version
                      GOOD..BAD halves, and the first whose verdict differs from GOOD's, with the run
                      of each step (bisect.json in .lab/runs/bisect-<id>/); exit 0 found, 1 GOOD and
                      BAD read the same (refused: nothing to bisect), 3 could not tell
        --good V --bad V  the versions to search between (published, GOOD older than BAD)
        --n N             attempts per step (default 3, 1-20); a step reads one verdict when its
                          attempts agree (unknown ones set aside), could not tell otherwise
        --pre             pre-releases between them too
  up                  bring up the standard topology and keep it until Ctrl-C
  down RUN_ID         remove one run's containers, network and volumes
  prune [--all]       remove what dead runs left (--all: every lab resource, live runs too)
  report [RUN_ID]     print the verdict table of a run (default: the newest; a run id, a run
                      folder, or latest: .lab/runs/latest, the newest run's link) and write its
                      report.html and junit.xml again (exit 3: scenarios, or the run, never ran)
        --not-accepted    only the scenarios whose verdict is not accepted, each with its whole
                          detail and the checks that decided it (writes nothing; what make test
                          prints last when a scenario failed)
  judge [RUN_ID]      judge a stored run again with today's checks and finding records, from each
                      scenario's history.json (nothing runs): the new verdict table, verdicts.md
                      and report.html in the run's judged/<stamp>/, and which verdicts changed and
                      why (a record added or changed, a check that reads the history differently)
        --keep [NAME...]  also keep each scenario's history (or those named) as a fixture in
                          fixtures/histories/<name>.json: its checks' unit tests judge it again
  list [pattern...]   list the scenarios (or those the patterns select) and what each proves
  merge OUT RUN...    merge shard run folders (or folders of them) into OUT/<version>/ (run.json,
                      junit.xml, report.html, summary.md) and OUT/summary.md over all versions
        --shards N        shards each version was split into (a missing one is named)
        --versions "A B"  versions expected (one no shard came back for is named)
  excerpt RUN [ID...] keep a trimmed excerpt of each finding the run saw (or those named) in
                      fixtures/findings/<id>.json, for the record's evidence to point to
  issue ID | --all    write the markdown bug report of a registered finding for OpenClaw's tracker
                      (its bug form's fields) to fixtures/findings/reports/<id>.md and print it;
                      --all: every registered finding
  costs [RUN...]      refresh scenarios/costs.json (seconds per scenario) from run folders
  images              build (or find cached) every image and print their tags

Settings (a flag, or its environment variable; make takes the name on the right: make lab NODES=4):
${settingsTable()}

--json (list, run, report, repro, matrix, soak, merge, bisect): one JSON document on stdout (its schema:
docs/reference/json.md), the tables and progress on stderr, the same exit code.
A command that takes a run id (report, judge, down, excerpt, costs) takes latest: .lab/runs/latest.

Exit codes: 0 pass, 1 fail, 2 bad input or setup, 3 unknown (repro: 0 the bug showed at least
once, 1 it never did and some attempt was judged, 3 no attempt could tell); docs/reference/cli.md.`;

/**
 * The CLI is handed the scenarios it can run, as Jepsen's -main hands cli/run! its test:
 * the entry point is scenarios/main.ts (`npm run fleetlab`), which loads scenarios/index.ts.
 */
const TOPOLOGY_FLAGS = ["nodes", "openclaw-version", "openclaw-package", "topology"];

/** What each command takes, for `fleetlab <command> --help` and the one-line refusals. */
export const COMMANDS: Record<string, { usage: string; options: string[] }> = {
  run: { usage: "run [scenario...] [--seed N] [--replay FILE] [--shard K/N] [--in-network] [SETTINGS] [--json]", options: ["seed", "replay", "shard", "in-network", ...TOPOLOGY_FLAGS, "lanes", "json"] },
  repro: { usage: "repro SCENARIO [--n N] [--until] [--aim-off [--premise P-ID]] [--seed N] [SETTINGS] [--json]", options: ["n", "until", "aim-off", "premise", "seed", "replay", ...TOPOLOGY_FLAGS, "json"] },
  soak: { usage: "soak [scenario...] [--rounds R] [--seed N] [SETTINGS] [--json] | soak --from DIR... [--json]", options: ["rounds", "from", "seed", "shard", ...TOPOLOGY_FLAGS, "lanes", "json"] },
  matrix: { usage: 'matrix [scenario...] --versions "A B" [--seed N] [SETTINGS] [--json]', options: ["versions", "seed", "nodes", "topology", "lanes", "json"] },
  bisect: { usage: "bisect SCENARIO --good V --bad V [--n N] [--pre] [--seed N] [SETTINGS] [--json]", options: ["good", "bad", "n", "pre", "seed", "nodes", "topology", "json"] },
  up: { usage: "up [--seed N] [SETTINGS]", options: ["seed", "replay", ...TOPOLOGY_FLAGS] },
  down: { usage: "down RUN_ID", options: [] },
  prune: { usage: "prune [--all]", options: ["all"] },
  report: { usage: "report [RUN_ID|latest] [--not-accepted] [--json]", options: ["not-accepted", "json"] },
  judge: { usage: "judge [RUN_ID|latest] [--keep [SCENARIO...]]", options: ["keep"] },
  list: { usage: "list [pattern...] [--json]", options: ["json"] },
  merge: { usage: 'merge OUT RUN... [--shards N] [--versions "A B"] [--json]', options: ["shards", "versions", "json"] },
  excerpt: { usage: "excerpt RUN [FINDING_ID...]", options: [] },
  issue: { usage: "issue FINDING_ID | --all", options: ["all"] },
  costs: { usage: "costs [RUN...]", options: [] },
  images: { usage: "images", options: [] },
  help: { usage: "help [command]", options: [] },
};

/** The usage text's lines about one command (its paragraph of USAGE). */
export function commandHelp(cmd: string): string {
  const lines = USAGE.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`  ${cmd} `) || l === `  ${cmd}`);
  if (start < 0) return `usage: fleetlab ${COMMANDS[cmd]?.usage ?? cmd}`;
  let end = start + 1;
  while (end < lines.length && /^ {6,}\S/.test(lines[end]!)) end++;
  return [`usage: fleetlab ${COMMANDS[cmd]!.usage}`, "", ...lines.slice(start, end), "", USAGE.slice(USAGE.indexOf("Settings ("))].join("\n");
}

const ENV_HINT: Record<string, string> = {
  version: "--openclaw-version 2026.9.6 (FLEETLAB_OPENCLAW_VERSION, make ... OPENCLAW_VERSION=)",
  package: "--openclaw-package ./openclaw-2026.9.6.tgz (FLEETLAB_OPENCLAW_PACKAGE, make ... OPENCLAW_PACKAGE=)",
};

/** Parse argv; a bad option or command is one line naming it and the fix (LabError: exit 2), never a stack trace. */
export function parseCli(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: OPTIONS,
    });
  } catch (err) {
    const m = /Unknown option '(-{1,2})([^']+)'/.exec((err as Error).message);
    const cmd = argv.find((a) => !a.startsWith("-"));
    if (m) {
      const hint = ENV_HINT[m[2]!];
      throw new LabError(`unknown option ${m[1]}${m[2]}${cmd ? ` for '${cmd}'` : ""}${hint ? `: did you mean ${hint}?` : ""}; see 'fleetlab ${cmd && COMMANDS[cmd] ? `${cmd} ` : ""}--help'`);
    }
    throw new LabError(`${(err as Error).message.split("\n")[0]}; see 'fleetlab --help'`);
  }
  const [cmd] = parsed.positionals;
  if (cmd && !COMMANDS[cmd]) throw new LabError(`unknown command '${cmd}'; commands: ${Object.keys(COMMANDS).join(", ")} (see 'fleetlab help')`);
  if (cmd && !parsed.values.help) {
    const allowed = new Set([...COMMANDS[cmd]!.options, "help"]);
    const given = Object.keys(parsed.values).filter((k) => !allowed.has(k));
    if (given[0] === "version") throw new LabError(`--version is fleetlab's own version ('fleetlab --version', no command); for the OpenClaw version under test: did you mean ${ENV_HINT.version}?`);
    if (given.length) throw new LabError(`option --${given[0]} does not apply to '${cmd}' (it takes: ${COMMANDS[cmd]!.options.map((o) => `--${o}`).join(" ") || "no options"}); see 'fleetlab ${cmd} --help'`);
  }
  return parsed;
}

export const OPTIONS = {
  seed: { type: "string" },
  replay: { type: "string" },
  all: { type: "boolean" },
  shard: { type: "string" },
  n: { type: "string" },
  until: { type: "boolean" },
  "aim-off": { type: "boolean" },
  premise: { type: "string" },
  rounds: { type: "string" },
  from: { type: "boolean" },
  shards: { type: "string" },
  versions: { type: "string" },
  good: { type: "string" },
  bad: { type: "string" },
  pre: { type: "boolean" },
  "in-network": { type: "boolean" },
  nodes: { type: "string" },
  "openclaw-version": { type: "string" },
  "openclaw-package": { type: "string" },
  topology: { type: "string" },
  lanes: { type: "string" },
  json: { type: "boolean" },
  "not-accepted": { type: "boolean" },
  keep: { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/**
 * The help forms of a parsed command line: their text and exit code (no command at all: the usage
 * and 2), or undefined when a command runs. A help topic that is no command is a LabError.
 */
export function helpFor(parsed: ReturnType<typeof parseCli>): { text: string; code: number } | undefined {
  const [cmd, topic] = parsed.positionals;
  if (parsed.values.version && !cmd) return { text: versionText(), code: 0 };
  if (parsed.values.help && cmd && cmd !== "help") return { text: commandHelp(cmd), code: 0 };
  if (!parsed.values.help && cmd && cmd !== "help") return undefined;
  if (cmd === "help" && topic) {
    if (!COMMANDS[topic]) throw new LabError(`unknown command '${topic}'; commands: ${Object.keys(COMMANDS).join(", ")}`);
    return { text: commandHelp(topic), code: 0 };
  }
  return { text: USAGE, code: cmd || parsed.values.help ? 0 : 2 };
}

/**
 * `fleetlab --version`: this checkout's version (package.json) and the OpenClaw version it tests
 * by default, read from lab/definitions/spec.ts's text as the workflows read it (importing the
 * spec would load its schema library).
 */
export function versionText(root = new URL("../../", import.meta.url)): string {
  const pkg = JSON.parse(fs.readFileSync(new URL("package.json", root), "utf8")) as { version: string };
  const pinned = /^export const DEFAULT_OPENCLAW_VERSION = "([^"]+)";$/m.exec(fs.readFileSync(new URL("lab/definitions/spec.ts", root), "utf8"))?.[1] ?? "unknown";
  return `fleetlab ${pkg.version} (openclaw@${pinned} by default; Node ${process.versions.node})`;
}

/**
 * The answer to argv when it needs neither the lab nor the scenarios: help in any form, or a
 * refusal of a command or option that does not exist or does not apply (one line on stderr,
 * exit 2). Undefined: the command runs.
 */
export function answerAtOnce(argv: string[], out: (t: string) => void = (t) => process.stdout.write(t), err: (t: string) => void = (t) => process.stderr.write(t)): number | undefined {
  let help: ReturnType<typeof helpFor>;
  try {
    help = helpFor(parseCli(argv));
  } catch (e) {
    if (!(e instanceof LabError)) throw e;
    err(`fleetlab: ${e.message}\n`);
    return e.exitCode;
  }
  if (help) out(help.text + "\n");
  return help?.code;
}

/** Commands whose words after the command are scenario names (soak --from takes folders instead). */
const SCENARIO_COMMANDS = ["run", "repro", "soak", "matrix", "bisect"];

/**
 * The scenario names argv gives, checked against the names the scenario files carry (each file
 * is named for its scenario: scenarios/index.test.ts keeps it so), before anything is loaded: the
 * runner's refusal, in its words, in well under a second. A name holding commas whose parts are
 * all known is told how names are separated. Exit code like answerAtOnce's: 2, or undefined.
 */
export function refuseUnknownScenarios(argv: string[], known: string[], err: (t: string) => void = (t) => process.stderr.write(t)): number | undefined {
  let parsed;
  try {
    parsed = parseCli(argv);
  } catch {
    return undefined; // answerAtOnce has said it
  }
  const [cmd, ...names] = parsed.positionals;
  if (!cmd || !(SCENARIO_COMMANDS.includes(cmd) || cmd === "list") || parsed.values.from || parsed.values.help) return undefined;
  const { unknown, unmatched } = selectNames(names, known);
  if (!unknown.length && !unmatched.length) return undefined;
  if (!unknown.length) {
    err(`fleetlab: ${unmatchedText(unmatched)}\n`);
    return 2;
  }
  const listed = unknown.find((n) => n.includes(",") && n.split(",").every((p) => known.includes(p.trim())));
  const hint = listed ? ` (names are separated by spaces: SCENARIOS="${listed.split(",").map((p) => p.trim()).join(" ")}")` : "";
  err(`fleetlab: unknown scenario${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}${hint}. Known scenarios: ${known.join(", ")}${unmatched.length ? `; and ${unmatchedText(unmatched)}` : ""}\n`);
  return 2;
}

/** What `fleetlab list` says of a scenario (kept in .lab/list.json, so that list loads no scenario while the sources are unchanged). */
export interface ListEntry {
  name: string;
  topology: string;
  proves: string;
}

/** `fleetlab list`: one line per scenario (its name, its lab, what it proves). */
export function listText(scenarios: ListEntry[]): string {
  return scenarios.map((s) => `${s.name.padEnd(20)} [${s.topology}] ${s.proves}\n`).join("");
}
