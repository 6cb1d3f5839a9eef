// Plans as sentences with their times and Confirm / Refuse / Cancel; the scene being set.
"use strict";
import { $, api, capital, clock, duration, el, fromNow, post } from "./util.js";

const SHOWN = 6; // plans shown, newest first
const STATUS = {
  pending: "Being made",
  planning: "Being made",
  waiting_confirmation: "Waiting for your OK",
  executing: "Running",
  completed: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
};
const STEP_DONE = { completed: "done", failed: "failed", offline: "device offline", missed: "missed", cancelled: "cancelled" };

// "at 7:42 PM (in 10 minutes)", "10 minutes after you confirm", "" (at once).
function when(step, task) {
  const active = task.status === "executing" || task.status === "waiting_confirmation";
  if (step.at != null) {
    const ahead = active && step.at > Date.now() / 1000 ? ` (${fromNow(step.at)})` : "";
    return `at ${clock(step.at)}${ahead}`;
  }
  if (step.delay_s != null) {
    if (task.started_at != null) return `at ${clock(task.started_at + step.delay_s)}`;
    return `${duration(step.delay_s)} after you confirm`;
  }
  return task.status === "waiting_confirmation" ? "once you confirm" : "";
}

function stepLine(step, task, history) {
  const last = history.filter((h) => h.step === step.index && h.status).pop();
  const outcome = last ? STEP_DONE[last.status] || last.status : "";
  const timing = when(step, task);
  const sentence = capital(step.group || step.action) + (timing ? " " + timing : "") + ".";
  return el("li", { class: outcome ? "step " + last.status : "step" }, sentence, outcome ? el("span", { class: "step-outcome" }, ` — ${outcome}`) : "");
}

function button(label, path, body, what) {
  return el("button", {
    type: "button",
    "aria-label": `${label}: ${what}`,
    onclick: (event) => {
      event.target.disabled = true;
      post(path, body).then(refresh).catch((failure) => {
        event.target.disabled = false;
        $("plans-error").textContent = `${label} failed: ${failure.message}`;
      });
    },
  }, label);
}

function statusLine(task) {
  const done = (task.execution_history || []).filter((h) => h.status === "completed").length;
  let line = STATUS[task.status] || task.status;
  if (task.status === "executing") line += `: ${done} of ${task.total_steps} done`;
  if (task.status === "failed" && task.result) line += `: ${task.result}`;
  return line + ".";
}

function planBox(task) {
  const plan = task.execution_plan || { steps: [] };
  const history = task.execution_history || [];
  const seen = new Set();
  const steps = [];
  for (const step of plan.steps) {
    if (step.group && seen.has(step.group)) continue; // a group is said once
    if (step.group) seen.add(step.group);
    steps.push(stepLine(step, task, history));
  }
  const what = task.requirement || plan.name;
  const actions = el("div", { class: "actions" });
  if (task.status === "waiting_confirmation") {
    actions.append(button("Confirm", `api/tasks/${task.id}/confirm`, { approved: true }, what));
    actions.append(button("Refuse", `api/tasks/${task.id}/confirm`, { approved: false }, what));
  } else if (task.status === "executing") {
    actions.append(button("Cancel", `api/tasks/${task.id}/cancel`, {}, what));
  }
  return el(
    "article",
    { class: "plan " + task.status, dataset: { task: task.id, status: task.status } },
    el("h3", {}, capital(what)),
    el("p", { class: "status" }, statusLine(task)),
    el("ol", { class: "steps" }, steps),
    actions.childElementCount ? actions : "",
  );
}

let asked = 0; // refreshes overlap (every plan event asks): only the latest answer is drawn
export function refresh() {
  const mine = ++asked;
  return api("api/tasks").then((answer) => {
    if (mine !== asked) return;
    const shown = answer.tasks.slice(-SHOWN).reverse();
    const box = $("plans");
    box.replaceChildren(...shown.map(planBox));
    if (!shown.length) box.append(el("p", { class: "empty" }, "No plans. Say “in ten minutes turn off the lights”."));
  }).catch((failure) => {
    if (failure.status === 404) $("plans").replaceChildren(el("p", { class: "empty" }, "Plans are off (plans.enabled: false)."));
  });
}

const PLAN_EVENTS = ["plan_created", "plan_waiting_confirmation", "plan_step_started", "plan_step_finished", "plan_decision", "plan_completed", "plan_failed", "plan_cancelled"];

// The scene: its request, whether it is still being set, and each step in words.
const scene = { id: null, request: "", status: "", steps: [] };
const SCENE_STATUS = { running: "Being set up…", complete: "Set.", failed: "Failed", cancelled: "Stopped" };

function drawScene() {
  const box = $("scene");
  if (!scene.id) {
    box.replaceChildren(el("p", { class: "empty" }, "No scene. Try “make it cozy”."));
    return;
  }
  const stop = scene.status === "running"
    ? el("button", { type: "button", onclick: () => api("api/vibe", { method: "DELETE" }).catch(() => {}) }, "Stop the scene")
    : "";
  box.replaceChildren(
    el("article", { class: "scene " + scene.status, dataset: { scene: scene.id, status: scene.status } },
      el("h3", {}, capital(scene.request)),
      el("p", { class: "status" }, SCENE_STATUS[scene.status] + (scene.detail ? ` ${scene.detail}` : "")),
      el("ol", { class: "steps" }, scene.steps.map((s) => el("li", { class: "step " + (s.result || "") }, s.words + (s.result ? ` — ${s.result === "ok" ? "done" : s.result}` : "")))),
      stop),
  );
}

function sceneStarts(e, resumed) {
  Object.assign(scene, { id: e.task_id, request: e.request + (resumed ? " (resumed)" : ""), status: "running", steps: [], detail: "" });
  drawScene();
}

function sceneEnds(e, status, detail) {
  if (e.task_id !== scene.id) return;
  Object.assign(scene, { status, detail: detail || "" });
  drawScene();
}

export const handlers = {
  ...Object.fromEntries(PLAN_EVENTS.map((kind) => [kind, refresh])),
  vibe_started(e) { sceneStarts(e, false); },
  vibe_resumed(e) { sceneStarts(e, true); },
  vibe_tool_start(e) {
    if (e.task_id !== scene.id) return;
    scene.steps.push({ tool: e.tool, words: e.words || e.tool, result: "" });
    drawScene();
  },
  vibe_tool_end(e) {
    if (e.task_id !== scene.id) return;
    const step = scene.steps.find((s) => s.tool === e.tool && !s.result);
    if (step) step.result = e.result.startsWith("ok") ? "ok" : e.result;
    drawScene();
  },
  vibe_complete(e) { sceneEnds(e, "complete"); },
  vibe_error(e) { sceneEnds(e, "failed", e.error); },
  vibe_cancelled(e) { sceneEnds(e, "cancelled", e.reason); },
  vibe_dropped(e) { sceneEnds(e, "cancelled", e.reason); },
};

export { drawScene };
