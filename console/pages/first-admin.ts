/**
 * The setup page of a fresh install (console/server/first-admin-setup.ts): whoever holds the link
 * `npm start` printed creates the first administrator here, with the form, password rules and
 * sign-in of every other new account, and lands on the API keys page. Once any account exists the
 * page says setup is done and points at sign-in.
 */
import type express from "express";
import type { AtelierServices } from "../../server/context.js";
import { SETUP_PATH, type FirstAdminOutcome, type FirstAdminSetup } from "../server/first-admin-setup.js";
import { html } from "../server/html.js";
import { fieldErrors, redirect, registerPage, type PageRequest, type PageResponse } from "../server/pages.js";
import { beginSession } from "../server/session-cookie.js";
import { passwordForm, type LinkCode } from "./account.js";

const SETUP_CODE: LinkCode = { label: "Setup code", hint: "Filled in from the setup link that npm start printed; otherwise paste the part after # here." };
const WRONG_CODE = "This setup code is not right. Open the setup link that npm start printed in this service's terminal.";

function setupForm(page: PageRequest, values: Record<string, string | undefined>, errors: Record<string, string>): PageResponse {
  return {
    status: Object.keys(errors).length > 0 ? 400 : 200,
    main: html`<p class="lead">No account exists yet. Create the administrator of this service; they can then create or invite everyone else under Users.</p>
      ${passwordForm(SETUP_PATH, page.csrfToken, values, errors, { email: true, code: SETUP_CODE }, "Create administrator")}`,
  };
}

/** 410: the link has done its one job, whoever made the first account and however. */
function setupDone(): PageResponse {
  return {
    status: 410,
    title: "Setup is done",
    main: html`<p>This service has its administrator already, so the setup link no longer works.</p>
      <p><a href="/sign-in">Sign in</a>, or ask an administrator for an account.</p>`,
  };
}

export function registerFirstAdminPage(router: express.Router, services: AtelierServices, setup: FirstAdminSetup): void {
  registerPage(router, services, {
    path: SETUP_PATH,
    title: "Create the first administrator",
    access: "public",
    get: async (page) => ((await setup.isOpen()) ? setupForm(page, {}, {}) : setupDone()),
    post: async (page) => {
      const values = page.form;
      let outcome: FirstAdminOutcome;
      try {
        outcome = await setup.createAdministrator(values.code?.trim() ?? "", { email: values.email ?? "", displayName: values.displayName, password: values.password ?? "" });
      } catch (error) {
        return setupForm(page, values, fieldErrors(error));
      }
      if ("refused" in outcome) return outcome.refused === "done" ? setupDone() : setupForm(page, values, { code: WRONG_CODE });
      await beginSession(services, page.req, page.res, outcome.created.id);
      services.logger.info({ part: "console", userId: outcome.created.id }, "console first administrator created");
      return redirect("/keys", "Welcome to Atelier: you are its administrator. Create your first key below, and invite others under Users.");
    },
  });
}
