// The rooms panel: one row per satellite (its link, its room's state, the last heard and said), and
// one for the daemon's own microphone (audio.room), after them. Hidden until a satellite says
// anything: without satellites the header's badge and the conversation say it all.
"use strict";
import { $, el } from "./util.js";

const rooms = new Map(); // satellite -> {room, link, state, heard, said, turn}
const local = { room: "", link: "local", state: "idle", heard: "", said: "", turn: null };

function row(name) {
  if (!rooms.has(name)) rooms.set(name, { room: "", link: "away", state: "idle", heard: "", said: "", turn: null });
  return rooms.get(name);
}

function line(name, r, dataset) {
  return el("tr", { dataset },
    el("th", { scope: "row" }, name),
    el("td", {}, r.room || "—"),
    el("td", { class: "link", dataset: { link: r.link } }, r.link),
    el("td", { class: "state", dataset: { state: r.state } }, r.state),
    el("td", { class: "heard" }, r.heard),
    el("td", { class: "said" }, r.said));
}

function draw() {
  $("rooms-panel").hidden = rooms.size === 0;
  const body = $("rooms");
  body.replaceChildren();
  for (const [name, r] of [...rooms].sort(([a], [b]) => a.localeCompare(b))) {
    body.append(line(name, r, { satellite: name }));
  }
  body.append(line("local microphone", local, { local: "" }));
}

function at(e, change) {
  const r = row(e.satellite);
  r.room = e.room;
  change(r);
  draw();
}

function heard(r, e) {
  r.turn = e.turn;
  r.heard = e.text;
  r.said = "";
}

function said(r, e) {
  if (r.turn !== e.turn) { r.turn = e.turn; r.said = ""; }
  r.said = r.said ? r.said + " " + e.text : e.text;
}

// Each room's state from its own state events (room_state; assistant_state for the local room).
export const handlers = {
  satellite_connected(e) { at(e, (r) => (r.link = "connected")); },
  satellite_disconnected(e) { at(e, (r) => { r.link = "away"; r.state = "idle"; }); },
  room_state(e) { at(e, (r) => (r.state = e.state)); },
  room_heard(e) { at(e, (r) => heard(r, e)); },
  room_said(e) { at(e, (r) => said(r, e)); },
};

// The daemon's own room: app.js hands it the assistant's state and the local turns' words.
export function localState(e) {
  local.room = e.room || "";
  local.state = e.state;
  draw();
}

export function localHeard(e) {
  if (!e.text) return;
  if (e.room) local.room = e.room;
  heard(local, e);
  draw();
}

export function localSaid(e) {
  said(local, e);
  draw();
}
