// The conversation: per turn, what was heard, what was said and what was done; and what the
// brain has learned, in sentences (not its JSON).
"use strict";
import { $, capital, clock, el } from "./util.js";

const KEEP = 100; // turns shown
const turns = new Map(); // turn -> {node, heard, said, done}

function turnEntry(turn, at) {
  let entry = turns.get(turn);
  if (entry) return entry;
  const heard = el("p", { class: "heard" }, el("span", { class: "who" }, "You"), el("span", { class: "words" }, "…"));
  const said = el("p", { class: "said", hidden: true }, el("span", { class: "who" }, "voiced"), el("span", { class: "words" }));
  const done = el("ul", { class: "done", hidden: true, "aria-label": "What was done" });
  const when = el("time", {}, clock(at || Date.now() / 1000));
  const node = el("li", { class: "turn", dataset: { turn } }, when, heard, said, done);
  const list = $("transcript");
  list.append(node);
  $("no-turns").hidden = true;
  entry = { node, heard, said, done };
  turns.set(turn, entry);
  while (turns.size > KEEP) {
    const [oldest, gone] = turns.entries().next().value;
    gone.node.remove();
    turns.delete(oldest);
  }
  list.parentElement.scrollTop = list.parentElement.scrollHeight;
  return entry;
}

function didThis(turn, text, refused, at) {
  if (!turn) return; // the page's own controls, a plan's or a scene's steps: not a turn's
  const entry = turnEntry(turn, at);
  entry.done.hidden = false;
  entry.done.append(el("li", { class: refused ? "refused" : "sent" }, text));
}

export function forgetAll() {
  turns.clear();
  $("transcript").replaceChildren();
  $("no-turns").hidden = false;
}

export const handlers = {
  transcript(e) {
    const entry = turnEntry(e.turn, e.at);
    entry.heard.querySelector(".words").textContent = e.text || "(nothing I could make out)";
  },
  agent_text(e) {
    const entry = turnEntry(e.turn, e.at);
    const words = entry.said.querySelector(".words");
    words.textContent = (words.textContent ? words.textContent + " " : "") + e.text;
    entry.said.hidden = false;
  },
  barge_in(e) {
    const entry = turns.get(e.turn);
    if (entry) entry.said.classList.add("interrupted");
  },
  command_sent(e) { didThis(e.turn, e.words || e.device, false, e.at); },
  command_refused(e) { didThis(e.turn, `${capital(e.device.replaceAll("_", " "))}: not done, ${e.reason}`, true, e.at); },
};

// A satellite's turn (its own numbers, apart from the local room's): the same entry, with its room.
export function roomHeard(e) {
  const entry = turnEntry(e.turn, e.at);
  entry.heard.querySelector(".who").textContent = `You (${e.room})`;
  entry.heard.querySelector(".words").textContent = e.text || "(nothing I could make out)";
}

export function roomSaid(e) {
  const entry = turnEntry(e.turn, e.at);
  entry.said.querySelector(".who").textContent = `voiced (${e.room})`;
  handlers.agent_text(e);
}

// The reply to a typed request: what was said, and what was done if anything was.
export function replied(answer) {
  const done = answer.commands.map((c) => (c.result === "sent" ? c.words || c.device : `${c.device}: not done, ${c.reason}`));
  return done.length ? `${answer.reply} — Done: ${done.join("; ")}.` : answer.reply;
}

const PAIN = {
  misunderstood: "I misunderstood",
  repeated: "you had to repeat yourself",
  device_failed: "a device failed",
  device_offline: "a device was offline",
  low_confidence: "I wasn't sure what I heard",
  interrupted: "you interrupted me",
};

function listOf(items) {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

// What the brain keeps (voiced/brain/state.py), as sentences.
export function showMemory(state) {
  const box = $("memory");
  if (!state) {
    box.replaceChildren(el("p", { class: "empty" }, "The brain is off (brain.enabled: false): nothing is remembered."));
    return;
  }
  const lines = [];
  const p = state.preferences || {};
  const likes = [...(p.scents || []), ...(p.genres || [])];
  const dislikes = [...(p.disliked_scents || []), ...(p.disliked_genres || [])];
  if (likes.length) lines.push(`You like ${listOf(likes)}.`);
  if (dislikes.length) lines.push(`You don't like ${listOf(dislikes)}.`);
  const howOf = (habit) => [habit.brightness_pct != null ? `${habit.brightness_pct} %` : "", habit.warmth ? `${habit.warmth} white` : "", habit.color || ""].filter(Boolean);
  for (const [part, habit] of Object.entries(p.lights || {})) {
    const how = howOf(habit);
    if (how.length) lines.push(`In the ${part} you like the lights ${listOf(how)}.`);
  }
  for (const [device, parts] of Object.entries(p.device_lights || {})) {
    for (const [part, habit] of Object.entries(parts)) {
      const how = howOf(habit);
      if (how.length) lines.push(`In the ${part} you set the ${device.replaceAll("_", " ")} to ${listOf(how)}.`);
    }
  }
  if (p.volume != null) lines.push(`You like music at volume ${p.volume} %.`);
  const profile = state.user_profile || {};
  if (profile.rooms && profile.rooms.length) lines.push(`Rooms you use: ${listOf(profile.rooms)}.`);
  if (profile.wake_time) lines.push(`You get up at ${profile.wake_time}.`);
  if (profile.bed_time) lines.push(`You go to bed at ${profile.bed_time}.`);
  for (const note of profile.notes || []) lines.push(capital(note));
  const pains = (state.pain_points || []).slice(-3).map((pain) => `turn ${pain.turn}: ${PAIN[pain.kind] || pain.kind}`);
  if (pains.length) lines.push(`Recent trouble — ${pains.join("; ")}.`);
  const count = state.processed_turns || 0;
  lines.push(`${count} turn${count === 1 ? "" : "s"} thought over so far.`);
  box.replaceChildren(el("ul", {}, lines.map((line) => el("li", {}, line))));
}
