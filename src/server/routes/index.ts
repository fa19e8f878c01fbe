/**
 * Every HTTP surface behind authentication, in one list: the native API, what describes the
 * service, and the drop-ins that trainers already speak. A new surface is a file here and a line
 * in ROUTES. (/healthz and the UI's static files, routes/ui.ts, sit before authentication, in app.ts.)
 */
import type { Router } from "express";
import type { RouteDeps } from "../http.js";
import { rewardRoutes } from "./reward.js";
import { metaRoutes } from "./meta.js";
import { openrlhfRoutes } from "./openrlhf.js";
import { sandboxFusionRoutes } from "./sandboxfusion.js";
import { nemoGymRoutes } from "./nemogym.js";
import { rubricRoutes } from "./rubrics.js";
import { storedRoutes } from "./stored.js";
import { databaseRoutes } from "./databases.js";
import { jobRoutes } from "./jobs.js";
import { jupyterRoutes, sessionRoutes } from "./sessions.js";
import { mcpRoutes } from "./mcp.js";

export const ROUTES: ((deps: RouteDeps) => Router)[] = [rewardRoutes, metaRoutes, openrlhfRoutes, sandboxFusionRoutes, nemoGymRoutes, rubricRoutes, databaseRoutes, jobRoutes, sessionRoutes, jupyterRoutes, storedRoutes, mcpRoutes];
