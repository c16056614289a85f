// Every scenario the lab knows, in the order `make lab` runs them.
import type { Scenario } from "../lab/scenario.ts";
import smoke from "./smoke.ts";
import pairAndRun from "./pair-and-run.ts";
import bundleReuse from "./bundle-reuse.ts";
import twoNodes from "./two-nodes.ts";
import capacity from "./capacity.ts";

export const scenarios: Scenario[] = [smoke, pairAndRun, bundleReuse, twoNodes, capacity];
