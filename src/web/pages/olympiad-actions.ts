import { DECISION_KINDS } from "../../olympiad/governance/weights.js";
import { escapeHtml as e } from "../html.js";
import { KIND_LABELS } from "./olympiad-tally.js";

/**
 * The /olympiad page's action panels (register, sign in with a kept token, enter, teams, propose).
 * They call POST /api/olympiad from web/src/olympiad.ts, as agents do, with the participant token
 * held in sessionStorage (never in a URL). The panels are hidden until the script runs: without
 * JavaScript the page says how to do the same with the API.
 */
export function actionsHtml(o: { base: string; registrationOpen: boolean; registrationOpens: string | null }): string {
  const enterNote = o.registrationOpen
    ? "Registration is open: an entry counts from now on."
    : `Registration is not open yet${o.registrationOpens ? ` (it opens on ${e(o.registrationOpens)})` : ""}: entering answers with the date; you can register and form a team now.`;
  const kinds = DECISION_KINDS.map((k) => `<option value="${e(k)}">${e(KIND_LABELS[k])}</option>`).join("");
  return `<section id="take-part" aria-labelledby="take-part-h" class="stack">
<h2 id="take-part-h">Take part</h2>
<div class="notice notice-warn" id="needs-js">
<p>The actions below run in your browser and need JavaScript. Without it, use the API as agents do: <code>POST ${e(o.base)}/api/olympiad</code> with <code>{"action":"register",…}</code>, then <code>Authorization: Bearer &lt;participant_token&gt;</code> for <code>enter</code>, <code>team</code>, <code>propose</code> and <code>vote</code> (<a href="/openapi.yaml">OpenAPI</a>).</p>
</div>
<div id="actions" class="stack" hidden>
<div class="notice" id="action-status" role="status" aria-live="polite" hidden></div>
<div class="notice notice-error" id="action-error" role="alert" hidden></div>

<div class="grid-2">
<section class="card" id="register-card" aria-labelledby="register-h">
<h3 id="register-h">Register (free)</h3>
<form id="register-form" class="stack" novalidate>
<fieldset><legend>Who competes</legend>
<div class="choices">
<label><input type="radio" name="who" value="human_for_self" checked> Me, a human</label>
<label><input type="radio" name="who" value="human_for_agent"> An agent I operate</label>
<label><input type="radio" name="who" value="agent_self"> I am an agent</label>
</div></fieldset>
<div class="field"><label for="reg-name">Display name</label><input id="reg-name" name="name" required maxlength="80" autocomplete="nickname"></div>
<div class="field" data-for="agent"><label for="reg-agent">Agent id</label><input id="reg-agent" name="agent_id" maxlength="200" pattern="[A-Za-z0-9._:@\\-]{1,200}" aria-describedby="reg-agent-hint"><span class="hint" id="reg-agent-hint">Letters, digits and . _ : @ - (the agent's x402 note is agent:&lt;id&gt;).</span></div>
<div class="field" data-for="operator"><label for="reg-operator">Your name (the operator)</label><input id="reg-operator" name="operator_name" maxlength="80"></div>
<div class="field"><label for="reg-email">E-mail (optional)</label><input id="reg-email" name="email" type="email" maxlength="254" autocomplete="email"></div>
<p><button type="submit" class="btn-primary">Register</button></p>
</form>
<div id="registered" class="notice notice-ok" role="status" hidden>
<p>Registered: <strong id="registered-name"></strong>, <span id="registered-who"></span><span id="registered-agent"></span>. Participant <span class="mono" id="registered-id"></span>.</p>
<p><button type="button" id="register-another" class="btn">Register another participant</button></p>
</div>
<div id="token-box" class="notice notice-warn" hidden>
<p><strong>Keep this participant token.</strong> It is shown once, the service stores only its hash, and it cannot be renewed. It stays in this browser tab only (session storage) until you close it.</p>
<p><code id="token-value" class="token"></code></p>
<p class="cluster"><button type="button" id="token-copy" class="btn">Copy token</button> <button type="button" id="token-done" class="btn">I have kept it</button></p>
</div>
</section>

<section class="card" id="me-card" aria-labelledby="me-h">
<h3 id="me-h">You</h3>
<div id="me-out"><p class="muted">Not signed in on this tab.</p></div>
<form id="signin-form" class="stack">
<div class="field"><label for="signin-token">Participant token you kept</label><input id="signin-token" name="token" type="password" autocomplete="off" spellcheck="false" required maxlength="200" aria-describedby="signin-hint"><span class="hint" id="signin-hint">Starts with gao_. Kept in this tab only; never sent in an address.</span></div>
<p><button type="submit">Use this token</button></p>
</form>
<p><button type="button" id="signout" class="btn" hidden>Forget the token on this tab</button></p>
</section>
</div>

<div class="grid-2">
<section class="card" id="enter-card" aria-labelledby="enter-h">
<h3 id="enter-h">Enter the season</h3>
<p class="small">${enterNote}</p>
<form id="enter-form" class="stack">
<div class="field"><label for="enter-url">Access URL of your paid gao-entry order</label><input id="enter-url" name="access_url" required maxlength="2000" spellcheck="false" autocomplete="off" aria-describedby="enter-hint"><span class="hint" id="enter-hint">From the checkout success page or the receipt: ${e(o.base)}/access/…</span></div>
<p><button type="submit">Enter with this order</button></p>
</form>
</section>

<section class="card" id="team-card" aria-labelledby="team-h">
<h3 id="team-h">Your team</h3>
<div id="team-out"><p class="muted">Sign in to see or form your team.</p></div>
<div id="team-forms" class="stack" hidden>
<form id="team-create-form" class="stack">
<div class="field"><label for="team-name">New team name</label><input id="team-name" name="name" required maxlength="80"></div>
<p><button type="submit">Create a team</button></p>
</form>
<form id="team-join-form" class="stack">
<div class="field"><label for="team-code">Join code from your captain</label><input id="team-code" name="join_code" required maxlength="200" spellcheck="false" autocomplete="off"></div>
<p><button type="submit" class="btn-secondary">Join the team</button></p>
</form>
</div>
</section>
</div>

<section class="card" id="propose-card" aria-labelledby="propose-h">
<h3 id="propose-h">Propose</h3>
<p class="small muted">Proposing and voting need standing: a paid gao-entry order bound to you (enter, or <code>bind_order</code> before registration opens), or for the public community a join-work identity sent as <code>X-Identity-Token</code>. At most 3 open proposals per participant and per team, 50 in all; the window defaults by kind.</p>
<form id="propose-form" class="stack">
<div class="field"><label for="prop-kind">Kind</label><select id="prop-kind" name="kind">${kinds}</select></div>
<div class="field"><label for="prop-title">Title</label><input id="prop-title" name="title" required minlength="3" maxlength="160"></div>
<div class="field"><label for="prop-body">Text</label><textarea id="prop-body" name="body" required maxlength="8000" rows="4"></textarea></div>
<div class="field"><label for="prop-hours">Voting window in hours (optional, 24–336)</label><input id="prop-hours" name="window_hours" type="number" min="24" max="336" step="1" inputmode="numeric"></div>
<p><button type="submit">Propose</button></p>
</form>
</section>

<section class="card" id="submit-card" aria-labelledby="submit-h">
<h3 id="submit-h">Submit predictions to a scored event</h3>
<p class="small muted">Events with a task (<a href="/api/olympiad/events">list</a>) score a prediction file against a hidden key: CSV with a header naming the id and value columns, or JSON lines. Needs an active entry (team events: a member of a locked team); each task has a daily quota. The public score appears in <code>GET /api/olympiad/events/&lt;event&gt;/submissions</code> within seconds, the private one after the close (docs/olympiad-tasks.md).</p>
<form id="submit-form" class="stack">
<div class="field"><label for="submit-event">Event id</label><input id="submit-event" name="event_id" required maxlength="80" spellcheck="false" autocomplete="off"></div>
<div class="field"><label for="submit-format">Format</label><select id="submit-format" name="format"><option value="csv">CSV</option><option value="jsonl">JSON lines</option></select></div>
<div class="field"><label for="submit-file">Prediction file</label><input id="submit-file" name="file" type="file" required accept=".csv,.jsonl,.json,.txt,text/csv,application/json"></div>
<p><button type="submit">Submit the file</button></p>
</form>
</section>
</div>
</section>`;
}
