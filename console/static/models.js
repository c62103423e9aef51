// Models page (admins): install and remove without leaving the page. The forms work without
// script too (they post and come back); with it, they post with fetch and the page polls the
// install jobs every second to move each progress bar until the install ends.
"use strict";

const table = document.getElementById("models-table");
const POLL_MS = 1000;

function formatMegabytes(bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

if (table) {
  const announcer = document.getElementById("models-status");
  let polling;

  function rowOf(modelId) {
    return table.querySelector(`tr[data-model-id="${CSS.escape(modelId)}"]`);
  }

  function showJob(job) {
    const row = rowOf(job.modelId);
    if (!row) return;
    const progress = row.querySelector("progress");
    const text = row.querySelector("[data-install-text]");
    const going = job.state === "queued" || job.state === "running";
    if (progress) {
      progress.hidden = !going;
      if (job.totalBytes > 0) {
        progress.max = job.totalBytes;
        progress.value = job.receivedBytes;
      } else {
        progress.removeAttribute("value");
      }
    }
    if (text) {
      text.textContent =
        job.state === "queued"
          ? "Queued…"
          : job.state === "running"
            ? job.totalBytes > 0
              ? `Installing: ${formatMegabytes(job.receivedBytes)} of ${formatMegabytes(job.totalBytes)} (${Math.floor((100 * job.receivedBytes) / job.totalBytes)}%)`
              : `Installing: ${formatMegabytes(job.receivedBytes)}`
            : job.state === "installed"
              ? "Installed and verified."
              : job.state === "cancelled"
                ? "Install cancelled."
                : `Install failed: ${job.message || "see the server log"}`;
    }
    return going;
  }

  async function poll() {
    const response = await fetch("/models/installs", { headers: { accept: "application/json" } });
    if (!response.ok) return;
    const { jobs } = await response.json();
    let anyGoing = false;
    let finished = false;
    for (const job of jobs) {
      const going = showJob(job);
      anyGoing = anyGoing || going;
      const row = rowOf(job.modelId);
      if (!going && row && row.dataset.installing === "true") {
        row.dataset.installing = "false";
        finished = true;
        if (announcer) announcer.textContent = `${job.modelId}: ${job.state === "installed" ? "installed" : job.state}.`;
      }
      if (going && row) row.dataset.installing = "true";
    }
    if (finished) {
      // The installed state, size and buttons come from the server: reload once the install ends.
      setTimeout(() => location.reload(), 600);
      return;
    }
    if (anyGoing) polling = setTimeout(poll, POLL_MS);
    else polling = undefined;
  }

  for (const form of table.querySelectorAll("form[data-model-action]")) {
    form.addEventListener("submit", async (event) => {
      const action = form.dataset.modelAction;
      if (action === "remove" && !window.confirm(`Remove ${form.dataset.modelId}? Its weights are deleted from this server.`)) {
        event.preventDefault();
        return;
      }
      event.preventDefault();
      const button = form.querySelector("button");
      if (button) button.disabled = true;
      const response = await fetch(form.action, {
        method: "POST",
        headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(new FormData(form)),
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        if (announcer) announcer.textContent = answer.message || `The request failed (HTTP ${response.status}).`;
        if (button) button.disabled = false;
        return;
      }
      if (action === "remove") {
        if (announcer) announcer.textContent = `${form.dataset.modelId} removed.`;
        setTimeout(() => location.reload(), 600);
        return;
      }
      const row = rowOf(form.dataset.modelId);
      if (row) row.dataset.installing = "true";
      showJob(answer.job);
      if (!polling) polling = setTimeout(poll, POLL_MS / 4);
    });
  }

  if (table.querySelector('tr[data-installing="true"]')) polling = setTimeout(poll, POLL_MS / 4);
}
