// Jobs pages: every queued or running job on the page ([data-job-live]) is polled once a second
// through the console's own session-checked /jobs/{id}/state (the page holds no API key), moving
// its status, progress bar and finish time. On a job's own page the finished job is reloaded, so
// its result or error shows. Without script the pages still show each job as it was when loaded.
"use strict";

const POLL_MS = 1000;

// Set once a form on the page is sent (Cancel job): the page is on its way to the form's answer, so
// polling stops and a finished job does not reload the page, which would abort that navigation
// and lose the notice its answer carries ("Job canceled.").
let leaving = false;
document.addEventListener("submit", () => {
  leaving = true;
});

function field(attribute, id) {
  return document.querySelector(`[${attribute}="${CSS.escape(id)}"]`);
}

function formatTime(iso) {
  return `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

function show(id, state) {
  const status = field("data-job-status", id);
  if (status) {
    status.textContent = state.status;
    status.className = `status job-status-${state.status}`;
  }
  const bar = field("data-job-progress", id);
  if (bar) {
    if (state.determinate) bar.value = state.fraction;
    else bar.removeAttribute("value");
  }
  const label = field("data-job-progress-label", id);
  if (label) label.textContent = state.label;
  const finished = field("data-job-finished", id);
  if (finished && state.finishedAt) {
    const time = document.createElement("time");
    time.dateTime = state.finishedAt;
    time.textContent = formatTime(state.finishedAt);
    finished.replaceChildren(time);
  }
}

async function poll(element) {
  const id = element.getAttribute("data-job-live");
  const response = await fetch(`/jobs/${encodeURIComponent(id)}/state`, { credentials: "same-origin", cache: "no-store", redirect: "manual", headers: { accept: "application/json" } });
  // Signed out (a redirect to sign in) or gone: stop following it, the page as loaded stays.
  if (!response.ok) return false;
  const state = await response.json();
  show(id, state);
  if (!state.finished) return true;
  if (element.hasAttribute("data-job-reload") && !leaving) location.reload();
  return false;
}

document.addEventListener("DOMContentLoaded", () => {
  let live = [...document.querySelectorAll("[data-job-live]")];
  const tick = async () => {
    const still = await Promise.all(live.map((element) => poll(element).catch(() => true)));
    live = live.filter((_, index) => still[index]);
    if (live.length > 0 && !leaving) setTimeout(tick, POLL_MS);
  };
  if (live.length > 0) setTimeout(tick, POLL_MS);
});
