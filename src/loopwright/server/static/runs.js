// The run list: runs with their sub-agent runs nested under them, a badge for a run that
// waits for approval, filters, refreshed every few seconds.
"use strict";

const FINISHED_STATUSES = ["completed", "stopped", "failed", "cancelled", "interrupted", "rolled_back"];

function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || seconds < 0) return "–";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return seconds < 10 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

// How long the run took (finished) or has been going (running).
function runDuration(run) {
  const end = run.status === "running" || run.status === "queued" ? Date.now() / 1000 : run.updated_at;
  return end - run.created_at;
}

// The badge text: a running run held at a gate (its own, or a sub-agent's) is waiting.
function shownStatus(run) {
  return run.status === "running" && run.waiting ? "waiting for approval" : run.status;
}

function statusCell(run) {
  const box = el("span", "status-cell");
  const status = el("span");
  badge(status, shownStatus(run));
  if (run.waiting && !run.waiting_for_approval) status.title = "a sub-agent run waits for approval";
  box.append(status);
  // the reason, when it says more than the status ("cancelled / cancelled" says nothing)
  if (run.reason && run.reason !== run.status && run.status !== "completed" && FINISHED_STATUSES.includes(run.status)) {
    box.append(el("span", "reason muted small", run.reason));
  }
  return box;
}

// Runs as a tree: a sub-agent run under its parent (when the parent is in the list).
function runTree(runs) {
  const byId = new Map(runs.map((run) => [run.run_id, { run, children: [] }]));
  const roots = [];
  for (const node of byId.values()) {
    const parent = node.run.parent_run_id && byId.get(node.run.parent_run_id);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const settle = (node) => {
    node.children.sort((a, b) => a.run.created_at - b.run.created_at);
    node.children.forEach(settle);
    node.run.waiting = node.run.waiting_for_approval || node.children.some((c) => c.run.waiting);
  };
  roots.forEach(settle);
  return roots;
}

function matches(run, filter) {
  // "waiting": held at a gate while running, or ended waiting for a decision (to resume)
  const waits = run.status === "waiting" || (run.waiting && run.status === "running");
  if (filter.status === "waiting" ? !waits : filter.status && run.status !== filter.status) return false;
  if (filter.kind && run.kind !== filter.kind) return false;
  const q = filter.q.trim().toLowerCase();
  return !q || [run.request, run.run_id, run.model].some((text) => (text || "").toLowerCase().includes(q));
}

function anyMatches(node, filter) {
  return matches(node.run, filter) || node.children.some((child) => anyMatches(child, filter));
}

// A model spec whose end is a file (`scripted:/long/path/replies.json`): when the cell is too
// narrow, the folder gives way first and the file name keeps its end; the tooltip has it all.
function modelCell(spec) {
  const model = el("span", "mono small model");
  model.title = spec || "";
  const cut = (spec || "").lastIndexOf("/");
  if (cut < 0) {
    model.textContent = spec || "–";
    return model;
  }
  // the marks keep the name's ends in place in a right-to-left box (its ellipsis at the start)
  model.append(el("span", "model-dir", spec.slice(0, cut + 1)), el("span", "model-file", `\u200e${spec.slice(cut + 1)}\u200e`));
  return model;
}

function durationCell(run) {
  const text = fmtDuration(runDuration(run));
  const cell = el("span", "duration", text);
  cell.title = text;
  return cell;
}

function runRow(run, depth, childCount, collapsed, onToggle) {
  const tr = document.createElement("tr");
  tr.dataset.runId = run.run_id;
  tr.dataset.status = shownStatus(run);
  tr.tabIndex = 0;
  if (depth) tr.classList.add("child");
  const id = el("span", "mono small run-id", run.run_id);
  id.title = run.run_id;
  const request = el("span", "request-cell");
  request.style.paddingLeft = `${depth * 1.3}rem`;
  if (depth) request.append(el("span", "nest muted", "↳ "));
  request.append(el("span", "request", run.request));
  if (childCount) {
    const toggle = el("button", "tag subruns", `${collapsed ? "▸" : "▾"} ${childCount} sub-agent run${childCount > 1 ? "s" : ""}`);
    toggle.type = "button";
    toggle.addEventListener("click", (e) => {
      e.stopPropagation();
      onToggle(run.run_id);
    });
    request.append(toggle);
  }
  const model = modelCell(run.model);
  const started = el("span", "muted", ago(run.created_at));
  started.title = new Date(run.created_at * 1000).toLocaleString();
  const cells = [
    statusCell(run), id, request, el("span", "muted", run.kind), model,
    el("span", "", fmtTokens(run)), el("span", "", fmtCost(run.cost)), durationCell(run), started,
  ];
  cells.forEach((cell, i) => {
    const td = document.createElement("td");
    if (i >= 5 && i <= 7) td.className = "num";
    td.append(cell);
    tr.append(td);
  });
  const open = () => (location.hash = `#/runs/${run.run_id}`);
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", (e) => e.key === "Enter" && open());
  return tr;
}

async function showRuns() {
  mount("tpl-runs");
  const tbody = view.querySelector("tbody");
  const empty = view.querySelector(".empty");
  const count = view.querySelector(".filters .count");
  const form = view.querySelector(".filters");
  const filter = { q: "", status: "", kind: "" };
  const collapsed = new Set();
  let runs = [];
  const render = () => {
    const rows = [];
    const add = (node, depth) => {
      rows.push(runRow(node.run, depth, node.children.length, collapsed.has(node.run.run_id), (id) => {
        if (!collapsed.delete(id)) collapsed.add(id);
        render();
      }));
      if (!collapsed.has(node.run.run_id)) node.children.forEach((child) => add(child, depth + 1));
    };
    const roots = runTree(runs).filter((node) => anyMatches(node, filter));
    roots.forEach((node) => add(node, 0));
    tbody.replaceChildren(...rows);
    empty.hidden = runs.length > 0;
    const filtered = filter.q.trim() || filter.status || filter.kind;
    count.textContent = filtered ? `${rows.length} of ${runs.length} runs` : `${runs.length} runs`;
  };
  for (const name of ["q", "status", "kind"]) {
    form.elements[name].addEventListener("input", () => {
      filter[name] = form.elements[name].value;
      render();
    });
  }
  const refresh = async () => {
    runs = (await api("/api/runs?limit=200")).runs;
    render();
  };
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 3000);
  state.cleanup = () => clearInterval(timer);
}

window.showRuns = showRuns;
window.fmtDuration = fmtDuration;
