// Playground page: builds the JSON body from the form (fields rendered from the API's own schema),
// calls the REST endpoint with the user's API key exactly as any client would (so the call is
// authenticated, metered and charged to that key's quota), as a job (`Prefer: respond-async`) whose
// progress it follows, and shows the result and the equivalent (synchronous) curl command. No inline script: the page's CSP forbids it.
"use strict";

const form = document.getElementById("playground-form");
const KEY_STORAGE = "atelier.playground.key";

if (form) {
  const apiPath = form.dataset.apiPath;
  const operation = form.dataset.operation;
  const keyInput = document.getElementById("playground-key");
  const keepKey = document.getElementById("playground-keep-key");
  const curlOutput = document.getElementById("playground-curl");
  const statusRegion = document.getElementById("playground-status");
  const resultRegion = document.getElementById("playground-result");
  const submitButton = document.getElementById("playground-run");
  const cancelButton = document.getElementById("playground-cancel");
  const copyButton = document.getElementById("playground-copy-curl");
  /** Per image field: the picked or dropped file, read as a data URL. */
  const pickedImages = new Map();
  let running;

  const remembered = sessionStorage.getItem(KEY_STORAGE);
  if (remembered && keyInput) {
    keyInput.value = remembered;
    if (keepKey) keepKey.checked = true;
  }

  function formatBytes(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
    return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  }

  /** Bytes of a base64 data URL's payload. */
  function dataUrlBytes(url) {
    const comma = url.indexOf(",");
    const payload = url.slice(comma + 1);
    const padding = payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0;
    return Math.floor((payload.length * 3) / 4) - padding;
  }

  /** The request body, plus the name of the file each image field came from (for curl). */
  function collectBody() {
    const body = {};
    const files = {};
    for (const element of form.querySelectorAll("[data-field]")) {
      const name = element.dataset.field;
      const control = element.dataset.control;
      if (control === "image") {
        const picked = pickedImages.get(name);
        if (picked) {
          body[name] = picked.dataUrl;
          files[name] = picked;
        } else if (element.value.trim() !== "") {
          body[name] = element.value.trim();
        }
      } else if (control === "checkbox") {
        if (element.checked !== (element.dataset.default === "true")) body[name] = element.checked;
      } else if (element.value !== "" && element.value !== element.dataset.default) {
        // Values equal to the schema's default are left out: the API applies them anyway.
        body[name] = control === "integer" || control === "number" ? Number(element.value) : element.value;
      }
    }
    return { body, files };
  }

  function shellQuote(text) {
    return `'${text.replaceAll("'", "'\\''")}'`;
  }

  /** A curl command that sends the same request; picked files are read with base64 at run time. */
  function curlCommand() {
    const { body, files } = collectBody();
    const markers = {};
    for (const [name, picked] of Object.entries(files)) {
      const marker = `@@${name}@@`;
      markers[marker] = picked;
      body[name] = marker;
    }
    let json = JSON.stringify(body);
    let data = shellQuote(json);
    for (const [marker, picked] of Object.entries(markers)) {
      const fileName = picked.name.replace(/[\/\u0000-\u001f]/g, "_") || "image";
      data = data.replace(JSON.stringify(marker).slice(1, -1), `data:${picked.type};base64,'"$(base64 -w0 ${shellQuote(fileName)})"'`);
    }
    return [
      // The address comes from ATELIER_BASE_URL, as in every other example, so the command works
      // wherever the service runs. API paths are plain (letters, digits, "-", "/"): safe in double quotes.
      `curl -sS -X POST "$ATELIER_BASE_URL/api${apiPath}" \\`,
      `  -H "Authorization: Bearer $ATELIER_API_KEY" \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d ${data}`,
    ].join("\n");
  }

  function refreshCurl() {
    if (curlOutput) curlOutput.textContent = curlCommand();
  }

  function readFile(name, file) {
    const preview = document.getElementById(`${name}-preview`);
    if (!file.type.startsWith("image/")) {
      pickedImages.delete(name);
      if (preview) preview.textContent = `${file.name} is not an image (${file.type || "unknown type"}).`;
      refreshCurl();
      return;
    }
    const reader = new FileReader();
    reader.addEventListener("load", () => {
      pickedImages.set(name, { dataUrl: String(reader.result), name: file.name, type: file.type });
      if (preview) {
        preview.replaceChildren();
        const image = document.createElement("img");
        image.src = String(reader.result);
        image.alt = `Chosen image ${file.name}`;
        const caption = document.createElement("span");
        caption.textContent = `${file.name}, ${formatBytes(file.size)}`;
        preview.append(image, caption);
      }
      refreshCurl();
    });
    reader.readAsDataURL(file);
  }

  for (const input of form.querySelectorAll("input[type=file][data-image-for]")) {
    const name = input.dataset.imageFor;
    input.addEventListener("change", () => {
      if (input.files && input.files[0]) readFile(name, input.files[0]);
    });
    const zone = document.getElementById(`${name}-drop`);
    if (zone) {
      for (const type of ["dragenter", "dragover"]) {
        zone.addEventListener(type, (event) => {
          event.preventDefault();
          zone.classList.add("dragging");
        });
      }
      for (const type of ["dragleave", "drop"]) zone.addEventListener(type, () => zone.classList.remove("dragging"));
      zone.addEventListener("drop", (event) => {
        event.preventDefault();
        const file = event.dataTransfer && event.dataTransfer.files[0];
        if (file) readFile(name, file);
      });
    }
  }
  // Typing a URL replaces a picked file.
  for (const input of form.querySelectorAll("[data-control=image]")) {
    input.addEventListener("input", () => {
      if (input.value.trim() !== "") pickedImages.delete(input.dataset.field);
    });
  }
  form.addEventListener("input", refreshCurl);
  form.addEventListener("change", refreshCurl);
  refreshCurl();

  if (copyButton && curlOutput) {
    copyButton.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(curlOutput.textContent || "");
        copyButton.textContent = "Copied";
      } catch {
        copyButton.textContent = "Copy failed: select the text";
      }
      setTimeout(() => (copyButton.textContent = "Copy command"), 2000);
    });
  }

  if (keepKey) {
    keepKey.addEventListener("change", () => {
      if (keepKey.checked && keyInput.value) sessionStorage.setItem(KEY_STORAGE, keyInput.value);
      else sessionStorage.removeItem(KEY_STORAGE);
    });
  }

  function showStatus(text, busy) {
    statusRegion.textContent = text;
    form.setAttribute("aria-busy", busy ? "true" : "false");
    submitButton.disabled = busy;
    cancelButton.hidden = !busy;
  }

  function describeQuota(response) {
    const remaining = response.headers.get("x-ratelimit-remaining");
    const limit = response.headers.get("x-ratelimit-limit");
    return remaining !== null && limit !== null ? ` This key has ${remaining} of ${limit} requests left this hour.` : "";
  }

  function renderImages(body) {
    const list = document.createElement("div");
    list.className = "playground-images";
    body.data.forEach((image, index) => {
      const figure = document.createElement("figure");
      const element = document.createElement("img");
      element.src = image.url;
      element.alt = `Result ${index + 1} of ${operation}`;
      const caption = document.createElement("figcaption");
      const bytes = dataUrlBytes(image.url);
      const extension = (image.mimeType.split("/")[1] || "bin").replace("jpeg", "jpg");
      const link = document.createElement("a");
      link.href = image.url;
      link.download = `atelier-${operation}-${body.id}${body.data.length > 1 ? `-${index + 1}` : ""}.${extension}`;
      link.textContent = `Download ${extension.toUpperCase()}`;
      const facts = document.createElement("span");
      facts.className = "playground-size";
      facts.textContent = `${image.width} × ${image.height} px, ${image.mimeType}, ${formatBytes(bytes)}`;
      caption.append(facts, " ", link);
      figure.append(element, caption);
      list.append(figure);
    });
    return list;
  }

  /** The response with image data URLs shortened, for reading. */
  function readableJson(body) {
    return JSON.stringify(
      body,
      (key, value) => (typeof value === "string" && value.startsWith("data:") && value.length > 120 ? `${value.slice(0, 60)}… (${value.length} characters)` : value),
      2,
    );
  }

  const progressBox = document.getElementById("playground-progress");
  const progressBar = document.getElementById("playground-progress-bar");
  const progressLabel = document.getElementById("playground-progress-label");
  const FINISHED = new Set(["succeeded", "failed", "canceled"]);
  const POLL_MS = 1000;

  /** The bar: indeterminate until the workers report steps (Lanczos never does). */
  function showProgress(job) {
    progressBox.hidden = false;
    const progress = job.progress;
    if (progress && typeof progress.fraction === "number" && progress.steps) {
      progressBar.value = progress.fraction;
      const stage = progress.stage ? `${progress.stage[0].toUpperCase()}${progress.stage.slice(1)}` : "Step";
      progressLabel.textContent = `${stage}: ${progress.step} of ${progress.steps} (${Math.round(progress.fraction * 100)}%)`;
    } else {
      progressBar.removeAttribute("value");
      progressLabel.textContent = job.status === "queued" ? `Queued${job.queuePosition ? ` (position ${job.queuePosition})` : ""}` : "Running";
    }
  }

  function showFinalProgress(status) {
    progressBox.hidden = false;
    if (status === "succeeded") {
      progressBar.value = 1;
      progressLabel.textContent = "Finished (100%)";
    } else {
      if (!progressBar.hasAttribute("value")) progressBar.value = 0;
      progressLabel.textContent = status === "canceled" ? "Canceled" : "Failed";
    }
  }

  function showError(error, fallback) {
    const alert = document.createElement("p");
    alert.className = "playground-error";
    alert.setAttribute("role", "alert");
    const detail = (error && error.error) || error || {};
    alert.textContent = `${detail.code || fallback}: ${detail.message || "no message"}`;
    resultRegion.append(alert);
  }

  function showResult(answer) {
    if (Array.isArray(answer.data)) resultRegion.append(renderImages(answer));
    const details = document.createElement("details");
    details.open = !Array.isArray(answer.data);
    const summary = document.createElement("summary");
    summary.textContent = "Response JSON";
    const pre = document.createElement("pre");
    pre.textContent = readableJson(answer);
    details.append(summary, pre);
    resultRegion.append(details);
  }

  /**
   * Follows the job's Server-Sent Events with fetch() (EventSource cannot send the Authorization
   * header) and calls `onEvent(type, data)` per event. Resolves when the stream ends.
   */
  async function streamEvents(jobId, key, signal, onEvent) {
    const response = await fetch(`/api/v1/jobs/${encodeURIComponent(jobId)}/events`, {
      headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
      signal,
      credentials: "omit",
      cache: "no-store",
    });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replaceAll("\r\n", "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) type = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length > 0) onEvent(type, JSON.parse(data.join("\n")));
      }
    }
  }

  async function getJob(jobId, key, signal) {
    const response = await fetch(`/api/v1/jobs/${encodeURIComponent(jobId)}`, { headers: { authorization: `Bearer ${key}` }, signal, credentials: "omit", cache: "no-store" });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw Object.assign(new Error(answer.message || `HTTP ${response.status}`), { answer });
    return answer;
  }

  /** The finished job: from the event stream, or by polling the job where the stream fails. */
  async function finishedJob(job, key, signal) {
    let current = job;
    try {
      let final;
      let succeeded = false;
      await streamEvents(job.id, key, signal, (type, data) => {
        if (type === "progress") showProgress((current = { ...current, status: "running", progress: data }));
        else if (type === "status") {
          current = { ...current, status: data.status };
          if (!FINISHED.has(data.status)) showProgress(current);
        } else if (type === "result") succeeded = true;
        else if (type === "error") final = { ...current, error: data, status: FINISHED.has(current.status) ? current.status : "failed" };
      });
      // The result event says where the result is; the job carries it.
      if (succeeded) return await getJob(job.id, key, signal);
      if (final) return final;
    } catch (error) {
      if (signal.aborted) throw error;
      // The stream failed (a proxy that buffers, a dropped connection): poll the job instead.
    }
    for (;;) {
      current = await getJob(job.id, key, signal);
      if (FINISHED.has(current.status)) return current;
      showProgress(current);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  cancelButton.addEventListener("click", async () => {
    if (!running) return;
    if (!running.jobId) {
      running.controller.abort();
      return;
    }
    cancelButton.disabled = true;
    // The stream then reports the job canceled; an error (already finished) leaves it to the stream.
    await fetch(`/api/v1/jobs/${encodeURIComponent(running.jobId)}`, { method: "DELETE", headers: { authorization: `Bearer ${running.key}` }, credentials: "omit" }).catch(() => undefined);
    cancelButton.disabled = false;
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = keyInput.value.trim();
    if (!key) {
      showStatus("Enter one of your API keys first (API keys page: Create key).", false);
      keyInput.focus();
      return;
    }
    if (keepKey && keepKey.checked) sessionStorage.setItem(KEY_STORAGE, key);
    const { body } = collectBody();
    const controller = new AbortController();
    running = { controller, key };
    const started = performance.now();
    const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);
    resultRegion.replaceChildren();
    progressBox.hidden = true;
    showStatus("Working… 0 s", true);
    const ticker = setInterval(() => showStatus(`Working… ${Math.round((performance.now() - started) / 1000)} s`, true), 1000);
    try {
      const response = await fetch(`/api${apiPath}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", prefer: "respond-async" },
        body: JSON.stringify(body),
        signal: controller.signal,
        credentials: "omit",
      });
      const quota = describeQuota(response);
      const answer = await response.json().catch(() => ({ message: "The answer was not JSON." }));
      if (!response.ok) {
        showStatus(`Failed after ${elapsed()} s: HTTP ${response.status}.${quota}`, false);
        showError(answer, response.status);
        return;
      }
      // 202 with the job; a server that finished at once may answer 200 with the body itself.
      let job = response.status === 202 ? answer : { id: undefined, status: "succeeded", result: answer };
      if (job.id) {
        running.jobId = job.id;
        showProgress(job);
        job = await finishedJob(job, key, controller.signal);
      }
      showFinalProgress(job.status);
      if (job.status === "succeeded") {
        showStatus(`Done in ${elapsed()} s (job ${job.id || "none"}, request ${(job.result && job.result.id) || "?"}).${quota}`, false);
        showResult(job.result);
      } else if (job.status === "canceled") {
        showStatus(`Canceled after ${elapsed()} s (job ${job.id}).`, false);
      } else {
        showStatus(`Failed after ${elapsed()} s (job ${job.id}).${quota}`, false);
        showError(job.error, "FAILED");
      }
    } catch (error) {
      showStatus(error && error.name === "AbortError" ? "Cancelled." : `The request failed: ${error}`, false);
    } finally {
      clearInterval(ticker);
      running = undefined;
    }
  });
}
