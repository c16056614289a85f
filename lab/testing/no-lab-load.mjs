// Loaded with --import by lab/commands/cli.test.ts: any import of the lab's command code
// or its runner throws, so a refusal that is meant to come before the lab loads (scenarios/main.ts,
// lab/commands/inputs.ts) shows it if it does not. Proven without a clock: the hook, not a timing.
import { register } from "node:module";

register(new URL("./no-lab-load-hooks.mjs", import.meta.url));
