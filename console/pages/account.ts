/**
 * The signed-in user's own account: display name, password (changing it ends every session,
 * including this one, then signs this browser in afresh), invites when sign-up mode is `invite`,
 * and the public pages for accepting an invite and, in `open` mode, signing up.
 */
import type express from "express";
import type { LoginThrottle } from "../../server/accounts/login-throttle.js";
import { PASSWORD_MIN_LENGTH } from "../../server/accounts/password-hash.js";
import type { AtelierServices } from "../../server/context.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";
import { fieldErrors, redirect, registerPage, type PageRequest, type PageResponse } from "../server/pages.js";
import { beginSession } from "../server/session-cookie.js";
import { errorSummary, field } from "./form-fields.js";
import { invitePanel } from "./invite-link.js";
import { tooManyAttempts } from "./sign-in.js";

const PASSWORD_HINT = `At least ${PASSWORD_MIN_LENGTH} characters. A passphrase of several words is easiest to remember.`;

function accountPage(page: PageRequest, errors: Record<string, string>, extra?: Html): PageResponse {
  const user = page.user!;
  const canInvite = page.services.config.console.signUp === "invite" || user.role === "admin";
  return {
    status: Object.keys(errors).length > 0 ? 400 : 200,
    main: html`${extra ?? html``}
      <dl class="details"><dt>Email</dt><dd>${user.email}</dd><dt>Role</dt><dd>${user.role}</dd></dl>
      <section class="panel" aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        ${errorSummary(errors.displayName ? { displayName: errors.displayName } : {})}
        <form method="post" action="/account/profile" class="form">
          ${csrfField(page.csrfToken)}
          ${field({ name: "displayName", label: "Display name", value: user.displayName, required: true, error: errors.displayName, autocomplete: "name" })}
          <button type="submit" class="button">Save</button>
        </form>
      </section>
      <section class="panel" aria-labelledby="password-heading">
        <h2 id="password-heading">Change password</h2>
        <p class="hint">Changing your password signs you out everywhere else.</p>
        ${errorSummary(Object.fromEntries(Object.entries(errors).filter(([name]) => name !== "displayName" && name !== "email")))}
        <form method="post" action="/account/password" class="form">
          ${csrfField(page.csrfToken)}
          <input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
          ${field({ name: "currentPassword", label: "Current password", type: "password", required: true, error: errors.currentPassword, autocomplete: "current-password" })}
          ${field({ name: "newPassword", label: "New password", type: "password", required: true, hint: PASSWORD_HINT, error: errors.password, autocomplete: "new-password" })}
          <button type="submit" class="button">Change password</button>
        </form>
      </section>
      ${canInvite && user.role !== "admin" ? html`<section class="panel" aria-labelledby="invite-heading-form">
        <h2 id="invite-heading-form">Invite someone</h2>
        ${errorSummary(errors.email ? { email: errors.email } : {})}
        <form method="post" action="/account/invite" class="form">
          ${csrfField(page.csrfToken)}
          ${field({ name: "email", label: "Their email", type: "email", required: true, error: errors.email })}
          <button type="submit" class="button">Create invite link</button>
        </form>
      </section>` : html``}`,
  };
}

/** A one-time code that a link carries in its `#fragment`; console.js copies it into the form's `code` field. */
export interface LinkCode {
  label: string;
  hint: string;
}

const INVITE_CODE: LinkCode = { label: "Invite code", hint: "Filled in from your invite link; otherwise paste the part after # here." };

/** The fields a new account's form asks for besides a display name and a password. */
export interface NewAccountFields {
  /** The form asks for the email (an invite brings its own). */
  email: boolean;
  /** The form carries a one-time code from a link. */
  code?: LinkCode;
}

/** The form that creates an account and signs its owner in: sign-up, an invite, the first administrator. */
export function passwordForm(action: string, csrfToken: string | null, values: Record<string, string | undefined>, errors: Record<string, string>, fields: NewAccountFields, submit: string): Html {
  return html`${errorSummary(errors)}
    <form method="post" action="${action}" class="form narrow">
      ${csrfField(csrfToken)}
      ${fields.code ? field({ name: "code", label: fields.code.label, value: values.code ?? "", required: true, hint: fields.code.hint, error: errors.code, autocomplete: "off", attributes: html`data-link-code spellcheck="false"` }) : html``}
      ${fields.email ? field({ name: "email", label: "Email", type: "email", value: values.email ?? "", required: true, error: errors.email, autocomplete: "username" }) : html``}
      ${field({ name: "displayName", label: "Display name", value: values.displayName ?? "", error: errors.displayName, autocomplete: "name" })}
      ${field({ name: "password", label: "Password", type: "password", required: true, hint: PASSWORD_HINT, error: errors.password, autocomplete: "new-password" })}
      <button type="submit" class="button">${submit}</button>
    </form>`;
}

export function registerAccountPages(router: express.Router, services: AtelierServices, throttle: LoginThrottle): void {
  registerPage(router, services, {
    path: "/account",
    title: "Your account",
    nav: { label: "Account", order: 70 },
    access: "signed-in",
    get: (page) => accountPage(page, {}),
  });

  registerPage(router, services, {
    path: "/account/profile",
    title: "Your account",
    access: "signed-in",
    post: async (page) => {
      try {
        await services.accounts.setDisplayName(page.user!.id, page.form.displayName ?? "");
      } catch (error) {
        return accountPage(page, fieldErrors(error));
      }
      return redirect("/account", "Profile saved.");
    },
  });

  registerPage(router, services, {
    path: "/account/password",
    title: "Your account",
    access: "signed-in",
    post: async (page) => {
      const user = page.user!;
      // A stolen session must not become a way round the sign-in throttle, so this check spends its budget.
      const attempt = await throttle.check(user.email, page.req.ip ?? "unknown", () => services.accounts.checkPassword(user.id, page.form.currentPassword ?? ""));
      if (attempt.throttled) {
        page.res.setHeader("Retry-After", String(attempt.retryAfterSeconds));
        return { ...accountPage(page, { currentPassword: tooManyAttempts(attempt.retryAfterSeconds) }), status: 429 };
      }
      if (!attempt.result) return accountPage(page, { currentPassword: "The current password is not right." });
      try {
        await services.accounts.setPassword(user.id, page.form.newPassword ?? "");
      } catch (error) {
        return accountPage(page, fieldErrors(error));
      }
      // setPassword ended every session, this one too; this browser continues on a fresh one.
      await beginSession(services, page.req, page.res, user.id);
      services.logger.info({ part: "console", userId: user.id }, "console password changed; sessions ended");
      return redirect("/account", "Password changed. Every other session has been signed out.");
    },
  });

  registerPage(router, services, {
    path: "/account/invite",
    title: "Your account",
    access: "signed-in",
    post: async (page) => {
      if (services.config.console.signUp !== "invite" && page.user!.role !== "admin") return accountPage(page, { email: "Only administrators can invite people on this service." });
      try {
        const email = page.form.email ?? "";
        const { code, expiresAt } = await services.accounts.createInvite(email, "member", page.user!.id);
        return accountPage(page, {}, invitePanel(page, email.trim().toLowerCase(), code, expiresAt));
      } catch (error) {
        return accountPage(page, fieldErrors(error));
      }
    },
  });

  registerPage(router, services, {
    path: "/invite",
    title: "Accept your invite",
    access: "public",
    get: (page) => (page.user ? redirect("/keys", "You are already signed in.") : passwordForm("/invite", page.csrfToken, {}, {}, { email: false, code: INVITE_CODE }, "Create account")),
    post: async (page) => {
      const values = page.form;
      try {
        const user = await services.accounts.acceptInvite(values.code?.trim() ?? "", values.displayName ?? "", values.password ?? "");
        if (!user) return { status: 400, main: passwordForm("/invite", page.csrfToken, values, { code: "This invite code is not valid: it may have been used already or have expired. Ask for a new one." }, { email: false, code: INVITE_CODE }, "Create account") };
        await beginSession(services, page.req, page.res, user.id);
        return redirect("/keys", "Welcome to Atelier. Create your first key below.");
      } catch (error) {
        return { status: 400, main: passwordForm("/invite", page.csrfToken, values, fieldErrors(error), { email: false, code: INVITE_CODE }, "Create account") };
      }
    },
  });

  if (services.config.console.signUp === "open") {
    registerPage(router, services, {
      path: "/sign-up",
      title: "Create an account",
      access: "public",
      get: (page) => (page.user ? redirect("/keys") : passwordForm("/sign-up", page.csrfToken, {}, {}, { email: true }, "Create account")),
      post: async (page) => {
        const values = page.form;
        try {
          const user = await services.accounts.createUser({ email: values.email ?? "", displayName: values.displayName, password: values.password ?? "", role: "member" });
          await beginSession(services, page.req, page.res, user.id);
          return redirect("/keys", "Welcome to Atelier. Create your first key below.");
        } catch (error) {
          return { status: 400, main: passwordForm("/sign-up", page.csrfToken, values, fieldErrors(error), { email: true }, "Create account") };
        }
      },
    });
  }
}
