// The rooms panel: one row per satellite (its link, its room's state, the last heard and said).
// Hidden until a satellite says anything: without satellites there is nothing to show.
"use strict";
import { $, el } from "./util.js";

const rooms = new Map(); // satellite -> {room, link, state, heard, said, turn}

function row(name) {
  if (!rooms.has(name)) rooms.set(name, { room: "", link: "away", state: "idle", heard: "", said: "", turn: null });
  return rooms.get(name);
}

function draw() {
  $("rooms-panel").hidden = rooms.size === 0;
  const body = $("rooms");
  body.replaceChildren();
  for (const [name, r] of [...rooms].sort(([a], [b]) => a.localeCompare(b))) {
    body.append(el("tr", { dataset: { satellite: name } },
      el("th", { scope: "row" }, name),
      el("td", {}, r.room),
      el("td", { class: "link", dataset: { link: r.link } }, r.link),
      el("td", { class: "state", dataset: { state: r.state } }, r.state),
      el("td", { class: "heard" }, r.heard),
      el("td", { class: "said" }, r.said)));
  }
}

function at(e, change) {
  const r = row(e.satellite);
  r.room = e.room;
  change(r);
  draw();
}

// States from the room's own events: heard -> thinking, a reply sentence -> speaking, finished -> idle.
export const handlers = {
  satellite_connected(e) { at(e, (r) => (r.link = "connected")); },
  satellite_disconnected(e) { at(e, (r) => { r.link = "away"; r.state = "idle"; }); },
  room_heard(e) { at(e, (r) => { r.turn = e.turn; r.heard = e.text; r.said = ""; r.state = "thinking"; }); },
  room_said(e) {
    at(e, (r) => {
      if (r.turn !== e.turn) { r.turn = e.turn; r.said = ""; }
      r.said = r.said ? r.said + " " + e.text : e.text;
      r.state = "speaking";
    });
  },
  room_turn_finished(e) { at(e, (r) => { if (r.turn === e.turn || r.turn === null) r.state = "idle"; }); },
};
