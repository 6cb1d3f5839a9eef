// The dashboard: one EventSource on /api/events, a few fetches; no build step, no CDN.
"use strict";
const params = new URLSearchParams(location.search);
const token = params.get("access_token"); // only when the daemon listens beyond loopback
const headers = token ? { Authorization: "Bearer " + token } : {};
const withToken = (path) => (token ? path + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(token) : path);
const $ = (id) => document.getElementById(id);
const KEEP = 200;
const STAGES = ["hangover", "asr", "agent", "tts_first_chunk"];
const COLOURS = { hangover: "#8aa", asr: "#58c", agent: "#c85", tts_first_chunk: "#6a5" };
const turns = new Map(); // turn -> {user, reply} elements
let muted = false;

function api(path, options = {}) {
  return fetch(path, { ...options, headers: { ...headers, "Content-Type": "application/json" } }).then(async (r) => {
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  });
}

function add(list, text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  list.appendChild(li);
  while (list.children.length > KEEP) list.removeChild(list.firstChild);
  list.parentElement.scrollTop = list.parentElement.scrollHeight;
  return li;
}

function turnRow(turn) {
  let row = turns.get(turn);
  if (!row) {
    row = { user: add($("transcript"), "", "user"), reply: null };
    row.user.dataset.turn = turn;
    turns.set(turn, row);
    if (turns.size > KEEP) turns.delete(turns.keys().next().value);
  }
  return row;
}

function tile(device) {
  let el = document.querySelector(`.tile[data-device="${device}"]`);
  if (!el) {
    el = document.createElement("div");
    el.className = "tile";
    el.dataset.device = device;
    el.innerHTML = "<b></b><pre></pre>";
    el.querySelector("b").textContent = device;
    $("devices").appendChild(el);
  }
  return el;
}

function showDevice(device, state, online) {
  const el = tile(device);
  if (state !== undefined) {
    el.querySelector("pre").textContent = state ? JSON.stringify(state, null, 1).replace(/[{}"]/g, "").trim() : "no report yet";
    el.dataset.state = JSON.stringify(state);
    el.classList.add("changed");
    setTimeout(() => el.classList.remove("changed"), 800);
  }
  if (online !== undefined) el.classList.toggle("offline", !online);
}

function showMute(value) {
  muted = value;
  $("mute").textContent = muted ? "Unmute" : "Mute";
  $("mute").classList.toggle("active", muted);
}

function chart(rows) {
  const svg = $("chart");
  const last = rows.slice(-10);
  const max = Math.max(0.5, ...last.map((r) => STAGES.reduce((s, k) => s + (r.stages[k] || 0), 0)));
  const w = 400 / Math.max(1, last.length);
  let out = "";
  last.forEach((r, i) => {
    let y = 150;
    for (const k of STAGES) {
      const h = ((r.stages[k] || 0) / max) * 140;
      y -= h;
      out += `<rect x="${i * w + 2}" y="${y}" width="${w - 4}" height="${h}" fill="${COLOURS[k]}"><title>turn ${r.turn} ${k}: ${(r.stages[k] || 0).toFixed(3)} s</title></rect>`;
    }
  });
  svg.innerHTML = out + `<text x="2" y="10" font-size="10">${max.toFixed(2)} s</text>`;
  $("legend").innerHTML = STAGES.map((k) => `<span style="color:${COLOURS[k]}">■</span> ${k}`).join(" ");
}

function refreshTurns() {
  api("api/turns?limit=20").then((b) => chart(b.turns)).catch(() => {});
}

const PLAN_EVENTS = ["plan_created", "plan_waiting_confirmation", "plan_step_started", "plan_step_finished", "plan_decision", "plan_completed", "plan_failed", "plan_cancelled"];
function planButton(label, path, body) {
  const b = document.createElement("button");
  b.textContent = label;
  b.addEventListener("click", () => api(path, { method: "POST", body: JSON.stringify(body) }).then(refreshPlans).catch((e) => alert(e.message)));
  return b;
}
let plansAsked = 0; // refreshes overlap (every plan event asks): only the latest answer is drawn
function refreshPlans() {
  const asked = ++plansAsked;
  api("api/tasks").then((b) => {
    if (asked !== plansAsked) return; // an older answer, arriving after a newer question
    const box = $("plans");
    box.innerHTML = "";
    const shown = b.tasks.slice(-6).reverse();
    if (!shown.length) box.textContent = "no plan";
    for (const t of shown) {
      const div = document.createElement("div");
      div.className = "plan";
      div.dataset.task = t.id;
      const head = document.createElement("b");
      head.textContent = `${t.id} ${t.execution_plan.name}: ${t.status} (${t.current_step}/${t.total_steps})`;
      div.appendChild(head);
      const steps = document.createElement("ol");
      div.appendChild(steps);
      box.appendChild(div);
      for (const s of t.execution_plan.steps) add(steps, s.action + (s.at ? ` at ${new Date(s.at * 1000).toLocaleTimeString()}` : ""));
      if (t.status === "waiting_confirmation") {
        div.appendChild(planButton("Confirm", `api/tasks/${t.id}/confirm`, { approved: true }));
        div.appendChild(planButton("Refuse", `api/tasks/${t.id}/confirm`, { approved: false }));
      } else if (t.status === "executing") {
        div.appendChild(planButton("Cancel", `api/tasks/${t.id}/cancel`, {}));
      }
    }
  }).catch(() => {});
}

const handlers = {
  transcript(e) { turnRow(e.turn).user.textContent = "you: " + e.text; },
  agent_text(e) {
    const row = turnRow(e.turn);
    if (!row.reply) {
      row.reply = add($("transcript"), "", "reply");
      row.reply.dataset.turn = e.turn;
    }
    row.reply.textContent = (row.reply.textContent ? row.reply.textContent + " " : "") + e.text;
  },
  barge_in(e) { const row = turns.get(e.turn); if (row && row.reply) row.reply.classList.add("interrupted"); },
  device_state(e) { showDevice(e.device, e.state); },
  device_availability(e) { showDevice(e.device, undefined, e.online); },
  state_updated(e) { $("state").textContent = JSON.stringify(e.state, null, 2); },
  assistant_state(e) { $("mode").textContent = e.state; },
  mute_changed(e) { showMute(e.muted); },
  turn_finished() { refreshTurns(); },
  vibe_started(e) { $("scene-title").textContent = `${e.task_id}: ${e.request}`; $("scene").innerHTML = ""; },
  vibe_tool_start(e) { add($("scene"), `${e.tool} ${JSON.stringify(e.input)}`); },
  vibe_tool_end(e) { add($("scene"), `→ ${e.result}`); },
  vibe_complete(e) { add($("scene"), `complete: ${e.plan.name || ""}`); },
  vibe_error(e) { add($("scene"), `failed: ${e.error}`); },
  vibe_cancelled(e) { add($("scene"), `cancelled: ${e.reason}`); },
  vibe_resumed(e) { $("scene-title").textContent = `${e.task_id}: ${e.request} (resumed)`; $("scene").innerHTML = ""; },
  vibe_dropped(e) { add($("scene"), `${e.task_id} not resumed: ${e.reason}`); },
  ...Object.fromEntries(PLAN_EVENTS.map((kind) => [kind, refreshPlans])),
};

function load() {
  api("api/devices").then((b) => b.devices.forEach((d) => showDevice(d.name, d.state, d.online))).catch(() => {});
  api("api/state").then((s) => ($("state").textContent = JSON.stringify(s, null, 2))).catch((e) => ($("state").textContent = e.message));
  api("healthz").then((h) => showMute(h.muted)).catch(() => {});
  refreshTurns();
  refreshPlans();
}

let source = null;
let boot = null;
function newBoot(id) {
  // Ids are "<boot>-<seq>": a new boot is a restarted daemon, whose turn numbers start again.
  const b = (id || "").split("-")[0];
  if (boot !== null && b && b !== boot) { turns.clear(); $("transcript").innerHTML = ""; }
  if (b) boot = b;
}
function connect() {
  // First connect: replay what the daemon kept (last_id=0); reconnects send Last-Event-ID themselves.
  source = new EventSource(withToken("api/events?last_id=0"));
  source.onopen = () => { $("link").textContent = "live"; $("link").className = "badge on"; load(); };
  source.onerror = () => {
    $("link").textContent = "reconnecting…";
    $("link").className = "badge off";
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000); // the browser gave up: we do not
  };
  for (const [kind, handle] of Object.entries(handlers)) {
    source.addEventListener(kind, (m) => { newBoot(m.lastEventId); handle(JSON.parse(m.data)); });
  }
  source.onmessage = () => {};
  const thoughts = (m) => { const e = JSON.parse(m.data); if (e.thought) add($("thoughts"), e.thought); };
  for (const kind of ["agent_text", "agent_tool", "vibe_started", "vibe_tool_start", "vibe_tool_end", "vibe_complete", "vibe_error", "vibe_cancelled", "vibe_resumed", "vibe_dropped", "brain_finished", "barrier_wait", ...PLAN_EVENTS]) {
    source.addEventListener(kind, thoughts);
  }
}

$("say").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("say-text").value.trim();
  if (!text) return;
  $("say-text").value = "";
  $("say-result").textContent = "…";
  api("api/say", { method: "POST", body: JSON.stringify({ text }) })
    .then((b) => ($("say-result").textContent = `${b.reply} (${b.commands.length} command${b.commands.length === 1 ? "" : "s"})`))
    .catch((e) => ($("say-result").textContent = "error: " + e.message));
});
$("mute").addEventListener("click", () => {
  api("api/mute", { method: "POST", body: JSON.stringify({ muted: !muted }) }).then((b) => showMute(b.muted)).catch(() => {});
});
connect();
