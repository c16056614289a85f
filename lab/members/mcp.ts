// An MCP tool server (official TypeScript SDK, Streamable HTTP at /mcp) serving a catalog
// from fixtures/mcp/*.json; every request recorded, control API in lab/clients/mcp.ts.
// Ready on /healthz.
import path from "node:path";
import { McpControl } from "../clients/mcp.ts";
import { FIXTURES } from "../core/paths.ts";
import { mcpContainers, type TopologySpec } from "../definitions/spec.ts";
import { MemberContainer, type LabContext, type LabMembers } from "./member.ts";

type McpServer = ReturnType<typeof mcpContainers>[number];

export class McpContainer extends MemberContainer {
  constructor(lab: LabContext, server: McpServer) {
    super(lab, "mcp", server.name, lab.images.mcp.tag);
    this.withEnvironment({ MCP_PORT: String(server.port), MCP_NAME: server.name, MCP_CATALOG: `/fixtures/mcp/${server.catalog}.json`, MCP_ALLOWED_HOSTS: server.name })
      .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "mcp"), target: "/fixtures/mcp" }])
      .withWaitStrategy(this.httpReady(server.port, "/healthz").withStartupTimeout(20_000));
  }
}

/** Control API of an MCP server container (requests it saw, catalog, holds). */
export function mcpControl(lab: LabMembers, name: string): McpControl {
  return new McpControl(`http://${lab.member(name).ip}:${mcpServer(lab.spec, name).port}`);
}

function mcpServer(spec: TopologySpec, name: string): McpServer {
  const all = mcpContainers(spec);
  const m = all.find((x) => x.name === name);
  if (!m) throw new Error(`no MCP server '${name}' in this topology (servers: ${all.map((x) => x.name).join(", ") || "none"})`);
  return m;
}
