// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
// Help and a mistyped command or option are answered from the usage alone (lab/commands/usage.ts),
// before the lab and its scenarios are loaded: compiling those takes seconds.
// A scenario name is checked against the scenario files' names the same way (no file is loaded).
import path from "node:path";
import { answerAtOnce, refuseUnknownScenarios } from "../lab/commands/usage.ts";
import { scenarioFiles } from "./index.ts";

const argv = process.argv.slice(2);
const answered = answerAtOnce(argv) ?? refuseUnknownScenarios(argv, scenarioFiles().map((f) => path.basename(f, ".ts")));
if (answered !== undefined) process.exitCode = answered;
else {
  const { runCli } = await import("../lab/commands/cli.ts");
  const { loadScenarios } = await import("./index.ts");
  runCli(argv, () => loadScenarios());
}
