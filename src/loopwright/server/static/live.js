// Live events of one run: over a WebSocket; on a dropped connection, reconnect from the last
// seq seen. If WebSockets get through but never carry anything (a proxy that drops them),
// fall back to Server-Sent Events, which resume by themselves with Last-Event-ID.
"use strict";

class LiveEvents {
  constructor(runId, timeline, conn, follow, token) {
    Object.assign(this, { runId, timeline, conn, follow, token });
    Object.assign(this, { lastSeq: 0, closed: false, retries: 0, silent: 0, queue: [], frame: 0 });
    Object.assign(this, { waitForRun: false, missing: 0 });
  }

  path(kind) {
    const token = this.token ? `&access_token=${encodeURIComponent(this.token)}` : "";
    return `/api/runs/${encodeURIComponent(this.runId)}/${kind}?after=${this.lastSeq}${token}`;
  }

  setConn(text, cls) {
    this.conn.textContent = text;
    this.conn.className = `conn ${cls}`;
  }

  take(data) {
    const ev = JSON.parse(data);
    if (ev.type === "model_phase") {
      // the phase of the embedded model's call in progress: live only, no seq, never stored
      if (ev.run_id !== this.runId) return;
    } else if (ev.seq === undefined) {
      return; // a reply to something we sent, not an event
    } else if (ev.type === "model_text_delta") {
      // live only: it carries the seq of the event it follows, and is never replayed
      if (ev.seq < this.lastSeq) return;
    } else {
      if (ev.seq <= this.lastSeq) return; // never twice
      this.lastSeq = ev.seq;
    }
    this.queue.push(ev);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}${this.path("ws")}`);
    let heard = false;
    this.ws = ws;
    ws.onopen = () => this.setConn("live", "on");
    ws.onmessage = (msg) => {
      heard = true;
      this.silent = 0;
      this.retries = 0;
      this.take(msg.data);
    };
    ws.onclose = (e) => {
      if (this.closed) return;
      if (e.code === 1000) return this.setConn("finished", "done");
      if (e.code === 4404 && this.waitForRun && this.missing++ < 50) {
        // a sub-agent's run is stored just after its parent's call starts: ask again
        this.timer = setTimeout(() => this.connect(), 200);
        return;
      }
      if (e.code >= 4000) return this.setConn(e.reason || `error ${e.code}`, "off");
      if (!heard && ++this.silent >= 2) return this.useEventSource();
      const delay = Math.min(10000, 500 * 2 ** this.retries++);
      this.setConn(`reconnecting (after seq ${this.lastSeq})`, "off");
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  useEventSource() {
    const source = new EventSource(this.path("events"));
    this.source = source;
    source.onopen = () => this.setConn("live (SSE)", "on");
    source.onmessage = (msg) => this.take(msg.data);
    source.addEventListener("end", () => {
      source.close();
      this.setConn("finished", "done");
    });
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) this.setConn(`reconnecting (after seq ${this.lastSeq})`, "off");
    };
  }

  flush() {
    this.frame = 0;
    const batch = this.queue;
    this.queue = [];
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
    this.timeline.applyBatch(batch);
    if (this.follow.checked && atBottom) window.scrollTo(0, document.body.scrollHeight);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
    if (this.source) this.source.close();
  }
}

window.LiveEvents = LiveEvents;
