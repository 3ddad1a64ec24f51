// loopwright dashboard: run list, start form, live run page. Plain JS, no build step.
"use strict";

const state = { token: localStorage.getItem("loopwright.token") || "", info: null, cleanup: null };
const view = document.getElementById("view");

// --- API ------------------------------------------------------------------------------

class ApiFailure extends Error {
  constructor(status, error) {
    super(error && error.field ? `${error.field}: ${error.message.replace(`${error.field}: `, "")}` : (error && error.message) || `HTTP ${status}`);
    this.status = status;
    this.field = error && error.field;
  }
}

async function api(path, options = {}) {
  const headers = { Accept: "application/json", ...(options.headers || {}) };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) askToken();
  if (!response.ok) throw new ApiFailure(response.status, data.error);
  return data;
}

function askToken() {
  const dialog = document.getElementById("token-dialog");
  if (!dialog.open) dialog.showModal();
}

document.getElementById("token-form").addEventListener("submit", () => {
  state.token = document.getElementById("token-input").value.trim();
  localStorage.setItem("loopwright.token", state.token);
  state.info = null;
  route();
});

async function info() {
  if (!state.info) {
    state.info = await api("/api/info");
    document.getElementById("who").textContent = state.info.auth ? `tenant ${state.info.tenant}` : "";
  }
  return state.info;
}

// --- helpers --------------------------------------------------------------------------

function mount(templateId) {
  const node = document.getElementById(templateId).content.cloneNode(true);
  view.replaceChildren(node);
  return view;
}

function fmtTokens(run) {
  const total = (run.input_tokens || 0) + (run.output_tokens || 0);
  return total ? total.toLocaleString() : "–";
}

function fmtCost(cost) {
  return cost ? `$${cost.toFixed(4)}` : "–";
}

function ago(ts) {
  const s = Math.max(0, Date.now() / 1000 - ts);
  if (s < 60) return `${Math.round(s)}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(ts * 1000).toLocaleDateString();
}

function badge(node, status) {
  node.textContent = status;
  node.className = `badge status-${status === "waiting for approval" ? "waiting" : status}`;
}

// --- start form -----------------------------------------------------------------------

async function showNew() {
  mount("tpl-new");
  let kind = "agent";
  // the tabs answer before the server's info arrives: a click while it loads is not lost
  view.querySelectorAll(".tab").forEach((tab) =>
    tab.addEventListener("click", () => {
      kind = tab.dataset.kind;
      view.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t === tab));
      view.querySelector(".kind-agent").hidden = kind !== "agent";
      view.querySelector(".kind-task").hidden = kind !== "task";
      view.querySelector(".form-error").hidden = true; // an error is about the other tab's form
    }),
  );
  const server = await info();
  const form = view.querySelector("#run-form");
  form.model.placeholder = server.default_model;
  // the models this server offers (its --model and --allow-model entries; a `provider:*`
  // entry stands for any model of that provider)
  const offered = view.querySelector("#offered-models");
  for (const model of server.models || []) offered.append(new Option(model.endsWith("*") ? `${model} (any ${model.slice(0, -1)}… model)` : model, model));
  view.querySelector(".model-hint").textContent = (server.models || []).length ? `Offered: ${server.models.join(", ")}` : "";
  const toolBox = view.querySelector(".tools");
  for (const name of server.tools) {
    const label = el("label", "check");
    const box = document.createElement("input");
    Object.assign(box, { type: "checkbox", name: "tools", value: name, checked: name === "echo" });
    label.append(box, ` ${name}`);
    toolBox.append(label);
  }
  const select = form.task;
  for (const task of server.tasks) select.append(new Option(task.name, task.name));
  const taskInputs = () => {
    const task = server.tasks.find((t) => t.name === select.value);
    view.querySelector(".task-description").textContent = task ? task.description : "No tasks on this server (serve with --tasks DIR).";
    const box = view.querySelector(".inputs");
    box.replaceChildren();
    for (const [name, def] of Object.entries(task ? task.inputs : {})) {
      const label = el("label", "", `${name}${def === null ? " *" : ""}`);
      const input = document.createElement("input");
      Object.assign(input, { name: `input:${name}`, placeholder: def === null ? "required" : String(def) });
      label.append(input);
      box.append(label);
    }
  };
  select.addEventListener("change", taskInputs);
  taskInputs();
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const error = view.querySelector(".form-error");
    error.hidden = true;
    try {
      const run = await api("/api/runs", { method: "POST", body: kind === "agent" ? agentBody(form) : taskBody(form) });
      location.hash = `#/runs/${run.run_id}`;
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    }
  });
}

function agentBody(form) {
  const body = { request: form.prompt.value, tools: [...form.querySelectorAll("input[name=tools]:checked")].map((b) => b.value) };
  if (form.model.value.trim()) body.model = form.model.value.trim();
  if (form.max_iterations.value) body.options = { max_iterations: Number(form.max_iterations.value) };
  return body;
}

function taskBody(form) {
  const inputs = {};
  for (const input of form.querySelectorAll("input[name^='input:']")) {
    if (input.value !== "") inputs[input.name.slice(6)] = input.value;
  }
  const body = { task: form.task.value, inputs };
  if (form.task_model.value.trim()) body.model = form.task_model.value.trim();
  return body;
}

// --- run page -------------------------------------------------------------------------

// Events for a run page's two views of a run: its timeline and its span waterfall.
function bothViews(timeline, waterfall) {
  return {
    applyBatch(events) {
      if (waterfall) waterfall.applyBatch(events); // first: a sub-agent's spans have a place
      timeline.applyBatch(events);
    },
  };
}

async function showRun(runId) {
  mount("tpl-run");
  const field = (name) => view.querySelector(`[data-field=${name}]`);
  const run = await api(`/api/runs/${encodeURIComponent(runId)}`);
  let status = run.status;
  field("request").replaceChildren(withRedactions(run.request));
  field("run_id").textContent = run.run_id;
  field("model").textContent = run.model || "–";
  field("model").title = run.model || "";
  if (run.parent_run_id) {
    const parent = el("a", "mono", run.parent_run_id);
    parent.href = `#/runs/${encodeURIComponent(run.parent_run_id)}`;
    field("parent").replaceChildren(parent);
    field("parent").closest("div").hidden = false;
  }
  showForkOf(field("fork_of"), run);
  showConversation(view.querySelector("[data-testid=conversation]"), run);
  const page = view.querySelector(".run-page");
  const followUp = view.querySelector("[data-testid=follow-up]");
  const resume = view.querySelector("[data-action=resume]");
  resumeOnClick(resume, runId);
  // what an ended run offers: a follow-up, "fork here" on its steps, resuming one that waits
  const showEnded = () => {
    showFollowUp(followUp, run, status);
    page.classList.toggle("forkable", run.kind === "agent" && status !== "running" && status !== "queued");
    showResumable(resume, view.querySelector("[data-testid=waiting-note]"), status);
  };
  showEnded();
  const cancel = view.querySelector("[data-action=cancel]");
  cancel.hidden = !run.live;
  cancel.addEventListener("click", () => api(`/api/runs/${runId}/cancel`, { method: "POST" }).catch((f) => alert(f.message)));

  const gates = view.querySelector(".gates");
  const outcome = view.querySelector(".outcome");
  // the badge: a running run with an approval pending (its own or a sub-agent's) waits
  const showStatus = () => {
    const waiting = status === "running" && gates.querySelector(".gate-card:not(.decided)") !== null;
    badge(field("status"), waiting ? "waiting for approval" : status);
  };
  const addGate = (id, gate) => {
    const card = gateCard(id, gate, showStatus);
    if (status === "waiting") card.querySelector(".gate-text .small").textContent = "Nobody waited at this call: the run ended here. Decide, then resume the run.";
    gates.append(card);
    showStatus();
  };
  const dropGate = (id) => {
    gates.querySelector(`[data-request-id="${CSS.escape(id)}"]`)?.remove();
    showStatus();
  };
  showStatus();
  const waterfall = new Waterfall(view.querySelector("[data-testid=spans]"));
  // still going: here, or in another process that appends to the same store
  const ongoing = run.status === "running" || run.status === "queued";
  waterfall.live = ongoing;
  const children = [];
  // A sub-agent's run (and its own sub-agents'), live in a timeline nested under its call
  // and in the waterfall under its span; its approvals appear with the others.
  const nestChild = (childId, list) => {
    const child = new Timeline(list, {
      onGate: (gate) => addGate(childId, gate),
      onGateGone: dropGate,
      onStats: () => {},
      onFinished: () => {},
      onChild: nestChild,
    });
    const quiet = { textContent: "", className: "", checked: false };
    const spans = waterfall.findChild(childId);
    const live = new LiveEvents(childId, bothViews(child, spans), quiet, quiet, state.token);
    live.waitForRun = true;
    children.push(live);
    live.connect();
  };
  const stats = { startedAt: run.created_at, finishedAt: null };
  const showDuration = () => {
    const end = stats.finishedAt !== null ? stats.finishedAt : ongoing ? Date.now() / 1000 : run.updated_at;
    field("duration").textContent = fmtDuration(end - stats.startedAt);
  };
  const timeline = new Timeline(view.querySelector(".timeline"), {
    onChild: nestChild,
    onStep: (row, ev) => addForkButton(row, run, ev.iteration_number),
    onGate: (gate) => addGate(runId, gate),
    onGateGone: dropGate,
    onStats: (s) => {
      const called = s.modelCalls > 0 || s.input + s.output > 0; // a task run may call none
      field("iteration").textContent = s.maxIterations ? `${s.iteration} / ${s.maxIterations}` : "–";
      field("model_calls").textContent = s.modelCalls || "–";
      field("tokens").textContent = called ? (s.input + s.output).toLocaleString() : "–";
      field("cost").textContent = fmtCost(s.cost); // – : no model call, or no price known
      field("tool_calls").textContent = s.toolCalls;
      if (s.startedAt !== null) stats.startedAt = s.startedAt;
      stats.finishedAt = s.finishedAt;
      showDuration();
    },
    onFinished: (ev) => {
      status = ev.status;
      waterfall.live = false;
      showStatus();
      cancel.hidden = true;
      showOutcome(outcome, ev, timeline);
      showEnded();
    },
  });
  const live = new LiveEvents(runId, bothViews(timeline, waterfall), field("conn"), field("follow"), state.token);
  window.loopwrightLive = live; // for the browser console (and the browser tests)
  live.connect();
  const ticking = setInterval(() => {
    if (stats.finishedAt !== null || !ongoing) return;
    showDuration();
    waterfall.layout();
  }, 1000);
  state.cleanup = () => {
    clearInterval(ticking);
    live.close();
    for (const child of children) child.close();
  };
}

function gateCard(runId, gate, onDecided) {
  const card = el("div", "gate-card");
  card.dataset.requestId = gate.request_id;
  const text = el("div", "gate-text");
  const waits = gate.timeout_s >= 120 ? `${Math.round(gate.timeout_s / 60)} min` : `${gate.timeout_s} s`;
  const deadline = new Date((gate.ts + gate.timeout_s) * 1000).toLocaleTimeString([], { hour12: false });
  text.append(
    el("strong", "", `Approval needed · ${gate.step}`),
    el("p", "", gate.message),
    el("p", "muted small", `Waits up to ${waits} (until ${deadline}); without a decision ${gate.agent ? "the call is not run" : "the task stops"}.`),
  );
  const approve = el("button", "btn primary approve", "Approve");
  const reject = el("button", "btn danger reject", "Reject");
  const reason = el("input", "gate-reason");
  reason.placeholder = gate.agent ? "reason (optional; the agent sees it)" : "reason (optional)";
  reason.maxLength = 500;
  const reviewer = el("input", "gate-by"); // who decides: kept in this browser for next time
  reviewer.placeholder = "your name (optional)";
  reviewer.maxLength = 80;
  reviewer.value = localStorage.getItem("loopwright.reviewer") || "";
  const decide = async (ok) => {
    approve.disabled = reject.disabled = true;
    const body = { approve: ok };
    if (reason.value.trim()) body.reason = reason.value.trim();
    if (reviewer.value.trim()) body.by = reviewer.value.trim();
    localStorage.setItem("loopwright.reviewer", reviewer.value.trim());
    try {
      await api(`/api/runs/${runId}/gates/${encodeURIComponent(gate.request_id)}`, { method: "POST", body });
      card.classList.add("decided");
      onDecided();
    } catch (failure) {
      approve.disabled = reject.disabled = false;
      alert(failure.message);
    }
  };
  approve.addEventListener("click", () => decide(true));
  reject.addEventListener("click", () => decide(false));
  const buttons = el("div", "gate-buttons");
  buttons.append(reviewer, reason, reject, approve);
  card.append(text, buttons);
  return card;
}

function showOutcome(box, ev, timeline) {
  box.hidden = false;
  box.className = `outcome panel outcome-${ev.status}`;
  const parts = [];
  if (ev.status === "completed" && timeline.kind === "task") {
    parts.push(el("h2", "", "Task completed"), el("p", "task-summary", ev.answer || ""));
  } else if (ev.status === "completed") {
    parts.push(el("h2", "", "Answer"), el("div", "answer", ev.answer || ""));
  } else {
    parts.push(el("h2", "", `Run ${ev.status}`));
    if (ev.reason && ev.reason !== ev.status) parts.push(el("p", "", `Reason: ${ev.reason}`));
    const refused = timeline.refusal;
    if (refused) {
      const why = refused.reason ? `: ${refused.reason}` : " (no reason given)";
      parts.push(el("p", "refusal", `Approval refused at ${refused.step} by ${refused.decided_by}${why}`));
    }
    if (ev.answer) parts.push(el("div", "answer", ev.answer));
    const partial = ev.partial || {};
    if (partial.last_thought) parts.push(el("p", "muted", `Last thought: ${partial.last_thought}`));
    if (partial.steps && partial.steps.length) {
      parts.push(el("h3", "", `Work kept (${partial.steps.length} steps)`));
      const list = el("ol", "partial-steps mono");
      for (const step of partial.steps) list.append(el("li", "", pretty(step)));
      parts.push(list);
    } else if (Object.keys(partial).length) {
      parts.push(el("pre", "mono", pretty(partial)));
    }
  }
  box.replaceChildren(...parts);
}

// --- routing --------------------------------------------------------------------------

async function route() {
  if (state.cleanup) state.cleanup();
  state.cleanup = null;
  const hash = location.hash || "#/";
  info().catch(() => {}); // who is signed in (and the token prompt, if one is needed)
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", hash === a.getAttribute("href")));
  try {
    const match = hash.match(/^#\/runs\/([^/]+)$/);
    if (match) await showRun(decodeURIComponent(match[1]));
    else if (hash === "#/new") await showNew();
    else await showRuns();
  } catch (failure) {
    const box = el("section", "panel");
    box.append(el("h1", "", failure.status === 404 ? "Not found" : "Something went wrong"), el("p", "error-text", failure.message));
    view.replaceChildren(box);
  }
}

window.addEventListener("hashchange", route);
route();
