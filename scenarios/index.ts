// Every scenario the lab knows, in the order `make lab` runs them.
import type { Scenario } from "../lab/scenario.ts";
import smoke from "./smoke.ts";
import pairAndRun from "./pair-and-run.ts";
import bundleReuse from "./bundle-reuse.ts";
import twoNodes from "./two-nodes.ts";
import capacity from "./capacity.ts";
import mcpRouting from "./mcp-routing.ts";
import mcpApprovalParks from "./mcp-approval-parks.ts";
import mcpReadonlyHint from "./mcp-readonly-hint.ts";
import mcpCatalogChange from "./mcp-catalog-change.ts";
import mcpCancelCall from "./mcp-cancel-call.ts";
import mcpCancelDiscovery from "./mcp-cancel-discovery.ts";
import mcpApprovalRestart from "./mcp-approval-restart.ts";
import mcpPartialStart from "./mcp-partial-start.ts";
import mcpServerLost from "./mcp-server-lost.ts";
import mcpNodeHosted from "./mcp-node-hosted.ts";
import reconnect from "./reconnect.ts";
import partitionHeal from "./partition-heal.ts";
import offlineDispatch from "./offline-dispatch.ts";
import midturnKillAtLaunch from "./midturn-kill-at-launch.ts";
import gatewayRestart from "./gateway-restart.ts";
import midturnNodeLoss from "./midturn-node-loss.ts";
import lossDuringInstall from "./loss-during-install.ts";

export const scenarios: Scenario[] = [smoke, pairAndRun, bundleReuse, twoNodes, capacity, mcpRouting, mcpApprovalParks, mcpReadonlyHint, mcpCatalogChange, mcpCancelCall, mcpCancelDiscovery, mcpApprovalRestart, mcpPartialStart, mcpServerLost, mcpNodeHosted, reconnect, partitionHeal, offlineDispatch, midturnKillAtLaunch, gatewayRestart, midturnNodeLoss, lossDuringInstall];
