/**
 * The Models page: the catalog as the API reports it (`GET /api/v1/models`: installed state,
 * licence, size), and for admins Install and Remove buttons that run the real installer in the
 * background (server/model-installs/) with a progress bar the page polls (console/static/models.js).
 * The buttons are plain forms, so they also work without script.
 */
import type express from "express";
import type { NextFunction, Request, Response } from "express";
import { AtelierError, ERROR_KINDS } from "../../core/errors.js";
import type { AtelierServices, RequestContext } from "../../server/context.js";
import type { InstallJob } from "../../server/model-installs/model-installs.js";
import { appRouter } from "../../server/router.js";
import { catalogEntry } from "../../models/catalog/model-catalog.js";
import type { CatalogEntry } from "../../models/catalog/catalog-types.js";
import { licenseCaution } from "../../server/model-installs/license-terms.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";
import { currentUser, registerPage, requireAdmin, requireSession, type PageRequest } from "../server/pages.js";
import { setNotice } from "../server/session-cookie.js";

/** The model list exactly as `GET /api/v1/models` answers it (the workers' view of what is installed). */
async function listModels(services: AtelierServices, requestId: string) {
  const context: RequestContext = { requestId, authorization: undefined, setHeader: () => {}, signal: new AbortController().signal, services };
  return (await appRouter.createCaller(context).models.list()).data;
}
type ModelRecord = Awaited<ReturnType<typeof listModels>>[number];

const TASK_LABELS: Record<ModelRecord["task"], string> = {
  generate: "Generation",
  upscale: "Upscaling",
  "style-transfer": "Style transfer",
  "background-remove": "Background removal",
  "prompt-improve": "Prompt improvement",
};

function size(bytes: number): string {
  if (bytes === 0) return "–";
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

function going(job: InstallJob | undefined): boolean {
  return job !== undefined && (job.state === "queued" || job.state === "running");
}

function jobText(job: InstallJob | undefined): string {
  if (!job) return "";
  switch (job.state) {
    case "queued":
      return "Queued…";
    case "running":
      return job.totalBytes > 0 ? `Installing: ${size(job.receivedBytes)} of ${size(job.totalBytes)}` : "Installing…";
    case "installed":
      return "Installed and verified.";
    case "cancelled":
      return "Install cancelled.";
    case "failed":
      return `Install failed: ${job.message ?? "see the server log"}`;
  }
}

function actions(page: PageRequest, model: ModelRecord, job: InstallJob | undefined): Html {
  const entry = catalogEntry(model.id);
  const installable = entry !== undefined && page.services.modelInstalls.canInstall(entry);
  if (page.user!.role !== "admin") {
    return model.installed || !model.installCommand ? html`` : html`<span class="muted install-command">An admin installs it (<code>${model.installCommand}</code>).</span>`;
  }
  const form = (action: "install" | "remove" | "cancel", label: string, style: string) =>
    html`<form method="post" action="/models/${model.id}/${action}" class="inline-form" data-model-action="${action}" data-model-id="${model.id}">${csrfField(page.csrfToken)}<button type="submit" class="button ${style}">${label}<span class="visually-hidden"> ${model.name}</span></button></form>`;
  if (going(job)) return form("cancel", "Cancel", "button-quiet");
  if (model.installed) return installable ? form("remove", "Remove", "button-danger") : html`<span class="muted">Ships with the service</span>`;
  if (installable) return installForm(page, model, entry);
  return model.installCommand ? html`<span class="muted install-command"><code>${model.installCommand}</code></span>` : html``;
}

/**
 * The Install button; for a model whose licence must be accepted (license-terms.ts), with a required
 * box naming the licence, which the server checks too.
 */
function installForm(page: PageRequest, model: ModelRecord, entry: CatalogEntry): Html {
  const caution = licenseCaution(entry);
  const accept =
    caution === undefined
      ? html``
      : html`<label class="accept-license"><input type="checkbox" name="acceptLicense" value="yes" required><span>I accept the licence, knowing ${caution}: <em>${model.license}</em></span></label>`;
  return html`<form method="post" action="/models/${model.id}/install" class="inline-form install-form" data-model-action="install" data-model-id="${model.id}">${csrfField(page.csrfToken)}${accept}<button type="submit" class="button button-primary">Install<span class="visually-hidden"> ${model.name}</span></button></form>`;
}

async function modelsPage(page: PageRequest): Promise<Html> {
  const models = await listModels(page.services, String(page.res.getHeader("x-request-id") ?? "console"));
  const jobs = new Map(page.services.modelInstalls.list().map((job) => [job.modelId, job]));
  const admin = page.user!.role === "admin";
  const installed = models.filter((model) => model.installed).length;
  return html`<p class="lead">${count(installed)} of ${count(models.length)} catalogued models are installed on this server.${admin ? " Install or remove weights here; every file is checked against its pinned checksum before the model goes live." : ""}</p>
    <p id="models-status" class="visually-hidden" role="status" aria-live="polite"></p>
    <table class="data-table" id="models-table">
      <caption>Model catalog</caption>
      <thead><tr><th scope="col">Model</th><th scope="col">Task</th><th scope="col">Licence</th><th scope="col">Size</th><th scope="col">State</th><th scope="col">${admin ? "Actions" : "How to install"}</th></tr></thead>
      <tbody>${models.map((model) => {
        const job = jobs.get(model.id);
        return html`<tr data-model-id="${model.id}" data-installing="${String(going(job))}">
          <th scope="row" data-label="Model">${model.name}<br><code>${model.id}</code></th>
          <td data-label="Task">${TASK_LABELS[model.task]}</td>
          <td data-label="Licence"><span>${model.license}${model.nonCommercial ? html` <span class="badge badge-warning">non-commercial</span>` : catalogEntry(model.id)?.licenseStated === false ? html` <span class="badge badge-warning">no licence</span>` : html``}</span></td>
          <td data-label="Size">${size(model.sizeBytes)}</td>
          <td data-label="State"><span class="status ${model.disabled ? "status-revoked" : model.installed ? "status-active" : "status-missing"}">${model.disabled ? "disabled" : model.installed ? "installed" : "not installed"}</span>
            <div class="install-progress">
              <progress max="${job && job.totalBytes > 0 ? job.totalBytes : 1}" value="${job ? job.receivedBytes : 0}" aria-label="Install progress of ${model.name}"${going(job) ? html`` : html` hidden`}></progress>
              <span data-install-text>${jobText(job)}</span>
            </div>
          </td>
          <td data-label="${admin ? "Actions" : "How to install"}">${actions(page, model, job)}</td>
        </tr>`;
      })}</tbody>
    </table>`;
}

function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** JSON for scripts (they send Accept: application/json), a redirect with a notice for plain forms. */
function answer(req: Request, res: Response, status: number, body: Record<string, unknown>, notice: string): void {
  if (req.accepts(["html", "json"]) === "json") {
    res.status(status).json(body);
    return;
  }
  setNotice(req, res, notice);
  res.redirect(303, "/models");
}

function modelAction(services: AtelierServices, action: "install" | "remove" | "cancel") {
  return (req: Request, res: Response, next: NextFunction) => {
    const id = String(req.params.id ?? "");
    try {
      if (action === "install") {
        const licenseAccepted = (req.body as Record<string, unknown> | undefined)?.acceptLicense === "yes";
        const job = services.modelInstalls.install(id, currentUser(res)!.id, { licenseAccepted });
        answer(req, res, 202, { job }, `Installing ${id}; the progress shows below.`);
      } else if (action === "remove") {
        const removed = services.modelInstalls.remove(id);
        answer(req, res, 200, { removed }, removed ? `${id} removed.` : `${id} was not installed.`);
      } else {
        const cancelled = services.modelInstalls.cancel(id);
        answer(req, res, 200, { cancelled }, cancelled ? `Install of ${id} cancelled.` : `No install of ${id} was running.`);
      }
    } catch (error) {
      if (!(error instanceof AtelierError)) return next(error);
      answer(req, res, ERROR_KINDS[error.code].http, { code: error.code, message: error.message }, error.message);
    }
  };
}

export function registerModelPages(router: express.Router, services: AtelierServices): void {
  registerPage(router, services, {
    path: "/models",
    title: "Models",
    nav: { label: "Models", order: 40 },
    access: "signed-in",
    scripts: ["models.js"],
    styles: ["models.css"],
    get: modelsPage,
  });
  router.get("/models/installs", requireSession, requireAdmin, (_req, res) => {
    res.json({ jobs: services.modelInstalls.list() });
  });
  for (const action of ["install", "remove", "cancel"] as const) {
    router.post(`/models/:id/${action}`, requireSession, requireAdmin, modelAction(services, action));
  }
}
