// Shared by the dashboard's modules: the API with the page's token, and a small element builder.
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("access_token"); // only when the daemon listens beyond loopback
const headers = token ? { Authorization: "Bearer " + token } : {};

export const $ = (id) => document.getElementById(id);

export function withToken(path) {
  return token ? path + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(token) : path;
}

// fetch JSON; a non-2xx answer throws an Error carrying the server's own words (its "error").
export async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: { ...headers, "Content-Type": "application/json" } });
  let body = {};
  try {
    body = await response.json();
  } catch {
    body = { error: response.statusText };
  }
  if (!response.ok) {
    const failure = new Error(body.error || response.statusText || "no answer");
    failure.status = response.status;
    failure.body = body;
    throw failure;
  }
  return body;
}

export const post = (path, body) => api(path, { method: "POST", body: JSON.stringify(body) });

// el("p", {class: "x", dataset: {turn: 3}}, "text", child…): text is always text, never HTML.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

export const capital = (text) => (text ? text[0].toUpperCase() + text.slice(1) : "");

export function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: "numeric", minute: "2-digit" });
}

// "in 10 minutes", "in 40 seconds", "now": how far ahead a wall-clock time is.
export function fromNow(seconds) {
  const left = Math.round(seconds - Date.now() / 1000);
  if (left <= 0) return "now";
  if (left < 90) return `in ${left} second${left === 1 ? "" : "s"}`;
  const minutes = Math.round(left / 60);
  if (minutes < 90) return `in ${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = Math.round(minutes / 60);
  return `in ${hours} hour${hours === 1 ? "" : "s"}`;
}

export function duration(seconds) {
  const minutes = Math.round(seconds / 60);
  if (seconds < 90) return `${Math.round(seconds)} second${Math.round(seconds) === 1 ? "" : "s"}`;
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}
