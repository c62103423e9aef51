/** What `npm start` prints for the person who ran it: where to go, how to get a key, what is installed. */
import type { FirstAdminSetup } from "../console/server/first-admin-setup.js";
import type { AtelierConfig } from "../core/config.js";
import type { RunningOperations } from "./service-operations.js";

/** `firstAdmin`: the console's setup link, printed while no account exists (this is the one place it appears). */
export async function startBanner(config: AtelierConfig, url: string, operations: RunningOperations, hostsWorker: boolean, firstAdmin?: FirstAdminSetup): Promise<string> {
  const consoleUrl = config.console.publicOrigin ?? url;
  const lines = [
    `Atelier is listening on ${url} (API under ${url}/api/v1)`,
    `  Console:   ${config.console.enabled ? `${consoleUrl}/` : "off (ATELIER_CONSOLE=off)"}`,
    `  OpenAPI:   ${url}/api/v1/openapi.json`,
    `  Health:    ${url}/healthz, readiness: ${url}/readyz`,
    `  Metrics:   ${operations.metrics ? operations.metrics.url : "off (set ATELIER_METRICS_PORT to serve them)"}`,
    `  First key: npm run keys -- create --name my-app   (the secret is shown once)`,
  ];
  if (config.console.enabled && firstAdmin && (await firstAdmin.isOpen())) {
    lines.push(
      `  Setup:     no account exists yet: open ${firstAdmin.link(consoleUrl)} to create the first administrator`,
      "             (the link works until an account exists; scripted: npm run users -- create --email you@example.com --admin --password-stdin)",
    );
  }
  if (hostsWorker) {
    // Only where a worker runs: a router-only process never loads the model catalog.
    const { MODEL_CATALOG } = await import("../models/catalog/model-catalog.js");
    const { ModelStore } = await import("../models/store/model-store.js");
    const store = new ModelStore(config.modelsDir);
    const installed = MODEL_CATALOG.filter((entry) => store.isInstalled(entry));
    const byTask = new Map<string, string[]>();
    for (const entry of installed) byTask.set(entry.task, [...(byTask.get(entry.task) ?? []), entry.id]);
    lines.push(`  Models in ${config.modelsDir}:`);
    for (const [task, ids] of byTask) lines.push(`    ${task.padEnd(18)} ${ids.join(", ")}`);
    const arriving = operations.provisioner?.status().models.filter((model) => model.state !== "installed") ?? [];
    if (arriving.length > 0) {
      lines.push(`  Installing in the background from ${operations.provisioner!.status().source}: ${arriving.map((model) => model.id).join(", ")} (progress: ${url}/readyz)`);
    } else if (!config.provisionModels) {
      lines.push("  Starter models are not fetched (ATELIER_PROVISION_MODELS=false); add models with: npm run models -- pull ID");
    }
    lines.push("  More models: npm run models -- list");
  }
  return lines.join("\n");
}
