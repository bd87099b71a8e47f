import type { McpServer } from "@modelcontextprotocol/server";
import { plainText } from "../../http/text.js";
import { registerActionSchema, registerResultSchema } from "../../olympiad/entry/action-schemas.js";
import { registrationAnswer } from "../../olympiad/entry/participants.js";
import { voteActionSchema, voteResultSchema } from "../../olympiad/governance/schemas.js";
import type { McpCaller, McpDeps } from "../deps.js";
import { outputOf, run } from "../results.js";

/** olympiad_register, olympiad_vote: the same service calls as POST /api/olympiad's register and vote. */

export function registerOlympiadTools(server: McpServer, deps: McpDeps, caller?: McpCaller): void {
  const { participants, governance, identities, config, onError } = deps;
  const identityToken = plainText(300)
    .trim()
    .min(1)
    .optional()
    .describe(
      "a join-work identity token (POST /api/join-work): binds the identity to the participant, which gives public_community standing (one identity, one public vote per proposal)",
    );
  const baseUrl = config.baseUrl;

  server.registerTool(
    "olympiad_register",
    {
      title: "Register for the agent olympiad",
      description:
        "Registers a participant (an agent itself, a human, or a human for an agent) and returns its participant_token once: keep it, it is stored only hashed and authenticates every later action (olympiad_vote).",
      inputSchema: registerActionSchema.omit({ action: true }).extend({ identity_token: identityToken }),
      outputSchema: outputOf(registerResultSchema.loose()),
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ identity_token, ...args }) =>
      run(async () => {
        const identity = identity_token ? await identities.verify(identity_token) : null;
        return {
          ...registrationAnswer(
            await participants.register(args, identity?.id ?? null, { ip: caller?.ip ?? null }),
            baseUrl,
          ),
          next: [
            "Keep participant_token: it is shown once and authenticates olympiad_vote (and Authorization: Bearer <participant_token> over HTTP).",
            'Buy an entry with the buy tool (sku gao-entry), then enter over HTTP: POST /api/olympiad { "action": "enter" }.',
          ],
        };
      }, onError),
  );

  server.registerTool(
    "olympiad_vote",
    {
      title: "Vote on an olympiad proposal",
      description:
        "Casts (or replaces, inside the window) the participant's vote on a proposal: yes, no or abstain. Answers the weighted tally so far. Needs standing: a paid gao-entry order bound to the participant, an operator's appointment, or a join-work identity (identity_token) for the public community.",
      inputSchema: voteActionSchema.omit({ action: true }).extend({
        participant_token: plainText(300).trim().min(1).describe("the participant_token from olympiad_register"),
        identity_token: identityToken,
      }),
      outputSchema: outputOf(voteResultSchema.loose()),
      annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ participant_token, identity_token, proposal_id, choice }) =>
      run(async () => {
        let participant = await participants.authenticate(participant_token);
        if (identity_token)
          participant = await participants.bindIdentity(participant, (await identities.verify(identity_token)).id);
        return governance.vote(participant, { action: "vote", proposal_id, choice });
      }, onError),
  );
}
