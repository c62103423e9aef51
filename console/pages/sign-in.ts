/**
 * Sign in and sign out. Failed attempts are throttled per account and per address; the answer to
 * a wrong email, a wrong password and a disabled account is the same sentence, so the form does not
 * tell which accounts exist.
 */
import type express from "express";
import type { LoginThrottle } from "../../server/accounts/login-throttle.js";
import type { AtelierServices } from "../../server/context.js";
import type { FirstAdminSetup } from "../server/first-admin-setup.js";
import { html } from "../server/html.js";
import { redirect, registerPage } from "../server/pages.js";
import { beginSession, endSession } from "../server/session-cookie.js";
import { errorSummary, field } from "./form-fields.js";

const WRONG_CREDENTIALS = "The email or password is not right, or the account is disabled.";

/** Only local paths are followed after sign-in (no open redirect). */
function safeNext(next: string | undefined): string {
  return next && /^\/(?!\/)[^\\]*$/.test(next) && !next.startsWith("/sign-") ? next : "/keys";
}

/** Who to ask for an account: on a fresh install nobody yet, so how the first administrator is made. */
function noAccountYet(signUpOpen: boolean, freshInstall: boolean) {
  if (freshInstall) {
    return html`<p class="muted">No account exists yet. To create the first administrator, open the setup link printed in the terminal where <code>npm start</code> runs, or run <code>npm run users -- create --email you@example.com --admin --password-stdin</code>.</p>`;
  }
  return html`<p class="muted">No account yet? ${signUpOpen ? html`<a href="/sign-up">Create one</a>.` : html`Ask an administrator for an invite.`}</p>`;
}

function signInForm(next: string, email: string, error: string | null, signUpOpen: boolean, freshInstall = false) {
  return html`
    ${errorSummary(error ? { form: error } : {})}
    <form method="post" action="/sign-in" class="form narrow">
      <input type="hidden" name="next" value="${next}">
      ${field({ name: "email", label: "Email", type: "email", value: email, required: true, autocomplete: "username" })}
      ${field({ name: "password", label: "Password", type: "password", required: true, autocomplete: "current-password" })}
      <button type="submit" class="button">Sign in</button>
    </form>
    ${noAccountYet(signUpOpen, freshInstall)}`;
}

/** The throttle's refusal, for every form whose password check it counts. */
export function tooManyAttempts(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}

export function registerSignInPages(router: express.Router, services: AtelierServices, throttle: LoginThrottle, setup: FirstAdminSetup): void {
  const signUpOpen = services.config.console.signUp === "open";
  registerPage(router, services, {
    path: "/sign-in",
    title: "Sign in",
    access: "public",
    get: async ({ user, query }) => (user ? redirect(safeNext(query.next)) : signInForm(safeNext(query.next), "", null, signUpOpen, await setup.isOpen())),
    post: async ({ req, res, form }) => {
      const email = (form.email ?? "").slice(0, 320);
      const password = (form.password ?? "").slice(0, 1024);
      const next = safeNext(form.next);
      const address = req.ip ?? "unknown";
      const attempt = await throttle.check(email, address, () => services.accounts.verifyCredentials(email, password));
      if (attempt.throttled) {
        res.setHeader("Retry-After", String(attempt.retryAfterSeconds));
        return { status: 429, main: signInForm(next, email, tooManyAttempts(attempt.retryAfterSeconds), signUpOpen) };
      }
      const user = attempt.result;
      if (!user) {
        services.logger.info({ part: "console", address }, "console sign-in failed");
        return { status: 401, main: signInForm(next, email, WRONG_CREDENTIALS, signUpOpen) };
      }
      await beginSession(services, req, res, user.id);
      // Expired sessions are refused when presented; sign-ins sweep them out of the table.
      await services.accounts.pruneSessions();
      services.logger.info({ part: "console", userId: user.id }, "console sign-in");
      return redirect(next);
    },
  });

  router.post("/sign-out", async (req, res) => {
    await endSession(services, req, res);
    res.redirect(303, "/sign-in");
  });
}
