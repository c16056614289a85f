// What the scripted model recorded: every HTTP request the gateway made to it, with the body as
// sent and what the response carried. Written by the server itself (docker/model/control.ts,
// answering its control API; the types are docker/model/wire.ts, as the image cannot import from
// lab/), and saved per scenario in a compact form as model-requests.json by lab/kits/mcp.ts
// (modelEvidence). Read by the at-most-once check (lab/checks/at-most-once.ts). The schema is
// checked against wire.ts at compile time (SameShape), and lab/clients/model.test.ts parses what
// the real server answered in its tests.
import { z } from "zod";
import type * as wire from "../../../docker/model/wire.ts";
import type { SameShape } from "./format.ts";

/** What a response carried, in order: text, and the tool calls the model made. */
export const Emitted = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("function_call"), name: z.string(), arguments: z.string(), callId: z.string() }),
]);
export type Emitted = z.infer<typeof Emitted>;

/** One HTTP request the model server received (anything but /_control and /healthz). */
export const ModelRequest = z.object({
  id: z.string(),
  seq: z.number(),
  time: z.string(),
  method: z.string(),
  path: z.string(),
  model: z.string().nullable(),
  stream: z.boolean(),
  /** Id of the rule that answered, "control:fail" for an armed failure, null when none did. */
  rule: z.string().nullable(),
  status: z.enum(["pending", "streaming", "held", "completed", "failed", "aborted"]),
  httpStatus: z.number().nullable(),
  endedAt: z.string().nullable(),
  events: z.number(),
  output: z.array(Emitted),
  bodyBytes: z.number(),
  body: z.unknown(),
  headers: z.object({ "user-agent": z.string().nullable(), "x-client-request-id": z.string().nullable() }),
  userText: z.string().optional(),
  userTurn: z.number().optional(),
  round: z.number().optional(),
  toolNames: z.array(z.string()).optional(),
  responseId: z.string().optional(),
  streamedText: z.string().optional(),
  heldAt: z.string().optional(),
  releasedAt: z.string().optional(),
  holdReason: z.string().optional(),
  dropped: z.boolean().optional(),
});
export type ModelRequest = z.infer<typeof ModelRequest>;

/** One request as model-requests.json keeps it: who answered, what came out, the MCP tools offered and the tool outputs sent in. */
export const SavedModelRequest = ModelRequest.pick({ id: true, time: true, path: true, rule: true, status: true, round: true, userText: true, output: true }).extend({
  mcpTools: z.array(z.string()),
  toolOutputs: z.array(z.unknown()),
});
export type SavedModelRequest = z.infer<typeof SavedModelRequest>;

/** model-requests.json (when the model could not be read, the file holds why instead: not this). */
export const SavedModelRequests = z.array(SavedModelRequest);

// The writer's types and these are the same (tsc fails here when they part).
true satisfies SameShape<ModelRequest, wire.ModelRequest>;
