import type { AdminGuard } from "../../../http/admin-auth.js";
import type { App } from "../../../http/types.js";
import type { Participants } from "../../entry/participants.js";
import { taskAdminRoutes } from "./admin-routes.js";
import { eventRoutes } from "./event-routes.js";
import type { OlympiadTasks } from "./service.js";
import { submissionRoutes } from "./submission-routes.js";

/**
 * Scored olympiad events over HTTP (docs/olympiad-tasks.md): operators set a task
 * (`PUT /api/admin/olympiad/events/:event_id/task`, admin token, audited) and re-score after a
 * metric fix (admin-routes.ts); anyone reads the event, its public files, its public leaderboard
 * and, after the close, its key (event-routes.ts); entered participants submit, list their
 * submissions and select finals (`Authorization: Bearer <participant_token>`, submission-routes.ts).
 * The schemas are in schemas.ts.
 */

export { taskRequestSchema } from "./schemas.js";

export interface TaskRouteDeps {
  tasks: OlympiadTasks;
  participants: Participants;
  requireAdmin: AdminGuard;
}

export function taskRoutes(app: App, deps: TaskRouteDeps) {
  taskAdminRoutes(app, deps);
  eventRoutes(app, deps);
  submissionRoutes(app, deps);
}
