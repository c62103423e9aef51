/**
 * Every console page, registered in one place. To add a page, write `console/pages/<name>.ts`
 * exporting a `register...(router, services)` function that calls registerPage, and add one line
 * here (see console/README.md).
 */
import type express from "express";
import type { JobService } from "../../jobs/job-service.js";
import { LoginThrottle } from "../../server/accounts/login-throttle.js";
import type { AtelierServices } from "../../server/context.js";
import type { FirstAdminSetup } from "../server/first-admin-setup.js";
import { registerAccountPages } from "./account.js";
import { registerFirstAdminPage } from "./first-admin.js";
import { registerJobPages } from "./jobs.js";
import { registerKeyPages } from "./keys.js";
import { registerSignInPages } from "./sign-in.js";
import { registerUserPages } from "./users.js";
import { registerApiReferencePage } from "./api-reference.js";
import { registerModelPages } from "./models.js";
import { registerPlaygroundPages } from "./playground.js";
import { registerUsagePages } from "./usage.js";

export function registerConsolePages(router: express.Router, services: AtelierServices, jobs: JobService | undefined, setup: FirstAdminSetup): void {
  // One throttle for every password check, so a password change spends the sign-in budget.
  const loginThrottle = LoginThrottle.open(services.accounts);
  registerSignInPages(router, services, loginThrottle, setup);
  registerFirstAdminPage(router, services, setup);
  registerKeyPages(router, services, jobs);
  registerUserPages(router, services);
  registerAccountPages(router, services, loginThrottle);
  registerUsagePages(router, services);
  if (jobs) registerJobPages(router, services, jobs);
  registerPlaygroundPages(router, services, jobs);
  registerModelPages(router, services);
  registerApiReferencePage(router, services);
}
