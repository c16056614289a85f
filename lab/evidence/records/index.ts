// The evidence records: every format a producer writes into a run folder, declared once (a zod
// schema and its type, one file per format), imported by its writer and by every reader (the
// report's timeline, the evidence checks, the findings' excerpts, the shard merge), and validated
// where it is read from disk (format.ts). After Jepsen's one history and etcd's report/ shapes:
// the report and the checks read the same typed records the producers wrote, never a second
// description of them. This room sits low (the spec's floor, lab/ci/layering.test.ts) and imports
// nothing of the lab, so clients, members and faults can all write through it.
//
//   transcript.ts   operator transcript entries (lab/clients/gateway.ts)       transcripts/operator.jsonl
//   tap.ts          wire tap records (docker/faultproxy, lab/clients/tap.ts)   transcripts/tap-<node>.jsonl
//   faults.ts       fault timeline entries (lab/faults/timeline.ts)           faults.jsonl
//   containers.ts   container events (lab/evidence/containers.ts)             containers.jsonl
//   mcp.ts          MCP server records (docker/mcp, lab/kits/mcp.ts)          mcp-servers.json
//   model.ts        model requests (docker/model, lab/kits/mcp.ts)            model-requests.json
//   events.ts       gateway events a scenario recorded (lab/kits/events.ts)   events.json
export * from "./format.ts";
export * from "./transcript.ts";
export * from "./tap.ts";
export * from "./faults.ts";
export * from "./containers.ts";
export * from "./mcp.ts";
export * from "./model.ts";
export * from "./events.ts";
