// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
// Help and a mistyped command or option are answered from the usage alone (lab/commands/usage.ts),
// before the lab and its scenarios are loaded: compiling those takes seconds.
// A scenario name is checked against the scenario files' names the same way (no file is loaded),
// and `list` is answered from its text kept under a hash of the sources (loaded when they change).
import fs from "node:fs";
import path from "node:path";
import { answerAtOnce, listText, refuseUnknownScenarios } from "../lab/commands/usage.ts";
import { STATE } from "../lab/core/paths.ts";
import { scenarioFiles, sourcesHash } from "./index.ts";

const argv = process.argv.slice(2);
const answered = answerAtOnce(argv) ?? refuseUnknownScenarios(argv, scenarioFiles().map((f) => path.basename(f, ".ts")));
if (answered !== undefined) process.exitCode = answered;
else if (argv.length === 1 && argv[0] === "list") {
  const file = path.join(STATE, "list.json");
  const key = sourcesHash();
  let kept: { key?: string; text?: string } = {};
  try {
    kept = JSON.parse(fs.readFileSync(file, "utf8")) as typeof kept;
  } catch {
    /* none yet, or unreadable: listed afresh */
  }
  let text = kept.key === key ? kept.text : undefined;
  if (text === undefined) {
    const { loadScenarios } = await import("./index.ts");
    text = listText(await loadScenarios());
    fs.mkdirSync(STATE, { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ key, text }));
  }
  process.stdout.write(text);
} else {
  const { runCli } = await import("../lab/commands/cli.ts");
  const { loadScenarios } = await import("./index.ts");
  runCli(argv, () => loadScenarios());
}
