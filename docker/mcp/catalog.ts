// The catalog format of the MCP tool server, defined once (see fixtures/mcp/README.md): the
// server checks every catalog with it (file at start and reset, POST /_control/catalog), and
// lab/clients/mcp.ts takes its types. Defaults fill in what a tool leaves out.

import fs from "node:fs";
import { z } from "zod";

export const ToolSchema = z.object({
  name: z.string().min(1),
  title: z.string().optional(),
  description: z.string().default(""),
  inputSchema: z.looseObject({ type: z.literal("object") }).default({ type: "object" }),
  annotations: z.record(z.string(), z.unknown()).optional(),
  // Text of the result; {{server}} {{tool}} {{args.x}} {{argsJson}} {{effect.x}} {{session}} are filled in.
  result: z.string().default("{{server}} {{tool}}: {{argsJson}}"),
  isError: z.boolean().default(false),
  delayMs: z.number().int().min(0).default(0),
  // "write-temp": write args.content to args.path inside MCP_WRITE_DIR (never outside it).
  effect: z.enum(["write-temp"]).optional(),
});
export const CatalogSchema = z.object({ tools: z.array(ToolSchema) });

/** A tool as served (and listed by GET /_control/catalog): defaults filled in. */
export type CatalogTool = z.output<typeof ToolSchema>;
/** A tool as a catalog may give it (POST /_control/catalog, fixtures/mcp/*.json). */
export type CatalogToolSpec = z.input<typeof ToolSchema>;
export type Catalog = z.output<typeof CatalogSchema>;

/** A catalog that does not check out; the control API answers it with 400. */
export class CatalogError extends Error {}

/** The catalog file (none: no tools); a bad file throws. */
export function loadCatalogFile(file: string): Catalog {
  if (!file) return { tools: [] };
  return CatalogSchema.parse(JSON.parse(fs.readFileSync(file, "utf8")));
}

export function parseCatalog(value: unknown): Catalog {
  const parsed = CatalogSchema.safeParse(value);
  if (!parsed.success) throw new CatalogError(`bad catalog: ${z.prettifyError(parsed.error)}`);
  const names = parsed.data.tools.map((t) => t.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new CatalogError(`bad catalog: tool ${dup} appears twice`);
  return parsed.data;
}

function lookup(ctx: unknown, dotted: string): string {
  let v = ctx;
  for (const k of dotted.split(".")) {
    if (v === null || typeof v !== "object") return "";
    v = (v as Record<string, unknown>)[k];
  }
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** A tool's result text with {{dotted.names}} from ctx filled in. */
export const render = (tpl: string, ctx: Record<string, unknown>): string => tpl.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, k: string) => lookup(ctx, k));
