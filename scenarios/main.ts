// The `fleetlab` command: the framework's CLI (lab/commands/cli.ts), handed this folder's scenarios.
import { runCli } from "../lab/commands/cli.ts";
import { loadScenarios } from "./index.ts";

runCli(process.argv.slice(2), () => loadScenarios());
