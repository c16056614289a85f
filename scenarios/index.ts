// Every scenario the lab knows, in the order `make lab` runs them.
import type { Scenario } from "../lab/scenario.ts";
import smoke from "./smoke.ts";

export const scenarios: Scenario[] = [smoke];
