// The run page's span waterfall (model calls, tool calls, task steps, approvals and
// sub-agent runs on one time axis, with their durations) and a model call's details (the
// messages sent, the raw reply, tokens, latency).
"use strict";

function fmtTokenCount(n) {
  return (n || 0).toLocaleString();
}

function usageOf(ev) {
  return (ev.response && ev.response.usage) || {};
}

// --- a model call's details --------------------------------------------------------------

// Where an embedded model's call went (the reply's `timings`), in the order it happened.
const PHASES = [
  ["load_ms", "loading the model"],
  ["wait_ms", "waiting for the model"],
  ["prompt_ms", "evaluating the prompt"],
  ["generate_ms", "generating"],
];

function phasesOf(ev) {
  const timings = (ev.response && ev.response.timings) || {};
  return PHASES.filter(([key]) => (timings[key] || 0) >= 50).map(([key, name]) => ({ key, name, ms: timings[key] }));
}

function perSecond(tokens, ms) {
  return ms > 0 && tokens ? ` (${(tokens / (ms / 1000)).toFixed(1)} tokens/s)` : "";
}

function callFacts(ev) {
  const usage = usageOf(ev);
  const reply = ev.response || {};
  const facts = el("dl", "call-facts");
  const fact = (name, value) => {
    const box = el("div");
    box.append(el("dt", "", name), el("dd", "", value));
    facts.append(box);
  };
  fact("Latency", fmtMs(ev.duration_ms));
  fact("Input tokens", fmtTokenCount(usage.input_tokens));
  if (usage.cached_input_tokens) fact("Cached", fmtTokenCount(usage.cached_input_tokens));
  fact("Output tokens", fmtTokenCount(usage.output_tokens));
  if (reply.model) fact("Model", reply.model);
  if (reply.finish_reason) fact("Finish reason", reply.finish_reason);
  const evaluated = (usage.input_tokens || 0) - (usage.cached_input_tokens || 0);
  for (const phase of phasesOf(ev)) {
    const rate = phase.key === "prompt_ms" ? perSecond(evaluated, phase.ms) : phase.key === "generate_ms" ? perSecond(usage.output_tokens, phase.ms) : "";
    fact(phase.name[0].toUpperCase() + phase.name.slice(1), fmtMs(phase.ms) + rate);
  }
  if (reply.timings && reply.timings.threads) fact("Threads", String(reply.timings.threads));
  fact("Iteration", String(ev.iteration_number));
  return facts;
}

function messageBox(message) {
  const box = el("div", `call-msg role-${message.role}`);
  const head = el("div", "call-msg-head");
  head.append(el("span", "call-role", message.role));
  if (message.name) head.append(el("span", "muted small", message.name));
  box.append(head);
  if (message.content) box.append(el("pre", "call-text", message.content));
  if (message.tool_calls && message.tool_calls.length) box.append(el("pre", "call-text call-tools", pretty(message.tool_calls)));
  return box;
}

// The request is rebuilt by the server from the run's log (GET .../model_calls/SEQ), and
// shown only when it matches the fingerprint recorded with the call.
async function fillRequest(box, runId, seq) {
  try {
    const call = await api(`/api/runs/${encodeURIComponent(runId)}/model_calls/${seq}`);
    if (!call.request) {
      box.replaceChildren(el("p", "muted call-problem", `Not available: ${call.request_problem}`));
      return;
    }
    const { messages, tools } = call.request;
    const head = el("h4", "", `Messages sent (${messages.length})`);
    const note = el("p", "muted small", "Rebuilt from the run's log; it matches the request's recorded fingerprint.");
    if (tools.length) note.append(` Tools offered: ${tools.join(", ")}.`);
    box.replaceChildren(head, note, ...messages.map(messageBox));
  } catch (failure) {
    box.replaceChildren(el("p", "error-text", failure.message));
  }
}

function callDetail(runId, ev) {
  const box = el("div", "call-detail");
  box.dataset.seq = ev.seq;
  const reply = ev.response || {};
  const replyBox = el("div", "call-reply");
  replyBox.append(el("h4", "", "Reply"));
  if (reply.text) replyBox.append(el("pre", "call-text", reply.text));
  if (reply.tool_calls && reply.tool_calls.length) replyBox.append(el("pre", "call-text call-tools", pretty(reply.tool_calls)));
  if (!reply.text && !(reply.tool_calls && reply.tool_calls.length)) replyBox.append(el("p", "muted", "(empty)"));
  const request = el("div", "call-request");
  request.append(el("p", "muted", "Loading the messages sent…"));
  box.append(callFacts(ev), request, replyBox);
  fillRequest(request, runId, ev.seq);
  return box;
}

// --- the waterfall -----------------------------------------------------------------------

class Waterfall {
  // `box`: where the rows go. A sub-agent's waterfall shares its root's time axis.
  constructor(box, root = null, depth = 0) {
    Object.assign(this, { box, depth, root: root || this });
    this.open = new Map(); // call id, step name or gate id -> its span, until it ends
    this.children = new Map(); // child run id -> its Waterfall
    this.pendingModel = null; // the model call in flight (its reply not yet in)
    this.calls = 0;
    if (!root) {
      Object.assign(this, { spans: [], t0: null, tEnd: null, lastTs: null, live: false });
      this.axis = el("div", "wf-axis");
      this.runRow = this.makeRow("run", "run", "");
      box.append(this.axis, this.runRow.row);
    }
  }

  applyBatch(events) {
    for (const ev of events) this.apply(ev);
    this.root.layout();
  }

  apply(ev) {
    const root = this.root;
    if (root.t0 === null || ev.ts < root.t0) root.t0 = ev.ts;
    root.lastTs = Math.max(root.lastTs || 0, ev.ts);
    const handler = this[`on_${ev.type}`];
    if (handler) handler.call(this, ev);
  }

  makeRow(kind, name, detail, depth = this.depth) {
    const row = el("div", `wf-row wf-${kind}`);
    const label = el("div", "wf-label");
    label.style.paddingLeft = `${0.5 + depth * 1.1}rem`;
    label.append(el("span", "wf-kind", kind), el("span", "wf-name", name), el("span", "wf-meta", detail));
    const track = el("div", "wf-track");
    const bar = el("div", "wf-bar");
    track.append(bar);
    const dur = el("div", "wf-dur", "");
    row.append(label, track, dur);
    return { row, bar, dur, kind };
  }

  span(kind, name, start, detail = "", depth = this.depth) {
    const span = { ...this.makeRow(kind, name, detail, depth), start, end: null };
    this.box.append(span.row);
    this.root.spans.push(span);
    return span;
  }

  end(span, ts, outcome) {
    if (!span || span.end !== null) return;
    span.end = Math.max(span.start, ts);
    if (outcome) span.row.classList.add(outcome);
  }

  on_iteration_started(ev) {
    const shown = this.modelPhase || "waiting for the reply…";
    this.pendingModel = this.span("model", `call ${this.calls + 1}`, ev.ts, shown);
  }

  // The embedded model's call in progress entered a phase ("loading the model", ...): live
  // only; it may come before the call's iteration_started.
  on_model_phase(ev) {
    this.modelPhase = ev.text;
    if (this.pendingModel) this.pendingModel.row.querySelector(".wf-meta").textContent = ev.text;
  }

  on_parse_error(ev) {
    if (ev.will_retry) this.pendingModel = this.span("model", `call ${this.calls + 1}`, ev.ts, "correction");
  }

  on_output_invalid(ev) {
    if (ev.will_retry) this.pendingModel = this.span("model", `call ${this.calls + 1}`, ev.ts, "correction");
  }

  on_model_response(ev) {
    this.calls += 1;
    const usage = usageOf(ev);
    const tokens = `${fmtTokenCount(usage.input_tokens)} → ${fmtTokenCount(usage.output_tokens)} tokens`;
    const start = ev.ts - (ev.duration_ms || 0) / 1000;
    let span = this.pendingModel;
    this.pendingModel = null;
    this.modelPhase = null;
    if (span) {
      span.row.querySelector(".wf-name").textContent = `call ${this.calls}`;
      span.row.querySelector(".wf-meta").textContent = tokens;
      span.start = start;
    } else {
      span = this.span("model", `call ${this.calls}`, start, tokens);
    }
    span.row.dataset.seq = ev.seq;
    span.row.tabIndex = 0;
    span.row.title = "show the messages sent and the reply";
    this.end(span, ev.ts);
    this.phaseSpans(ev, start);
    const toggle = () => this.toggleDetail(span.row, ev);
    span.row.addEventListener("click", toggle);
    span.row.addEventListener("keydown", (e) => e.key === "Enter" && toggle());
  }

  // The phases of an embedded model's call, one after the other under it.
  phaseSpans(ev, start) {
    let at = start;
    for (const phase of phasesOf(ev)) {
      const span = this.span("phase", phase.name, at, "", this.depth + 1);
      at += phase.ms / 1000;
      this.end(span, Math.min(at, ev.ts));
    }
  }

  toggleDetail(row, ev) {
    const next = row.nextElementSibling;
    if (next && next.classList.contains("wf-detail")) {
      next.remove();
      row.classList.remove("expanded");
      return;
    }
    const box = el("div", "wf-detail");
    box.append(callDetail(ev.run_id, ev));
    row.after(box);
    row.classList.add("expanded");
  }

  // A call with no reply (it timed out, failed, or the run was cancelled during it).
  noReply(ts) {
    if (!this.pendingModel) return;
    this.pendingModel.row.querySelector(".wf-meta").textContent = "no reply";
    this.end(this.pendingModel, ts, "unfinished");
    this.pendingModel = null;
  }

  on_run_stopped(ev) {
    this.noReply(ev.ts);
  }

  on_run_error(ev) {
    this.noReply(ev.ts);
  }

  on_tool_call_started(ev) {
    if (this.open.has(`step:${ev.call_id}`) || ev.iteration_number === 0) return; // a task step's call
    const span = this.span("tool", ev.tool_name, ev.ts, ev.child_run_id ? `sub-agent ${ev.child_run_id}` : "");
    this.open.set(ev.call_id, span);
    if (ev.child_run_id) {
      const nested = el("div", "wf-children");
      span.row.after(nested);
      this.children.set(ev.child_run_id, new Waterfall(nested, this.root, this.depth + 1));
    }
  }

  on_tool_call(ev) {
    let span = this.open.get(ev.call_id);
    this.open.delete(ev.call_id);
    if (!span) span = this.span("tool", ev.tool_name, ev.ts - (ev.duration_ms || 0) / 1000);
    this.end(span, ev.ts, ev.is_error ? "error" : "ok");
  }

  on_step_start(ev) {
    this.open.set(`step:${ev.run_id}:${ev.step}`, this.span("step", ev.step, ev.ts, ev.step_type));
  }

  on_step_complete(ev) {
    const key = `step:${ev.run_id}:${ev.step}`;
    this.end(this.open.get(key), ev.ts, ev.status === "completed" ? "ok" : ev.status === "skipped" ? "" : "error");
    this.open.delete(key);
  }

  on_confirmation_required(ev) {
    const span = this.span("approval", ev.step, ev.ts, "waiting for a decision", this.depth + 1);
    this.open.set(`gate:${ev.request_id}`, span);
  }

  on_gate_decision(ev) {
    const span = this.open.get(`gate:${ev.request_id}`);
    this.open.delete(`gate:${ev.request_id}`);
    if (span) span.row.querySelector(".wf-meta").textContent = `${ev.approved ? "approved" : "rejected"} by ${ev.decided_by}`;
    this.end(span, ev.ts, ev.approved ? "ok" : "error");
  }

  on_run_finished(ev) {
    for (const span of this.open.values()) this.end(span, ev.ts, "unfinished");
    this.open.clear();
    this.noReply(ev.ts);
    if (this === this.root) this.tEnd = ev.ts;
  }

  // The waterfall of a sub-agent run (at any depth), or null.
  findChild(runId) {
    if (this.children.has(runId)) return this.children.get(runId);
    for (const child of this.children.values()) {
      const found = child.findChild(runId);
      if (found) return found;
    }
    return null;
  }

  // Every span's bar placed on the run's time axis (the end: the run's end, or now while
  // it runs here), and its duration; an open span runs to that end.
  layout() {
    if (this.t0 === null) return;
    const end = this.tEnd !== null ? this.tEnd : this.live ? Math.max(this.lastTs, Date.now() / 1000) : this.lastTs;
    const total = Math.max(end - this.t0, 0.001);
    const place = (span, start, stop) => {
      span.bar.style.left = `${((start - this.t0) / total) * 100}%`;
      span.bar.style.width = `max(2px, ${((stop - start) / total) * 100}%)`;
      span.dur.textContent = fmtMs((stop - start) * 1000);
    };
    place(this.runRow, this.t0, end);
    this.runRow.row.classList.toggle("open", this.tEnd === null && this.live);
    const going = this.tEnd === null && this.live; // an interrupted run's open spans stay still
    for (const span of this.spans) {
      place(span, span.start, span.end !== null ? span.end : end);
      span.row.classList.toggle("open", span.end === null && going);
      if (span.end === null) span.row.classList.toggle("unfinished", !going);
    }
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
      const tick = el("span", "wf-tick", fmtMs(f * total * 1000) || "0 ms");
      tick.style.left = `${f * 100}%`;
      return tick;
    });
    this.axis.replaceChildren(...ticks);
  }
}

window.Waterfall = Waterfall;
window.callDetail = callDetail;
