// Device cards, grouped by room, with controls that go through the daemon's own device tools
// (POST api/devices/{name}: typed, clamped, confirmed by the device). Never raw MQTT.
"use strict";
import { $, api, capital, el, post } from "./util.js";

const cards = new Map(); // device name -> {row, card, parts}
const DEBOUNCE_MS = 300; // a slider moved by the keyboard sends one command, not one per key
const CONFIRMATION_SHOWN_MS = 8000; // a confirmation fades, so an old one never sits beside a newer state

function outcome(parts, text, kind) {
  clearTimeout(parts.fading);
  parts.outcome.textContent = text;
  parts.outcome.className = "outcome " + (kind || "");
  if (kind === "ok") parts.fading = setTimeout(() => outcome(parts, "", ""), CONFIRMATION_SHOWN_MS);
}

// Send one tool call for a device and show what the device confirmed (or why not).
async function send(name, args) {
  const entry = cards.get(name);
  if (!entry) return;
  outcome(entry.parts, "Sending…", "busy");
  entry.card.setAttribute("aria-busy", "true");
  try {
    const answer = await post(`api/devices/${encodeURIComponent(name)}`, args);
    entry.parts.confirmed = answer.view.summary;
    show(name, { state: answer.state, view: answer.view });
    const notes = answer.notes && answer.notes.length ? ` (${answer.notes.join("; ")})` : "";
    outcome(entry.parts, "✓ " + answer.confirmed + notes, "ok");
  } catch (failure) {
    if (failure.body && failure.body.view) show(name, { state: failure.body.state, view: failure.body.view });
    outcome(entry.parts, "✗ " + failure.message, "error");
  } finally {
    entry.card.removeAttribute("aria-busy");
  }
}

function debounced(fn) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), DEBOUNCE_MS);
  };
}

function slider(name, id, label, max, onValue) {
  const input = el("input", { type: "range", id, min: 0, max, step: 1, value: 0 });
  const shown = el("output", { for: id }, "");
  const sendSoon = debounced((value) => onValue(value));
  input.addEventListener("input", () => (shown.textContent = `${input.value} %`));
  input.addEventListener("change", () => sendSoon(Number(input.value)));
  return { input, shown, row: el("div", { class: "control" }, el("label", { for: id }, label), input, shown) };
}

function choice(id, label, groups, onValue) {
  const select = el("select", { id }, el("option", { value: "" }, "choose…"));
  for (const [title, options] of groups) {
    if (!options.length) continue;
    const group = el("optgroup", { label: title });
    for (const [value, text] of options) group.append(el("option", { value }, text));
    select.append(group);
  }
  select.addEventListener("change", () => select.value && onValue(select.value));
  return { select, row: el("div", { class: "control" }, el("label", { for: id }, label), select) };
}

function toggleButton(name, kind) {
  const button = el("button", { type: "button", class: "toggle", "aria-pressed": "false" }, "Off");
  button.addEventListener("click", () => {
    const on = button.getAttribute("aria-pressed") === "true";
    send(name, kind === "music" ? { action: on ? "pause" : "play" } : { state: on ? "off" : "on" });
  });
  return button;
}

function lightControls(row, parts) {
  const name = row.name;
  const features = row.controls.features || [];
  const controls = [];
  if (features.includes("brightness")) {
    parts.level = slider(name, `${name}-brightness`, "Brightness", 100, (pct) =>
      send(name, { state: "on", brightness_pct: pct }));
    controls.push(parts.level.row);
  }
  const whites = features.includes("color_temp") ? ["warm", "neutral", "cool"].map((w) => ["temp:" + w, `${w} white`]) : [];
  const colours = (row.controls.colours || []).map((c) => ["colour:" + c, c]);
  if (whites.length || colours.length) {
    parts.colour = choice(`${name}-colour`, "Colour", [["White", whites], ["Colour", colours]], (value) => {
      const [what, word] = value.split(":");
      send(name, what === "temp" ? { state: "on", color_temp: word } : { state: "on", color: word });
    });
    controls.push(parts.colour.row);
  }
  return controls;
}

function diffuserControls(row, parts) {
  const name = row.name;
  parts.scent = choice(`${name}-scent`, "Scent", [["Scents", row.controls.scents.map((s) => [s, s])]], (scent) =>
    send(name, { state: "on", scent }));
  parts.level = slider(name, `${name}-intensity`, "Intensity", row.controls.intensity_max, (intensity) =>
    send(name, { state: "on", intensity }));
  return [parts.scent.row, parts.level.row];
}

function musicControls(row, parts) {
  const name = row.name;
  const controls = [];
  if (row.controls.genres.length) {
    parts.genre = choice(`${name}-genre`, "Genre", [["Genres", row.controls.genres.map((g) => [g, g])]], (genre) =>
      send(name, { action: "play", genre }));
    controls.push(parts.genre.row);
  }
  parts.level = slider(name, `${name}-volume`, "Volume", row.controls.volume_max, (volume) => send(name, { volume }));
  controls.push(parts.level.row);
  return controls;
}

const CONTROLS = { light: lightControls, diffuser: diffuserControls, music: musicControls };

function card(row) {
  const parts = {};
  parts.swatch = el("span", { class: "swatch", "aria-hidden": "true" });
  parts.toggle = toggleButton(row.name, row.kind);
  parts.summary = el("p", { class: "summary" });
  parts.outcome = el("p", { class: "outcome", role: "status", "aria-live": "polite" });
  const headingId = `${row.name}-title`;
  const extra = (CONTROLS[row.kind] || (() => []))(row, parts);
  const node = el(
    "article",
    { class: "card", id: `device-${row.name}`, dataset: { device: row.name, kind: row.kind }, "aria-labelledby": headingId },
    el("div", { class: "card-head" }, parts.swatch, el("h4", { id: headingId }, row.label), parts.toggle),
    parts.summary,
    extra,
    parts.outcome,
  );
  return { row, card: node, parts };
}

// A device's new state (and its view in words), or its availability: the card follows
// (and flashes, unless it is being drawn for the first time).
export function show(name, { state, view, online } = {}, flash = true) {
  const entry = cards.get(name);
  if (!entry) return;
  const { card: node, parts, row } = entry;
  if (online !== undefined) {
    row.online = online;
    node.classList.toggle("offline", online === false);
    node.classList.toggle("unheard", online === null);
  }
  if (view !== undefined) {
    row.view = view;
    // A newer state from elsewhere (a voice, a scene): the page's own confirmation is old news.
    if (parts.outcome.classList.contains("ok") && view.summary !== parts.confirmed) outcome(parts, "", "");
    node.dataset.state = JSON.stringify(state ?? null);
    node.dataset.on = String(view.on === true);
    if (flash) {
      node.classList.add("changed");
      setTimeout(() => node.classList.remove("changed"), 800);
    }
  }
  const v = row.view || {};
  // online null: nothing heard from it yet (no availability, no state), so neither online nor offline
  parts.summary.textContent =
    row.online === null ? "Not heard from yet" : capital(v.summary || "") + (row.online === false ? " (offline)" : "");
  parts.toggle.setAttribute("aria-pressed", String(v.on === true));
  parts.toggle.textContent = row.kind === "music" ? (v.on ? "Pause" : "Play") : v.on ? "On" : "Off";
  parts.toggle.setAttribute("aria-label", `${row.label}: ${parts.toggle.textContent}`);
  parts.swatch.style.background = v.on && v.colour ? v.colour : "";
  parts.swatch.title = v.colour_name || (v.warmth ? `${v.warmth} white` : "");
  parts.swatch.hidden = row.kind !== "light";
  const level = v.brightness_pct ?? v.intensity_pct ?? v.volume_pct;
  if (parts.level && level !== undefined && level !== null && document.activeElement !== parts.level.input) {
    parts.level.input.value = level;
    parts.level.shown.textContent = `${level} %`;
  }
  const chosen = v.warmth ? "temp:" + v.warmth : v.colour_name ? "colour:" + v.colour_name : "";
  if (parts.colour && document.activeElement !== parts.colour.select) parts.colour.select.value = chosen;
  if (parts.scent && v.scent && document.activeElement !== parts.scent.select) parts.scent.select.value = v.scent;
}

export function render(rows) {
  const box = $("devices");
  cards.clear();
  box.replaceChildren();
  if (!rows.length) box.append(el("p", { class: "empty" }, "No devices declared."));
  let room = null;
  let list = null;
  for (const row of rows) {
    if (row.room_label !== room) {
      room = row.room_label;
      const id = "room-" + room.toLowerCase().replace(/[^a-z0-9]+/g, "-");
      list = el("div", { class: "cards" });
      box.append(el("section", { class: "room", dataset: { room }, "aria-labelledby": id }, el("h3", { id, class: "room-name" }, room), list));
    }
    const entry = card(row);
    cards.set(row.name, entry);
    list.append(entry.card);
    show(row.name, { state: row.state, view: row.view, online: row.online }, false);
  }
}

export async function load() {
  const answer = await api("api/devices");
  render(answer.devices);
  return answer.broker_connected;
}

export const handlers = {
  // a state is news from the device: heard from, if its availability had said nothing yet
  device_state(e) { show(e.device, { state: e.state, view: e.view, online: cards.get(e.device)?.row.online ?? true }); },
  device_availability(e) { show(e.device, { online: e.online }); },
  devices_changed() { load().catch(() => {}); },
};
