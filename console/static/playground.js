// Playground page: builds the request from the form (fields rendered from the API's own schema,
// pickers from the installed models), calls the REST endpoint as a job (`Prefer: respond-async`)
// charged to the chosen key, follows its progress, and shows the result: a before/after slider for
// upscales and cut-outs, the improved prompt as text, downloads named after the photo. Two ways to
// name the key: one of the user's keys by id with the session and its CSRF token (the job is then
// followed through the console's session routes, /playground/jobs/...), or a pasted secret sent as
// any client would (the job followed with the API's event stream). The curl command beside it
// uploads the picked file as a multipart form. No inline script: the page's CSP forbids it.
"use strict";

const form = document.getElementById("playground-form");
const KEY_STORAGE = "atelier.playground.key";

if (form) {
  const apiPath = form.dataset.apiPath;
  const operation = form.dataset.operation;
  const keyChoice = document.getElementById("playground-key-choice");
  const pasteBox = document.getElementById("playground-paste");
  const keyInput = document.getElementById("playground-key");
  const keepKey = document.getElementById("playground-keep-key");
  const curlOutput = document.getElementById("playground-curl");
  const statusRegion = document.getElementById("playground-status");
  const resultRegion = document.getElementById("playground-result");
  const submitButton = document.getElementById("playground-run");
  const cancelButton = document.getElementById("playground-cancel");
  const copyButton = document.getElementById("playground-copy-curl");
  const csrfMeta = document.querySelector('meta[name="csrf-token"]');
  /** Per image field: the picked or dropped file, and its data URL (preview and "before"). */
  const pickedImages = new Map();
  let running;

  const pasting = () => !keyChoice || keyChoice.value === "";
  function showKeyMode() {
    if (pasteBox) pasteBox.hidden = !pasting();
  }
  const remembered = sessionStorage.getItem(KEY_STORAGE);
  if (remembered && keyInput) {
    keyInput.value = remembered;
    if (keepKey) keepKey.checked = true;
  }
  if (keyChoice) keyChoice.addEventListener("change", showKeyMode);
  showKeyMode();

  function formatBytes(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
    return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  }

  function field(name) {
    return form.querySelector(`[data-field="${name}"]`);
  }

  /** The replacement picker's value: a preset word, a colour, or a described scene. */
  function replacementValue(select) {
    if (select.value === "colour") return document.getElementById(`${select.id}-colour`).value;
    if (select.value === "scene") return document.getElementById(`${select.id}-scene`).value.trim();
    return select.value;
  }

  /** The request's fields (no picked files), and the picked files by field name. */
  function collectBody() {
    const body = {};
    const files = {};
    for (const element of form.querySelectorAll("[data-field]")) {
      const name = element.dataset.field;
      const control = element.dataset.control;
      const wrapper = element.closest("[data-field-wrapper]");
      if (wrapper && wrapper.hidden) continue;
      if (control === "image") {
        const picked = pickedImages.get(name);
        if (picked) files[name] = picked;
        else if (element.value.trim() !== "") body[name] = element.value.trim();
      } else if (control === "checkbox") {
        if (element.checked !== (element.dataset.default === "true")) body[name] = element.checked;
      } else if (control === "replacement") {
        const value = replacementValue(element);
        if (value !== "") body[name] = value;
      } else if (element.value !== "" && element.value !== element.dataset.default) {
        // Values equal to the schema's default are left out: the API applies them anyway.
        body[name] = control === "integer" || control === "number" ? Number(element.value) : element.value;
      }
    }
    return { body, files };
  }

  function shellQuote(text) {
    return `'${String(text).replaceAll("'", "'\\''")}'`;
  }

  /** A file name as curl's -F reads it: quoted when it holds a character curl's form syntax treats specially. */
  function curlFileName(name) {
    return /[;,"\\]/.test(name) ? `"${name.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"` : name;
  }

  const EXTENSIONS = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp" };

  /** "cat photo" from "cat photo.png", or from an image URL's last segment; "image" when there is none. */
  function baseName() {
    const picked = pickedImages.get("imageUrl");
    let name = picked ? picked.file.name : "photo";
    if (!picked && field("imageUrl") && field("imageUrl").value) {
      const segment = URL.parse(field("imageUrl").value)?.pathname.split("/").pop() || "";
      try {
        name = decodeURIComponent(segment);
      } catch {
        name = segment;
      }
    }
    name = name.replace(/\.[a-z0-9]{1,5}$/i, "").replace(/[\/\\\u0000-\u001f]/g, "_").slice(0, 80);
    return name || "image";
  }

  /** A download name that says what was done: `photo-upscaled-x4.png`, `photo-no-background.png`, `generated-an-owl.png`. */
  function downloadName(body, answer, mimeType, index, count) {
    const extension = EXTENSIONS[mimeType] || "bin";
    const suffix = count > 1 ? `-${index + 1}` : "";
    let stem;
    if (operation === "upscale") stem = `${baseName()}-upscaled-x${body.scale || (field("scale") && field("scale").dataset.default) || 2}`;
    else if (operation === "background-remove") stem = `${baseName()}-${body.onlyMask ? "mask" : body.replacement ? "new-background" : "no-background"}`;
    else if (operation === "style-transfer") stem = `${baseName()}-${answer.style || body.style || "styled"}`;
    else if (operation === "generate") {
      const words = String(body.prompt || "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40).replace(/-$/, "");
      stem = `generated${words ? `-${words}` : ""}`;
    } else stem = operation;
    return `${stem}${suffix}.${extension}`;
  }

  /** The image type the call answers with: the chosen output format, else PNG. */
  function answerType(body) {
    return { jpeg: "image/jpeg", webp: "image/webp" }[body.outputFormat] || "image/png";
  }

  /**
   * The same call with curl, run as printed in the folder holding the picture: a picked file goes
   * as a multipart upload (`-F image=@file`, no base64 on the command line), text fields with
   * --form-string (taken literally, whatever they start with); an image answer is saved under the
   * name the page's download would have.
   */
  function curlCommand() {
    const { body, files } = collectBody();
    const lines = [
      // The address comes from ATELIER_BASE_URL, as in every other example. API paths are plain: safe in double quotes.
      `curl -sS -X POST "$ATELIER_BASE_URL/api${apiPath}"`,
      `  -H "Authorization: Bearer $ATELIER_API_KEY"`,
    ];
    const returnsImages = operation !== "prompt-improve";
    if (returnsImages) lines.push(`  -H ${shellQuote(`Accept: ${answerType(body)}`)}`);
    // An image operation with no picture chosen yet shows the upload of a file named photo.jpg.
    const picked = files.imageUrl || (field("imageUrl") && body.imageUrl === undefined ? { file: { name: "photo.jpg" } } : undefined);
    if (picked) {
      lines.push(`  -F ${shellQuote(`image=@${curlFileName(picked.file.name)}`)}`);
      for (const [name, value] of Object.entries(body)) lines.push(`  --form-string ${shellQuote(`${name}=${value}`)}`);
    } else {
      lines.push(`  -H 'Content-Type: application/json'`, `  -d ${shellQuote(JSON.stringify(body))}`);
    }
    if (returnsImages) lines.push(`  -o ${shellQuote(downloadName(body, {}, answerType(body), 0, 1))}`);
    return lines.join(" \\\n");
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
      pickedImages.set(name, { file, dataUrl: String(reader.result) });
      if (preview) {
        preview.replaceChildren();
        const image = document.createElement("img");
        image.src = String(reader.result);
        image.alt = `Chosen image ${file.name}`;
        const caption = document.createElement("span");
        caption.textContent = `${file.name}, ${formatBytes(file.size)}`;
        preview.append(image, caption);
      }
      const urlInput = form.querySelector(`[data-control=image][data-field="${name}"]`);
      if (urlInput) urlInput.value = "";
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
      zone.addEventListener("dragover", (event) => {
        event.preventDefault();
        zone.classList.add("dragging");
      });
      zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
      zone.addEventListener("drop", (event) => {
        event.preventDefault();
        zone.classList.remove("dragging");
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

  /** Hides what the chosen model does not take: tuning options of generation models, the upscale quality of Automatic. */
  function showApplicableOptions() {
    const model = field("model");
    const chosen = model && model.selectedOptions[0];
    if (chosen && chosen.dataset.takes !== undefined) {
      const takes = new Set(chosen.dataset.takes.split(" ").filter(Boolean));
      for (const wrapper of form.querySelectorAll("[data-tuning-option]")) wrapper.hidden = !takes.has(wrapper.dataset.tuningOption);
    }
    for (const wrapper of form.querySelectorAll("[data-automatic-only]")) wrapper.hidden = Boolean(model && model.value !== "");
    const replacement = form.querySelector("[data-control=replacement]");
    if (replacement) {
      for (const extra of form.querySelectorAll("[data-replacement-for]")) extra.hidden = extra.dataset.replacementFor !== replacement.value;
    }
  }

  // Style thumbnails choose the style; the select stays the control of record.
  const styleSelect = operation === "style-transfer" ? field("style") : null;
  function markStyle() {
    for (const button of form.querySelectorAll(".style-preview")) button.setAttribute("aria-pressed", String(styleSelect && button.dataset.style === styleSelect.value));
  }
  for (const button of form.querySelectorAll(".style-preview")) {
    button.setAttribute("aria-label", `Use the style ${button.textContent.trim()}`);
    button.addEventListener("click", () => {
      styleSelect.value = button.dataset.style;
      markStyle();
      refreshCurl();
    });
  }
  if (styleSelect) styleSelect.addEventListener("change", markStyle);

  form.addEventListener("input", refreshCurl);
  form.addEventListener("change", () => {
    showApplicableOptions();
    refreshCurl();
  });
  showApplicableOptions();
  refreshCurl();

  function copyText(button, text, label) {
    navigator.clipboard.writeText(text).then(
      () => (button.textContent = "Copied"),
      () => (button.textContent = "Copy failed: select the text"),
    );
    setTimeout(() => (button.textContent = label), 2000);
  }
  if (copyButton && curlOutput) copyButton.addEventListener("click", () => copyText(copyButton, curlOutput.textContent || "", "Copy command"));

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

  // --- errors next to their fields ---------------------------------------------------------------

  function clearFieldErrors() {
    for (const slot of form.querySelectorAll(".field-error")) {
      slot.hidden = true;
      slot.replaceChildren();
    }
    for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  }

  /** The field an error is about: its issues' paths, or the model or style a missing model names. */
  function fieldErrors(detail) {
    const byField = new Map();
    for (const issue of detail.issues || []) {
      const name = String(issue.path || "").split(".")[0] === "image" ? "imageUrl" : String(issue.path || "").split(".")[0];
      if (field(name)) byField.set(name, [...(byField.get(name) || []), issue.message]);
    }
    if (byField.size === 0 && detail.code === "MODEL_NOT_INSTALLED") {
      const name = operation === "style-transfer" ? "style" : "model";
      if (field(name)) byField.set(name, [detail.message]);
    }
    return byField;
  }

  function showFieldErrors(detail) {
    const byField = fieldErrors(detail);
    let first;
    for (const [name, messages] of byField) {
      const control = field(name);
      const slot = document.getElementById(`field-${name}-error`);
      if (!slot) continue;
      slot.textContent = messages.join(" ");
      if (detail.code === "MODEL_NOT_INSTALLED") {
        const link = document.createElement("a");
        link.href = "/models";
        link.textContent = "Install it on the Models page";
        slot.append(" ", link);
      }
      slot.hidden = false;
      control.setAttribute("aria-invalid", "true");
      first = first || control;
    }
    if (first) first.focus();
    return byField.size > 0;
  }

  function showError(error, fallback) {
    const detail = (error && error.error) || error || {};
    const alert = document.createElement("p");
    alert.className = "playground-error";
    alert.setAttribute("role", "alert");
    alert.textContent = `${detail.code || fallback}: ${detail.message || "no message"}`;
    resultRegion.append(alert);
    showFieldErrors(detail);
  }

  // --- results -------------------------------------------------------------------------------------

  /** A before/after comparison: the result over the original, cut at the slider's position. */
  function comparison(before, after, alt) {
    const box = document.createElement("div");
    box.className = "playground-compare";
    const under = document.createElement("img");
    under.src = before;
    under.alt = "Before";
    under.className = "playground-compare-before";
    const over = document.createElement("img");
    over.src = after;
    over.alt = alt;
    over.className = "playground-compare-after";
    const slider = document.createElement("input");
    slider.type = "range";
    slider.min = "0";
    slider.max = "100";
    slider.value = "50";
    slider.className = "playground-compare-slider";
    slider.setAttribute("aria-label", "Before and after: drag to compare");
    // CSSOM, not a style attribute: the page's CSP allows the one and refuses the other.
    const place = () => box.style.setProperty("--split", `${slider.value}%`);
    slider.addEventListener("input", place);
    place();
    box.append(under, over, slider);
    return box;
  }

  function renderImages(answer, body, before) {
    const list = document.createElement("div");
    list.className = "playground-images";
    answer.data.forEach((image, index) => {
      const figure = document.createElement("figure");
      const alt = `Result ${index + 1} of ${operation}`;
      if (before && (operation === "upscale" || operation === "background-remove")) figure.append(comparison(before, image.url, alt));
      else {
        const element = document.createElement("img");
        element.src = image.url;
        element.alt = alt;
        figure.append(element);
      }
      const caption = document.createElement("figcaption");
      const extension = EXTENSIONS[image.mimeType] || "bin";
      const link = document.createElement("a");
      link.href = image.url;
      link.download = downloadName(body, answer, image.mimeType, index, answer.data.length);
      link.className = "button button-quiet";
      link.textContent = `Download ${extension.toUpperCase()}`;
      const facts = document.createElement("span");
      facts.className = "playground-size";
      facts.textContent = `${image.width} × ${image.height} px`;
      caption.append(facts, " ", link);
      figure.append(caption);
      list.append(figure);
    });
    return list;
  }

  /** The improved prompt(s) as text, each with Copy and "Generate with this prompt". */
  function renderPrompts(answer) {
    const list = document.createElement("div");
    list.className = "playground-prompts";
    const variants = Array.isArray(answer.variants) && answer.variants.length > 0 ? answer.variants : [{ prompt: answer.prompt }];
    variants.forEach((variant, index) => {
      const box = document.createElement("figure");
      const text = document.createElement("blockquote");
      text.className = "playground-prompt";
      text.textContent = variant.prompt;
      const caption = document.createElement("figcaption");
      const copy = document.createElement("button");
      copy.type = "button";
      copy.className = "button button-quiet";
      const label = variants.length > 1 ? `Copy prompt ${index + 1}` : "Copy prompt";
      copy.textContent = label;
      copy.addEventListener("click", () => copyText(copy, variant.prompt, label));
      const generate = document.createElement("a");
      generate.className = "button button-primary";
      generate.href = `/playground/generate?prompt=${encodeURIComponent(variant.prompt)}`;
      generate.textContent = "Generate with this prompt";
      caption.append(copy, " ", generate);
      box.append(text, caption);
      list.append(box);
    });
    return list;
  }

  /** Adds a new result to the gallery, first. */
  function addToGallery(answer, jobId) {
    const gallery = document.getElementById("playground-gallery");
    if (!gallery || !Array.isArray(answer.data) || answer.data.length === 0) return;
    const image = answer.data[0];
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = jobId ? `/jobs/${encodeURIComponent(jobId)}` : image.url;
    const thumbnail = document.createElement("img");
    thumbnail.src = image.url;
    thumbnail.alt = `${operation} result, ${image.width} × ${image.height} px`;
    const caption = document.createElement("span");
    caption.textContent = `${operation}, just now`;
    link.append(thumbnail, caption);
    item.append(link);
    gallery.prepend(item);
    const empty = document.getElementById("playground-gallery-empty");
    if (empty) empty.remove();
  }

  /** The response with image data URLs shortened, for reading. */
  function readableJson(body) {
    return JSON.stringify(
      body,
      (key, value) => (typeof value === "string" && value.startsWith("data:") && value.length > 120 ? `${value.slice(0, 60)}… (${value.length} characters)` : value),
      2,
    );
  }

  function showResult(answer, body, before, jobId) {
    if (Array.isArray(answer.data)) {
      resultRegion.append(renderImages(answer, body, before));
      addToGallery(answer, jobId);
    } else if (typeof answer.prompt === "string") resultRegion.append(renderPrompts(answer));
    const details = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = "Response JSON";
    const pre = document.createElement("pre");
    pre.textContent = readableJson(answer);
    details.append(summary, pre);
    resultRegion.append(details);
  }

  // --- progress ------------------------------------------------------------------------------------

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

  const pause = () => new Promise((resolve) => setTimeout(resolve, POLL_MS));

  /** With the session: the job through the console's own routes (the page holds no secret for /api/v1/jobs). */
  const sessionJobs = {
    async get(jobId, signal) {
      const response = await fetch(`/playground/jobs/${encodeURIComponent(jobId)}`, { signal, cache: "no-store" });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) throw Object.assign(new Error(answer.message || `HTTP ${response.status}`), { answer });
      return answer;
    },
    async finished(job, signal) {
      for (;;) {
        const current = await this.get(job.id, signal);
        if (FINISHED.has(current.status)) return current;
        showProgress(current);
        await pause();
      }
    },
    cancel(jobId) {
      return fetch(`/playground/jobs/${encodeURIComponent(jobId)}/cancel`, { method: "POST", headers: { "x-csrf-token": csrfMeta ? csrfMeta.content : "" } });
    },
  };

  /** With a pasted key: the job through the API, as any client follows it. */
  function apiJobs(key) {
    const headers = { authorization: `Bearer ${key}` };
    return {
      async get(jobId, signal) {
        const response = await fetch(`/api/v1/jobs/${encodeURIComponent(jobId)}`, { headers, signal, credentials: "omit", cache: "no-store" });
        const answer = await response.json().catch(() => ({}));
        if (!response.ok) throw Object.assign(new Error(answer.message || `HTTP ${response.status}`), { answer });
        return answer;
      },
      /**
       * Follows the job's Server-Sent Events with fetch() (EventSource cannot send the Authorization
       * header) and calls `onEvent(type, data)` per event. Resolves when the stream ends.
       */
      async stream(jobId, signal, onEvent) {
        const response = await fetch(`/api/v1/jobs/${encodeURIComponent(jobId)}/events`, { headers: { ...headers, accept: "text/event-stream" }, signal, credentials: "omit", cache: "no-store" });
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
      },
      /** The finished job: from the event stream, or by polling the job where the stream fails. */
      async finished(job, signal) {
        let current = job;
        try {
          let final;
          let succeeded = false;
          await this.stream(job.id, signal, (type, data) => {
            if (type === "progress") showProgress((current = { ...current, status: "running", progress: data }));
            else if (type === "status") {
              current = { ...current, status: data.status };
              if (!FINISHED.has(data.status)) showProgress(current);
            } else if (type === "result") succeeded = true;
            else if (type === "error") final = { ...current, error: data, status: FINISHED.has(current.status) ? current.status : "failed" };
          });
          // The result event says where the result is; the job carries it.
          if (succeeded) return await this.get(job.id, signal);
          if (final) return final;
        } catch (error) {
          if (signal.aborted) throw error;
          // The stream failed (a proxy that buffers, a dropped connection): poll the job instead.
        }
        for (;;) {
          current = await this.get(job.id, signal);
          if (FINISHED.has(current.status)) return current;
          showProgress(current);
          await pause();
        }
      },
      cancel(jobId) {
        return fetch(`/api/v1/jobs/${encodeURIComponent(jobId)}`, { method: "DELETE", headers, credentials: "omit" });
      },
    };
  }

  cancelButton.addEventListener("click", async () => {
    if (!running) return;
    if (!running.jobId) {
      running.controller.abort();
      return;
    }
    cancelButton.disabled = true;
    // The job then reports itself canceled; an error (already finished) leaves it to the follower.
    await running.jobs.cancel(running.jobId).catch(() => undefined);
    cancelButton.disabled = false;
  });

  /** The request: a multipart form when a file was picked (the file as it is), else JSON. */
  function requestOf(body, files) {
    if (Object.keys(files).length === 0) return { body: JSON.stringify(body), headers: { "content-type": "application/json" } };
    const data = new FormData();
    for (const [name, picked] of Object.entries(files)) data.append(name === "imageUrl" ? "image" : name, picked.file, picked.file.name);
    for (const [name, value] of Object.entries(body)) data.append(name, String(value));
    return { body: data, headers: {} };
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors();
    let auth;
    let jobs;
    if (pasting()) {
      const key = keyInput.value.trim();
      if (!key) {
        showStatus("Paste the secret of one of your keys first, or pick a key above (API keys page: Create key).", false);
        keyInput.focus();
        return;
      }
      if (keepKey && keepKey.checked) sessionStorage.setItem(KEY_STORAGE, key);
      auth = { headers: { authorization: `Bearer ${key}` }, credentials: "omit" };
      jobs = apiJobs(key);
    } else {
      auth = { headers: { [keyChoice.dataset.sessionHeader]: keyChoice.value, "x-csrf-token": csrfMeta ? csrfMeta.content : "" }, credentials: "same-origin" };
      jobs = sessionJobs;
    }
    const { body, files } = collectBody();
    const before = files.imageUrl ? files.imageUrl.dataUrl : undefined;
    const request = requestOf(body, files);
    const controller = new AbortController();
    running = { controller, jobs };
    const started = performance.now();
    const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);
    resultRegion.replaceChildren();
    progressBox.hidden = true;
    showStatus("Working… 0 s", true);
    const ticker = setInterval(() => showStatus(`Working… ${Math.round((performance.now() - started) / 1000)} s`, true), 1000);
    try {
      const response = await fetch(`/api${apiPath}`, {
        method: "POST",
        headers: { ...auth.headers, ...request.headers, prefer: "respond-async" },
        body: request.body,
        signal: controller.signal,
        credentials: auth.credentials,
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
        job = await jobs.finished(job, controller.signal);
      }
      showFinalProgress(job.status);
      if (job.status === "succeeded") {
        showStatus(`Done in ${elapsed()} s (job ${job.id || "none"}, request ${(job.result && job.result.id) || "?"}).${quota}`, false);
        showResult(job.result, body, before, job.id);
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
