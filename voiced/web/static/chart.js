// How fast the last turns were, stage by stage: one stacked bar per turn, inline SVG.
"use strict";
import { $, api, clock, el } from "./util.js";

const STAGES = [
  ["hangover", "end of speech", "#7aa6a6"],
  ["asr", "speech to text", "#4f7fc4"],
  ["agent", "thinking", "#c8843f"],
  ["tts_first_chunk", "first sound", "#5c9a4c"],
];
const SHOWN = 8;
const ROW = 22;
const LABEL = 58;
const WIDTH = 400;
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

export function draw(rows) {
  const chart = $("chart");
  const last = rows.filter((r) => STAGES.some(([key]) => r.stages[key] != null)).slice(-SHOWN);
  const total = (r) => STAGES.reduce((sum, [key]) => sum + (r.stages[key] || 0), 0);
  const longest = Math.max(0.25, ...last.map(total));
  const span = WIDTH - LABEL - 52;
  chart.setAttribute("viewBox", `0 0 ${WIDTH} ${Math.max(1, last.length) * ROW + 4}`);
  chart.replaceChildren();
  last.forEach((r, i) => {
    const y = i * ROW + 3;
    chart.append(svg("text", { x: 0, y: y + 13, class: "turn-label" }, clock(r.at)));
    let x = LABEL;
    for (const [key, name, colour] of STAGES) {
      const seconds = r.stages[key];
      if (!seconds) continue;
      const w = Math.max(1, (seconds / longest) * span);
      const bar = svg("rect", { x, y, width: w, height: ROW - 7, fill: colour, rx: 2 });
      bar.append(svg("title", {}, `${clock(r.at)}, ${name}: ${(seconds * 1000).toFixed(0)} ms`));
      chart.append(bar);
      x += w;
    }
    chart.append(svg("text", { x: x + 4, y: y + 13, class: "total" }, `${total(r).toFixed(2)} s`));
  });
  $("no-latency").hidden = last.length > 0;
  $("legend").replaceChildren(...STAGES.map(([, name, colour]) => el("span", { class: "key" }, el("span", { class: "dot", style: `background:${colour}` }), name)));
}

export function refresh() {
  return api("api/turns?limit=20").then((answer) => draw(answer.turns)).catch(() => {});
}
