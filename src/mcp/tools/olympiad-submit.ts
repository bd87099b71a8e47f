import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { idText, plainText } from "../../http/text.js";
import type { McpDeps } from "../deps.js";
import { outputOf, run } from "../results.js";

/**
 * olympiad_submit: the same service call as POST /api/olympiad/events/:event_id/submissions
 * (docs/olympiad-tasks.md): validated at once (row and column of every problem), stored with its
 * SHA-256 under the entrant's daily quota, scored by the sweep within seconds.
 */

const submittedSchema = z.looseObject({
  submission_id: z.string(),
  event_id: z.string(),
  entrant: z.string(),
  sha256: z.string(),
  status: z.string(),
  quota: z.looseObject({ used: z.number().int(), daily_quota: z.number().int(), resets_at: z.string() }),
});

export function registerOlympiadSubmitTool(server: McpServer, deps: McpDeps): void {
  const { participants, olympiadTasks, onError } = deps;
  server.registerTool(
    "olympiad_submit",
    {
      title: "Submit predictions to a scored olympiad event",
      description:
        "Submits a prediction file (CSV with a header naming the id and value columns, or JSON lines) to an event's task. Needs the participant_token and an active entry (team events: a member of a locked team). Answers the submission id, its SHA-256 and the quota used; the public score appears in GET /api/olympiad/events/<event_id>/submissions within seconds, the private score after the close.",
      inputSchema: z.object({
        participant_token: plainText(300).trim().min(1).describe("the participant_token from olympiad_register"),
        event_id: idText(80).describe("one of the 40 events of /olympiad.json with a scored task"),
        format: z.enum(["csv", "jsonl"]),
        content: z.string().describe("the prediction file's text (UTF-8)"),
      }),
      outputSchema: outputOf(submittedSchema),
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ participant_token, event_id, format, content }) =>
      run(async () => {
        const participant = await participants.authenticate(participant_token);
        return olympiadTasks.submit(participant, event_id, { format, content });
      }, onError),
  );
}
