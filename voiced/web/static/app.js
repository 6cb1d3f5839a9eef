// The dashboard: one EventSource on /api/events, a few fetches; no build step, no CDN.
// Each part lives in its own module (devices, conversation, plans and the scene, the chart).
"use strict";
import * as chart from "./chart.js";
import * as conversation from "./conversation.js";
import * as devices from "./devices.js";
import * as plans from "./plans.js";
import * as rooms from "./rooms.js";
import { $, api, el, post, withToken } from "./util.js";

const THOUGHTS_KEPT = 200;
let muted = false;

function showMode(mode) {
  const badge = $("mode");
  badge.textContent = mode;
  badge.dataset.mode = mode;
}

function showMute(value) {
  muted = value;
  $("mute").textContent = muted ? "Unmute" : "Mute";
  $("mute").setAttribute("aria-pressed", String(muted));
}

function showBroker(connected) {
  $("broker").hidden = connected;
  document.body.classList.toggle("broker-lost", !connected);
}

function thought(e) {
  if (!e.thought) return;
  const list = $("thoughts");
  list.append(el("li", {}, e.thought));
  while (list.children.length > THOUGHTS_KEPT) list.firstChild.remove();
}

const handlers = {
  ...devices.handlers,
  ...conversation.handlers,
  ...plans.handlers,
  ...rooms.handlers,
  assistant_state(e) { showMode(e.state); rooms.localState(e); },
  mute_changed(e) { showMute(e.muted); },
  broker_status(e) { showBroker(e.connected); },
  state_updated(e) { conversation.showMemory(e.state); },
  turn_finished() { chart.refresh(); },
  room_heard(e) { rooms.handlers.room_heard(e); conversation.roomHeard(e); },
  room_said(e) { rooms.handlers.room_said(e); conversation.roomSaid(e); },
  transcript(e) { conversation.handlers.transcript(e); rooms.localHeard(e); },
  agent_text(e) { conversation.handlers.agent_text(e); rooms.localSaid(e); },
};
const THOUGHT_KINDS = ["agent_text", "agent_tool", "vibe_started", "vibe_tool_start", "vibe_tool_end", "vibe_complete", "vibe_error", "vibe_cancelled", "vibe_resumed", "vibe_dropped", "brain_finished", "barrier_wait", "plan_created", "plan_waiting_confirmation", "plan_step_started", "plan_step_finished", "plan_decision", "plan_completed", "plan_failed", "plan_cancelled"];

function load() {
  devices.load().then(showBroker).catch(() => {});
  api("api/state").then(conversation.showMemory).catch((failure) => failure.status === 404 && conversation.showMemory(null));
  api("healthz").then((h) => showMute(h.muted)).catch(() => {});
  chart.refresh();
  plans.refresh();
}

let source = null;
let boot = null;
function newBoot(id) {
  // Ids are "<boot>-<seq>": a new boot is a restarted daemon, whose turn numbers start again.
  const b = (id || "").split("-")[0];
  if (boot !== null && b && b !== boot) conversation.forgetAll();
  if (b) boot = b;
}

function connect() {
  // First connect: replay what the daemon kept (last_id=0); reconnects send Last-Event-ID themselves.
  source = new EventSource(withToken("api/events?last_id=0"));
  source.onopen = () => {
    $("link").textContent = "live";
    $("link").className = "badge on";
    load();
  };
  source.onerror = () => {
    $("link").textContent = "reconnecting…";
    $("link").className = "badge off";
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000); // the browser gave up: we do not
  };
  const kinds = new Set([...Object.keys(handlers), ...THOUGHT_KINDS]);
  for (const kind of kinds) {
    source.addEventListener(kind, (message) => {
      newBoot(message.lastEventId);
      const e = JSON.parse(message.data);
      if (handlers[kind]) handlers[kind](e);
      thought(e);
    });
  }
}

$("say").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("say-text").value.trim();
  if (!text) return;
  $("say-text").value = "";
  $("say-result").textContent = "…";
  $("say-result").className = "";
  post("api/say", { text })
    .then((answer) => ($("say-result").textContent = conversation.replied(answer)))
    .catch((failure) => {
      $("say-result").textContent = "Error: " + failure.message;
      $("say-result").className = "error";
    });
});
$("mute").addEventListener("click", () => {
  post("api/mute", { muted: !muted }).then((b) => showMute(b.muted)).catch(() => {});
});
showMode($("mode").dataset.mode || $("mode").textContent);
plans.drawScene();
connect();
