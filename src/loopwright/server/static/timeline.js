// The run page's timeline: one DOM row per event worth showing, appended incrementally
// (rows are never re-rendered; a tool call's row is filled in when the call finishes).
"use strict";

const REDACTED = /\[REDACTED(?::[^\]]*)?\]/g;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.append(withRedactions(String(text)));
  return node;
}

// Text with every [REDACTED:...] marker shown as a visible badge (never as HTML).
function withRedactions(text) {
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(REDACTED)) {
    frag.append(text.slice(last, match.index));
    const mark = document.createElement("mark");
    mark.className = "redacted";
    mark.title = "scrubbed before the model, the log and this page saw it";
    mark.textContent = match[0];
    frag.append(mark);
    last = match.index + match[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

function fmtMs(ms) {
  if (ms === undefined || ms === null) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function fmtTime(ts) {
  return new Date(ts * 1000).toLocaleTimeString([], { hour12: false });
}

function pretty(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

// A task hook's step is recorded as `pre-task:NAME` or `post-task:NAME`.
function hookStep(step) {
  const match = /^(pre-task|post-task):(.+)$/.exec(step || "");
  return match ? { kind: match[1], name: match[2] } : null;
}

class Timeline {
  constructor(list, hooks) {
    this.list = list;
    this.hooks = hooks; // {onGate(gate), onGateGone(requestId), onFinished(ev), onStats(stats)}
    this.toolRows = new Map();
    this.stepRows = new Map();
    this.pendingGates = new Map();
    this.stats = { iteration: 0, maxIterations: 0, input: 0, output: 0, toolCalls: 0, cost: 0, modelCalls: 0, startedAt: null, finishedAt: null };
    this.frag = null;
    this.draft = null;
    this.refusal = null;
  }

  // Apply a batch of events (seq order) with one DOM insertion.
  applyBatch(events) {
    this.frag = document.createDocumentFragment();
    for (const ev of events) this.apply(ev);
    this.list.append(this.frag);
    this.frag = null;
    this.hooks.onStats(this.stats);
  }

  add(row) {
    (this.frag || this.list).append(row);
    return row;
  }

  row(kind, ev, title) {
    const li = el("li", `tl tl-${kind}`);
    li.dataset.seq = ev.seq;
    const head = el("div", "tl-head");
    head.append(el("span", "tl-kind", title), el("span", "tl-time", fmtTime(ev.ts)));
    li.append(head);
    return li;
  }

  apply(ev) {
    const handler = this[`on_${ev.type}`];
    if (handler) handler.call(this, ev);
  }

  on_run_started(ev) {
    this.kind = ev.kind; // "task": its outcome is a summary, not an answer
    this.stats.startedAt = ev.ts;
    const li = this.row("start", ev, ev.kind === "task" ? "Task run started" : "Run started");
    const tools = (ev.tools || []).join(", ") || "none";
    li.append(el("div", "tl-body muted", `model ${ev.model || "–"} · tools: ${tools}`));
    this.add(li);
  }

  on_iteration_started(ev) {
    this.stats.iteration = ev.iteration_number;
    this.stats.maxIterations = ev.max_iterations;
    const li = el("li", "tl tl-iteration");
    li.dataset.seq = ev.seq;
    li.append(el("span", "", `Iteration ${ev.iteration_number} of ${ev.max_iterations}`));
    if (this.hooks.onStep) this.hooks.onStep(li, ev);
    this.add(li);
  }

  // Token streaming: the reply as it is written, in a draft row that the complete reply's
  // rows (thought, answer) replace.
  on_model_text_delta(ev) {
    if (!this.draft) {
      this.draft = this.row("draft", ev, "Writing…");
      this.draft.append(el("div", "tl-body mono tl-draft-text", ""));
      this.add(this.draft);
    }
    this.draft.querySelector(".tl-draft-text").append(withRedactions(ev.text));
  }

  endDraft() {
    if (this.draft) this.draft.remove();
    this.draft = null;
  }

  // One row per model call: its latency and tokens, the thought, and (opened on demand)
  // the messages sent and the raw reply.
  on_model_response(ev) {
    this.endDraft();
    const usage = (ev.response && ev.response.usage) || {};
    this.stats.input += usage.input_tokens || 0;
    this.stats.output += usage.output_tokens || 0;
    this.stats.modelCalls += 1;
    const li = this.row("model", ev, "Model call");
    if (ev.thought) li.classList.add("tl-thought");
    const tokens = `${(usage.input_tokens || 0).toLocaleString()} in · ${(usage.output_tokens || 0).toLocaleString()} out`;
    li.querySelector(".tl-time").before(el("span", "tl-duration", fmtMs(ev.duration_ms)), el("span", "tl-tokens", tokens));
    if (ev.thought) li.append(el("div", "tl-body", ev.thought));
    else if (ev.actions && ev.actions.length) li.append(el("div", "tl-body muted", `calls ${ev.actions.map((a) => a.tool).join(", ")}`));
    const more = el("details", "tl-call");
    more.append(el("summary", "", "Messages sent and raw reply"));
    more.addEventListener("toggle", () => {
      if (more.open && !more.querySelector(".call-detail")) more.append(callDetail(ev.run_id, ev));
    });
    li.append(more);
    this.add(li);
    if (ev.final_answer !== null && ev.final_answer !== undefined) {
      const li = this.row("answer", ev, "Final answer");
      delete li.dataset.seq; // the model call's row stands for the event (one row per seq)
      li.dataset.answerOf = ev.seq;
      li.append(el("div", "tl-body", ev.final_answer));
      this.add(li);
    }
  }

  on_parse_error(ev) {
    this.endDraft();
    const li = this.row("warn", ev, ev.will_retry ? "Unreadable reply — correcting" : "Unreadable reply");
    li.append(el("div", "tl-body", ev.message));
    this.add(li);
  }

  toolRow(ev, iteration, name) {
    let li = this.toolRows.get(ev.call_id);
    if (li) return li;
    li = el("li", "tl tl-tool running");
    li.dataset.seq = ev.seq;
    li.dataset.callId = ev.call_id;
    const head = el("div", "tl-head");
    head.append(
      el("span", "tl-iter", `#${iteration}`),
      el("span", "tl-tool-name", name),
      el("span", "tl-status", "running…"),
      el("span", "tl-duration", ""),
      el("span", "tl-time", fmtTime(ev.ts)),
    );
    li.append(head, el("div", "tl-args mono", ""), el("div", "tl-result mono", ""));
    this.toolRows.set(ev.call_id, li);
    this.add(li);
    return li;
  }

  closeRow(li, outcome, label) {
    li.classList.remove("running");
    li.classList.add(outcome);
    li.querySelector(".tl-status").textContent = label;
  }

  // A task's tool step logs its call as `tool_call_started` (call id `RUN:STEP`) and its
  // result as `function_result`: the call belongs to the step's row, not a row of its own.
  stepOfCall(ev) {
    for (const [step, li] of this.stepRows) if (ev.call_id === `${ev.run_id}:${step}`) return li;
    return null;
  }

  on_tool_call_started(ev) {
    const step = this.stepOfCall(ev);
    if (step) {
      const args = el("div", "tl-args mono", JSON.stringify(ev.arguments));
      step.querySelector(".tl-result").before(args);
      return;
    }
    const li = this.toolRow(ev, ev.iteration_number, ev.tool_name);
    li.querySelector(".tl-args").replaceChildren(withRedactions(JSON.stringify(ev.arguments)));
    if (ev.child_run_id && !li.querySelector(".timeline.nested")) {
      // a sub-agent's run: its own timeline, nested under the call that started it
      const nested = el("ol", "timeline nested");
      nested.dataset.runId = ev.child_run_id;
      const link = el("a", "tl-child mono small", `sub-agent run ${ev.child_run_id} ↗`);
      link.href = `#/runs/${encodeURIComponent(ev.child_run_id)}`;
      link.addEventListener("click", (e) => e.stopPropagation());
      li.querySelector(".tl-time").before(link);
      li.append(nested);
      if (this.hooks.onChild) this.hooks.onChild(ev.child_run_id, nested);
    }
  }

  on_tool_call(ev) {
    this.stats.toolCalls += 1;
    const li = this.toolRow(ev, ev.iteration_number, ev.tool_name);
    this.closeRow(li, ev.is_error ? "error" : "ok", ev.is_error ? "error" : "ok");
    li.querySelector(".tl-duration").textContent = fmtMs(ev.duration_ms);
    li.querySelector(".tl-args").replaceChildren(withRedactions(ev.args_summary));
    const result = li.querySelector(".tl-result");
    result.replaceChildren(withRedactions(ev.result_summary));
    if (ev.redactions) {
      result.append(el("span", "tag redaction-count", `${ev.redactions} redacted`));
    }
    if (ev.truncated) result.append(el("span", "tag", "truncated"));
  }

  on_run_stopped(ev) {
    const li = this.row("warn", ev, `Stopped: ${ev.reason}`);
    li.append(el("div", "tl-body", ev.message));
    this.add(li);
  }

  on_run_error(ev) {
    const li = this.row("error", ev, `Error: ${ev.error_type}`);
    li.append(el("div", "tl-body", ev.message));
    this.add(li);
  }

  on_warning(ev) {
    const li = this.row("warn", ev, "Warning");
    li.append(el("div", "tl-body", ev.message));
    this.add(li);
  }

  on_verification(ev) {
    const li = this.row(ev.outcome === "pass" ? "ok" : "warn", ev, `Verification: ${ev.outcome}`);
    li.append(el("div", "tl-body mono", [...ev.passed.map((p) => `✓ ${p}`), ...ev.failed.map((f) => `✗ ${f}`)].join("\n")));
    this.add(li);
  }

  on_task_start(ev) {
    this.totalSteps = ev.total_steps;
    const li = this.row("start", ev, `Task ${ev.task_name}`);
    li.append(el("div", "tl-body muted", `${ev.total_steps} steps`));
    this.add(li);
  }

  on_step_start(ev) {
    const li = el("li", `tl tl-step running step-${ev.step_type}`);
    li.dataset.seq = ev.seq;
    li.dataset.step = ev.step;
    const head = el("div", "tl-head");
    head.append(
      el("span", "tl-iter", this.stepLabel(ev)),
      el("span", "tl-tool-name", hookStep(ev.step) ? hookStep(ev.step).name : ev.step),
      el("span", "tag", ev.step_type),
      el("span", "tl-status", "running…"),
      el("span", "tl-time", fmtTime(ev.ts)),
    );
    li.append(head, el("div", "tl-result mono", ""));
    this.stepRows.set(ev.step, li);
    this.add(li);
  }

  // `step 2/4`; a hook's steps are the hook's (`pre-task hook`), not numbered with the task's
  stepLabel(ev) {
    const hook = hookStep(ev.step);
    if (hook) return `${hook.kind} hook`;
    return this.totalSteps ? `step ${ev.step_index + 1}/${this.totalSteps}` : `step ${ev.step_index + 1}`;
  }

  stepBody(step) {
    const li = this.stepRows.get(step);
    return li ? li.querySelector(".tl-result") : null;
  }

  on_function_result(ev) {
    this.stats.toolCalls += 1;
    const open = this.toolRows.get(`${ev.run_id}:${ev.step}`);
    if (open) this.closeRow(open, ev.success ? "ok" : "error", ev.success ? "ok" : "error");
    const body = this.stepBody(ev.step);
    const text = ev.success ? `${ev.function} → ${pretty(ev.result)}` : `${ev.function} failed: ${ev.error}`;
    const line = el("div", ev.success ? "" : "error-text", text);
    if (body) body.append(line);
  }

  on_stream(ev) {
    const body = this.stepBody(ev.step);
    if (body) body.append(el("span", "stream", ev.chunk));
  }

  // A gate's question and its decision go inside their step's row (in the order they
  // happened), or in a row of their own when there is no step row.
  gateLine(ev, kind, text) {
    const body = this.stepBody(ev.step);
    if (body) {
      body.append(el("div", `gate-line ${kind}`, text));
      const status = this.stepRows.get(ev.step).querySelector(".tl-status");
      if (kind === "asked") status.textContent = "waiting for approval";
      return;
    }
    const li = this.row(kind === "asked" ? "gate" : kind === "approved" ? "ok" : "error", ev, text);
    this.add(li);
  }

  on_confirmation_required(ev) {
    this.gateLine(ev, "asked", `Approval needed: ${ev.message}`);
    const agent = ev.request_id.startsWith("approve_"); // an agent's tool call (agent/_approval.py)
    const gate = { request_id: ev.request_id, step: ev.step, message: ev.message, timeout_s: ev.timeout_s, ts: ev.ts, agent };
    this.pendingGates.set(ev.request_id, gate);
    this.hooks.onGate(gate);
  }

  dropGate(requestId) {
    if (this.pendingGates.delete(requestId)) this.hooks.onGateGone(requestId);
  }

  on_gate_decision(ev) {
    if (!ev.approved) this.refusal = ev; // the outcome says which refusal ended the run
    const verdict = ev.approved ? "Approved" : "Rejected";
    const why = ev.reason ? `: ${ev.reason}` : "";
    this.gateLine(ev, ev.approved ? "approved" : "rejected", `${verdict} by ${ev.decided_by}${why}`);
    this.dropGate(ev.request_id);
  }

  on_step_complete(ev) {
    const li = this.stepRows.get(ev.step);
    if (li) {
      this.closeRow(li, ev.status === "completed" ? "ok" : ev.status === "skipped" ? "skipped" : "error", ev.status);
      const body = li.querySelector(".tl-result");
      if (ev.error) body.append(el("div", "error-text", ev.error));
      else if (ev.status === "skipped") body.append(el("div", "muted", pretty(ev.result)));
    }
    for (const [id, gate] of this.pendingGates) if (gate.step === ev.step) this.dropGate(id);
  }

  on_change_recorded(ev) {
    const body = this.stepBody(ev.step);
    if (body) body.append(el("div", "muted", `backup of ${ev.resource_type} ${ev.resource_id} taken`));
  }

  on_task_complete(ev) {
    const li = this.row(ev.status === "completed" ? "ok" : "warn", ev, `Task ${ev.status}`);
    li.append(el("div", "tl-body", ev.summary));
    this.add(li);
  }

  on_run_finished(ev) {
    const usage = ev.usage || {};
    if (usage.input_tokens !== undefined) this.stats.input = usage.input_tokens;
    if (usage.output_tokens !== undefined) this.stats.output = usage.output_tokens;
    this.stats.cost = ev.cost || 0;
    this.stats.finishedAt = ev.ts;
    for (const id of [...this.pendingGates.keys()]) this.dropGate(id);
    // nothing is still running once the run has ended: a row left open never got its result
    for (const li of this.list.querySelectorAll(":scope > .running")) this.closeRow(li, "unfinished", "no result");
    const li = this.row(ev.status === "completed" ? "ok" : "warn", ev, `Run ${ev.status}`);
    if (ev.reason && ev.status !== "completed") li.append(el("div", "tl-body muted", `reason: ${ev.reason}`));
    this.add(li);
    this.hooks.onFinished(ev);
  }
}

window.Timeline = Timeline;
window.withRedactions = withRedactions;
window.el = el;
window.pretty = pretty;
