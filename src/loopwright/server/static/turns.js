// A run's page beyond the run itself: its conversation as one thread (the turns before and
// after it, linked), a follow-up box once it has ended, "fork here" on each step, and a run
// that ended waiting for a decision (decide its gates, then resume it).
"use strict";

const FOLLOWABLE = ["completed", "stopped", "failed", "cancelled"];

function runLink(runId, text) {
  const link = el("a", "mono", text || runId);
  link.href = `#/runs/${encodeURIComponent(runId)}`;
  return link;
}

function clip(text, most) {
  const value = text || "";
  return value.length > most ? `${value.slice(0, most - 1)}…` : value;
}

// The conversation `run` is a turn of, oldest first: each turn's request, status and answer;
// every turn but this one a link. Nothing when the run is a conversation of one turn.
function showConversation(box, run) {
  const turns = run.turns || [];
  box.hidden = turns.length < 2;
  if (box.hidden) return;
  const list = el("ol", "turns");
  turns.forEach((turn, index) => {
    const item = el("li", turn.run_id === run.run_id ? "turn current" : "turn");
    item.dataset.runId = turn.run_id;
    const head = el("div", "turn-head");
    const label = turn.run_id === run.run_id ? el("strong", "", `Turn ${index + 1} · this run`) : runLink(turn.run_id, `Turn ${index + 1}`);
    const status = el("span", "badge");
    badge(status, turn.status);
    head.append(label, status);
    item.append(head, el("div", "turn-request", turn.request));
    if (turn.answer) item.append(el("div", "turn-answer muted", clip(turn.answer, 300)));
    list.append(item);
  });
  const title = el("div", "panel-head");
  title.append(el("h2", "", `Conversation · ${turns.length} turns`));
  box.replaceChildren(title, list);
}

// The follow-up box of an agent run that has ended: the next turn starts after it, and its
// page opens.
function showFollowUp(box, run, status) {
  box.hidden = run.kind !== "agent" || !FOLLOWABLE.includes(status);
  if (box.hidden || box.querySelector("form")) return;
  const form = el("form", "follow-up-form");
  const text = el("textarea");
  Object.assign(text, { name: "request", rows: 2, placeholder: "Ask a follow-up: the agent sees this conversation so far" });
  const error = el("p", "form-error");
  error.hidden = true;
  const send = el("button", "btn primary", "Ask");
  send.type = "submit";
  form.append(el("h2", "", "Follow up"), text, error, send);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.hidden = true;
    send.disabled = true;
    try {
      const next = await api("/api/runs", { method: "POST", body: { request: text.value, after: run.run_id } });
      location.hash = `#/runs/${encodeURIComponent(next.run_id)}`;
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
      send.disabled = false;
    }
  });
  box.replaceChildren(form);
}

// "Fork here" on the row of step `step`: a new run that takes steps 1 to step-1 from this
// run's log (nothing made again) and runs step `step` on live, with the request (and
// model) given. The button shows once the run has ended (the page's `forkable` class).
function addForkButton(row, run, step) {
  const button = el("button", "btn small fork-here", "Fork here");
  button.type = "button";
  button.title = step > 1 ? `A new run: steps 1–${step - 1} taken from this run's log, step ${step} on live` : "A new run from the start, with another request or model";
  button.addEventListener("click", () => {
    const open = row.querySelector(".fork-form");
    if (open) return open.remove();
    row.append(forkForm(run, step - 1));
  });
  row.append(button);
}

function forkForm(run, at) {
  const form = el("form", "fork-form");
  const request = el("textarea");
  Object.assign(request, { name: "request", rows: 2, value: run.request });
  const model = el("input");
  Object.assign(model, { name: "model", placeholder: `model (default: ${run.model || "the same"})`, autocomplete: "off" });
  const error = el("p", "form-error");
  error.hidden = true;
  const start = el("button", "btn primary", `Fork after step ${at}`);
  start.type = "submit";
  form.append(request, model, error, start);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.hidden = true;
    const body = { at, request: request.value };
    if (model.value.trim()) body.model = model.value.trim();
    try {
      const fork = await api(`/api/runs/${encodeURIComponent(run.run_id)}/fork`, { method: "POST", body });
      location.hash = `#/runs/${encodeURIComponent(fork.run_id)}`;
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    }
  });
  return form;
}

// "Fork of": the run and step a fork's first steps were taken from.
function showForkOf(field, run) {
  if (!run.fork_of) return;
  field.replaceChildren(runLink(run.fork_of.run_id), ` · after step ${run.fork_of.step}`);
  field.closest("div").hidden = false;
}

// A run that ended waiting for a decision (or was interrupted): the resume button, and for
// a waiting run, what to do. Resuming opens the page again, following the run live.
function showResumable(button, note, status) {
  const waiting = status === "waiting";
  button.hidden = !(waiting || status === "interrupted");
  note.hidden = !waiting;
  note.textContent = waiting ? "This run ended waiting for a decision: approve or reject each call below, then resume it." : "";
}

function resumeOnClick(button, runId) {
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await api(`/api/runs/${encodeURIComponent(runId)}/resume`, { method: "POST" });
      route();
    } catch (failure) {
      button.disabled = false;
      alert(failure.message);
    }
  });
}
