// A run that injects faults and then waits to be killed: the prune test SIGKILLs it mid-fault.
//   node_modules/.bin/node lab/testing/dying-run.ts own
//       brings up its own testbed (its run's labels) and partitions a from b
//   node_modules/.bin/node lab/testing/dying-run.ts attach '<json>'
//       faults containers of another (live) run: {network:{name,id}, base, members:{a:{id,ip},...}}
// Prints one JSON line {runId, labId, members, helpers} once every fault is in effect.
import { randomBytes } from "node:crypto";
import { docker } from "../engine/docker.ts";
import { faults } from "../faults/index.ts";
import type { FaultLab } from "../faults/fault.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { Testbed } from "./testbed.ts";

const mode = process.argv[2];
const runId = `dying-${randomBytes(3).toString("hex")}`;
let lab: FaultLab;
let members: Record<string, { id: string; ip: string }>;

if (mode === "own") {
  const bed = await Testbed.up({ id: runId }, ["a", "b"]);
  lab = bed;
  members = Object.fromEntries([...bed.members].map(([k, m]) => [k, { id: m.id, ip: m.ip }]));
} else if (mode === "attach") {
  const given = JSON.parse(process.argv[3]!) as { network: { name: string; id: string }; base: string; members: Record<string, { id: string; ip: string }> };
  members = given.members;
  lab = {
    id: `${runId}-lab`,
    run: { id: runId },
    // Never drained: this run is killed with its faults in place, for prune to clean up.
    teardown: new TeardownStack(),
    network: given.network,
    images: { base: { tag: given.base } },
    member: (alias) => ({ alias, ...given.members[alias]! }),
  };
} else {
  throw new Error(`usage: dying-run.ts own | attach <json>`);
}

await faults.partition(lab, "a", "b").inject();
if (mode === "attach") await faults.bandwidth(lab, "b", "1mbit").inject();
const helpers = (await docker().listContainers({ filters: { label: [`fleetlab.run=${runId}`, "fleetlab.kind=fault-helper"] } })).map((c) => c.Id);
process.stdout.write(JSON.stringify({ runId, labId: lab.id, members, helpers }) + "\n");
setInterval(() => {}, 1 << 30);
