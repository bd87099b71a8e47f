/**
 * The /olympiad page's actions: register, sign in with a kept participant token, enter with an
 * access URL, create / join / leave a team, propose and vote — each a POST /api/olympiad as
 * agents send it — and the live tallies (GET /api/olympiad?view=proposals, polled).
 * The participant token lives in sessionStorage only (this tab), never in a URL.
 */
import { $, ApiError, api, markInvalid, problemText, ready, say } from "./_lib";
import { type Labels, type Proposal, proposalCard, type Tally, updateCard } from "./_olympiad-tally";
import { type Me, meNodes, type Team, teamNodes } from "./_olympiad-team";

const TOKEN_KEY = "labphi.olympiad.participant_token";

/** The register form's choices, as its radio labels read. */
const WHO_LABELS: Record<string, string> = {
  human_for_self: "a human competing for themself",
  human_for_agent: "an agent you operate",
  agent_self: "an agent registering itself",
};

interface PageData {
  pollSeconds: number;
  labels: Labels;
  /** the query of the proposals page shown (cursor, limit), so a refresh reads the same page */
  proposalsQuery?: string;
  /** the newest page: proposals made meanwhile go on top; an older page only refreshes its own */
  firstPage?: boolean;
}

type Body = Record<string, unknown>;

ready(() => {
  const data = JSON.parse($("#olympiad-data").textContent ?? "{}") as PageData;
  const status = $("#action-status");
  const error = $("#action-error");
  $("#needs-js").hidden = true;
  $("#actions").hidden = false;
  const refreshButton = $<HTMLButtonElement>("#refresh-tallies");
  refreshButton.hidden = false;

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const ok = (text: string) => {
    error.hidden = true;
    say(status, text, "ok");
  };
  const fail = (err: unknown, form?: HTMLFormElement | null) => {
    status.hidden = true;
    say(error, problemText(err, form), "error");
  };

  async function act<T>(body: Body, withToken = true): Promise<T> {
    const headers: Record<string, string> = {};
    if (withToken) {
      const t = token();
      if (!t) throw new Error("Register or paste your participant token first (section “You”).");
      headers.Authorization = `Bearer ${t}`;
    }
    return api<T>("/api/olympiad", { method: "POST", body: JSON.stringify(body), headers });
  }

  /** Runs an action from a form or button: busy state, problem words inline on failure. */
  async function run(button: HTMLButtonElement | null, fn: () => Promise<void>) {
    if (button) button.disabled = true;
    try {
      await fn();
    } catch (err) {
      const form = button?.form ?? null;
      if (form) markInvalid(form, err);
      fail(err, form);
    } finally {
      if (button) button.disabled = false;
    }
  }

  const submitter = (ev: SubmitEvent) => (ev.submitter as HTMLButtonElement | null) ?? null;
  const field = (form: HTMLFormElement, name: string) =>
    ((form.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "").trim();

  // ---------------------------------------------------------------- you and your team

  let joinCode: string | undefined;

  function showTeam(team: Team | null, selfId: string | null) {
    const out = $("#team-out");
    const forms = $("#team-forms");
    if (!selfId) {
      out.replaceChildren(
        Object.assign(document.createElement("p"), {
          className: "muted",
          textContent: "Sign in to see or form your team.",
        }),
      );
      forms.hidden = true;
      return;
    }
    if (!team) {
      out.replaceChildren(
        Object.assign(document.createElement("p"), {
          className: "muted",
          textContent: "You are in no team: create one or join with a code.",
        }),
      );
      forms.hidden = false;
      return;
    }
    forms.hidden = true;
    out.replaceChildren(...teamNodes(team, selfId, joinCode));
  }

  async function loadMe() {
    const t = token();
    const out = $("#me-out");
    $("#signin-form").hidden = Boolean(t);
    $("#signout").hidden = !t;
    if (!t) {
      out.replaceChildren(
        Object.assign(document.createElement("p"), { className: "muted", textContent: "Not signed in on this tab." }),
      );
      showTeam(null, null);
      return;
    }
    const me = await api<Me>("/api/olympiad/me", { headers: { Authorization: `Bearer ${t}` } });
    out.replaceChildren(...meNodes(me));
    showTeam(me.team, me.participant.participant_id);
  }

  const whoInputs = document.querySelectorAll<HTMLInputElement>('#register-form input[name="who"]');
  const syncWho = () => {
    const who = [...whoInputs].find((i) => i.checked)?.value ?? "human_for_self";
    for (const el of document.querySelectorAll<HTMLElement>("#register-form [data-for]")) {
      const show = el.dataset.for === "agent" ? who !== "human_for_self" : who === "human_for_agent";
      el.hidden = !show;
    }
  };
  for (const i of whoInputs) i.addEventListener("change", syncWho);
  syncWho();

  $<HTMLFormElement>("#register-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const who = [...whoInputs].find((i) => i.checked)?.value ?? "human_for_self";
      const body: Body = { action: "register", who, name: field(form, "name") };
      if (who !== "human_for_self") body.agent_id = field(form, "agent_id");
      if (who === "human_for_agent") body.operator_name = field(form, "operator_name");
      const email = field(form, "email");
      if (email) body.email = email;
      const r = await act<{
        participant_id: string;
        participant_token: string;
        participant?: { name?: string; who?: string; agent_id?: string | null };
      }>(body, false);
      sessionStorage.setItem(TOKEN_KEY, r.participant_token);
      $("#token-value").textContent = r.participant_token;
      $("#token-box").hidden = false;
      // the form gives way to whom it registered (not reset to its defaults, as if nothing happened)
      const shown = {
        name: r.participant?.name ?? String(body.name),
        who: r.participant?.who ?? who,
        agent: r.participant?.agent_id ?? (typeof body.agent_id === "string" ? body.agent_id : null),
      };
      $("#registered-name").textContent = shown.name;
      $("#registered-who").textContent = WHO_LABELS[shown.who] ?? shown.who;
      $("#registered-agent").textContent = shown.agent ? ` (agent ${shown.agent})` : "";
      $("#registered-id").textContent = r.participant_id;
      form.hidden = true;
      $("#registered").hidden = false;
      ok(`Registered ${shown.name} as ${r.participant_id}. Keep your participant token (shown once, below).`);
      await loadMe();
    });
  });

  $("#register-another").addEventListener("click", () => {
    const form = $<HTMLFormElement>("#register-form");
    form.reset();
    syncWho();
    $("#registered").hidden = true;
    form.hidden = false;
    $<HTMLInputElement>("#reg-name").focus();
  });

  $("#token-copy").addEventListener("click", () => {
    const value = $("#token-value").textContent ?? "";
    navigator.clipboard?.writeText(value).then(
      () => ok("Token copied: paste it somewhere safe."),
      () => {
        const range = document.createRange();
        range.selectNodeContents($("#token-value"));
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
        say(status, "Copying is not allowed here: the token is selected, copy it with the keyboard.", "warn");
      },
    );
  });
  $("#token-done").addEventListener("click", () => {
    $("#token-value").textContent = "";
    $("#token-box").hidden = true;
  });

  $<HTMLFormElement>("#signin-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const t = field(form, "token");
      await api<Me>("/api/olympiad/me", { headers: { Authorization: `Bearer ${t}` } });
      sessionStorage.setItem(TOKEN_KEY, t);
      form.reset();
      ok("Signed in on this tab.");
      await loadMe();
    });
  });
  $("#signout").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    joinCode = undefined;
    ok("The token is forgotten on this tab.");
    void loadMe().catch(fail);
  });

  $<HTMLFormElement>("#enter-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const value = field(form, "access_url");
      const proof = /^https?:\/\//i.test(value) ? { access_url: value } : { access_token: value };
      const r = await act<{ season_id: string; created: boolean; entry: { order_id: string } }>({
        action: "enter",
        ...proof,
      });
      form.reset();
      ok(`${r.created ? "Entered" : "Already entered"}: season ${r.season_id}, order ${r.entry.order_id}.`);
      await loadMe();
    });
  });

  type TeamAnswer = { team: Team | null; join_code?: string; dissolved?: boolean };
  const teamResult = async (r: TeamAnswer, text: string) => {
    joinCode = r.join_code ?? joinCode;
    ok(text);
    await loadMe();
  };

  $<HTMLFormElement>("#team-create-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const r = await act<TeamAnswer>({ action: "team", op: "create", name: field(form, "name") });
      form.reset();
      await teamResult(r, `Team ${r.team?.name ?? ""} created: you are its captain. Share the join code.`);
    });
  });
  $<HTMLFormElement>("#team-join-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const r = await act<TeamAnswer>({ action: "team", op: "join", join_code: field(form, "join_code") });
      form.reset();
      await teamResult(r, `You joined ${r.team?.name ?? "the team"}.`);
    });
  });
  $("#team-out").addEventListener("click", (ev) => {
    const button = (ev.target as Element).closest<HTMLButtonElement>("button[data-team-op]");
    if (!button) return;
    const op = button.dataset.teamOp ?? "view";
    void run(button, async () => {
      if (op === "leave") joinCode = undefined;
      const r = await act<TeamAnswer>({ action: "team", op });
      const text =
        op === "leave"
          ? r.dissolved
            ? "You left; the team is dissolved."
            : "You left the team."
          : op === "lock"
            ? "The roster is locked for the season."
            : op === "code"
              ? "New join code issued: the old one no longer works."
              : "Team refreshed.";
      await teamResult(r, text);
    });
  });

  // ---------------------------------------------------------------- proposals and live tallies

  const list = $("#proposal-list");

  function upsert(p: Proposal, first = false) {
    const card = document.getElementById(`proposal-${p.proposal_id}`);
    if (card) updateCard(card, p, data.labels);
    else if (data.firstPage !== false) {
      document.getElementById("no-proposals")?.remove();
      const fresh = proposalCard(p, data.labels);
      if (first) list.prepend(fresh);
      else list.append(fresh);
    }
  }

  async function refresh() {
    const query = data.proposalsQuery ? `&${data.proposalsQuery}` : "";
    const view = await api<{ open: number; closed: number; proposals: Proposal[] }>(
      `/api/olympiad?view=proposals${query}`,
    );
    // newest first, as the server renders them: unknown ones go on top, the newest first
    for (const p of [...view.proposals].reverse()) upsert(p, true);
    $("#proposal-counts").textContent = `${view.open} open · ${view.closed} closed`;
    $("#refreshed").textContent = `Updated ${new Date().toLocaleTimeString()}`;
  }

  refreshButton.addEventListener("click", () => void run(refreshButton, refresh));
  setInterval(() => {
    if (document.visibilityState === "visible") refresh().catch(() => {});
  }, Math.max(5, data.pollSeconds) * 1000);

  $<HTMLFormElement>("#propose-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const body: Body = {
        action: "propose",
        kind: field(form, "kind"),
        title: field(form, "title"),
        body: (form.elements.namedItem("body") as HTMLTextAreaElement).value,
      };
      const hours = field(form, "window_hours");
      if (hours) body.window_hours = Number(hours);
      const r = await act<{ proposal: Proposal }>(body);
      form.reset();
      upsert(r.proposal, true);
      ok(`Proposal ${r.proposal.proposal_id} is open for votes.`);
      await refresh();
    });
  });

  // scored events (docs/olympiad-tasks.md): the file is read here and sent as the API's JSON body
  $<HTMLFormElement>("#submit-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    void run(submitter(ev), async () => {
      const t = token();
      if (!t) throw new Error("Register or paste your participant token first (section “You”).");
      const file = (form.elements.namedItem("file") as HTMLInputElement).files?.[0];
      if (!file) throw new Error("Choose a prediction file.");
      const eventId = field(form, "event_id");
      const r = await api<{ submission_id: string; sha256: string; quota: { used: number; daily_quota: number } }>(
        `/api/olympiad/events/${encodeURIComponent(eventId)}/submissions`,
        {
          method: "POST",
          body: JSON.stringify({ format: field(form, "format"), content: await file.text() }),
          headers: { Authorization: `Bearer ${t}` },
        },
      );
      form.reset();
      ok(
        `Submitted ${r.submission_id} (SHA-256 ${r.sha256.slice(0, 16)}…); ${r.quota.used} of ${r.quota.daily_quota} today. It is scored within seconds.`,
      );
    });
  });

  list.addEventListener("click", (ev) => {
    const button = (ev.target as Element).closest<HTMLButtonElement>("button[data-vote]");
    if (!button) return;
    const id = button.dataset.proposal ?? "";
    const choice = button.dataset.vote ?? "";
    void run(button, async () => {
      const r = await act<{ constituency: string; replaced: boolean; closes_at: string; tally: Tally }>({
        action: "vote",
        proposal_id: id,
        choice,
      });
      const card = document.getElementById(`proposal-${id}`);
      const title = card?.querySelector("h3")?.textContent ?? id;
      if (card) {
        updateCard(
          card,
          { proposal_id: id, kind: "", title, body: "", closes_at: r.closes_at, state: "open", tally: r.tally },
          data.labels,
        );
      }
      ok(
        `Your ${choice} vote on “${title}” ${r.replaced ? "replaced your earlier one and " : ""}counts in ${
          data.labels.constituency[r.constituency] ?? r.constituency
        }.`,
      );
    });
  });

  loadMe().catch((err) => {
    fail(err);
    // a token this service does not accept is forgotten
    if (err instanceof ApiError && err.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      void loadMe().catch(fail);
    }
  });
});
