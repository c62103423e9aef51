/**
 * Users, for admins: every account with its role, state, hourly allowance (its use this hour) and
 * active keys against the cap; create a user with a
 * password, or invite one with a one-time link; change a user's role, allowance, password or
 * disable them (which ends their sessions and revokes their keys). An admin cannot demote or disable themselves, so the
 * service always keeps the admin who is looking at it.
 */
import type express from "express";
import { KEY_ALLOWANCE_MAX, USER_ROLES, type User, type UserRole } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";
import { putFlash, takeFlash } from "../server/flash.js";
import { fieldErrors, redirect, registerPage, type PageRequest, type PageResponse } from "../server/pages.js";
import { activeKeysOfCap, allowanceUse, userAllowance, type UserAllowance } from "./allowance.js";
import { errorSummary, field } from "./form-fields.js";
import { count, time } from "./format.js";
import { inviteGonePanel, invitePanel } from "./invite-link.js";

function roleSelect(name: string, selected: UserRole, id = `field-${name}`): Html {
  return html`<div class="field"><label for="${id}">Role</label>
    <select id="${id}" name="${name}">${USER_ROLES.map((role) => html`<option value="${role}"${role === selected ? html` selected` : html``}>${role}</option>`)}</select></div>`;
}

async function usersPage(page: PageRequest, errors: Record<string, string>, values: Record<string, string | undefined> = {}, extra?: Html): Promise<PageResponse> {
  const users = await page.services.accounts.listUsers();
  const keys = await page.services.keys.list();
  const allowances = await Promise.all(users.map((user) => userAllowance(page.services, user, keys)));
  return {
    status: Object.keys(errors).length > 0 ? 400 : 200,
    main: html`${extra ?? html``}
      <p class="lead">Sign-up mode: <strong>${page.services.config.console.signUp}</strong> (ATELIER_SIGNUP).</p>
      <div class="table-wrap"><table class="data-table">
        <caption class="visually-hidden">Users</caption>
        <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Allowance this hour</th><th scope="col">Active keys</th><th scope="col">Created</th></tr></thead>
        <tbody>${users.map(
          (user, i) => html`<tr>
            <th scope="row" data-label="Email"><a href="/users/${user.id}">${user.email}</a></th>
            <td data-label="Name">${user.displayName}</td>
            <td data-label="Role">${user.role}</td>
            <td data-label="Status"><span class="status status-${user.disabledAt ? "revoked" : "active"}">${user.disabledAt ? "disabled" : "active"}</span></td>
            <td data-label="Allowance this hour">${allowanceCell(allowances[i]!)}</td>
            <td data-label="Active keys">${activeKeysOfCap(allowances[i]!)}</td>
            <td data-label="Created">${time(user.createdAt)}</td>
          </tr>`,
        )}</tbody>
      </table></div>
      <div class="panels">
        <section class="panel" aria-labelledby="invite-form-heading">
          <h2 id="invite-form-heading">Invite a user</h2>
          <p class="hint">They choose their own password through a one-time link.</p>
          ${errorSummary(errors.inviteEmail ? { inviteEmail: errors.inviteEmail } : {})}
          <form method="post" action="/users/invite" class="form">
            ${csrfField(page.csrfToken)}
            ${field({ name: "email", id: "invite-email", label: "Email", type: "email", required: true, value: values.inviteEmail, error: errors.inviteEmail })}
            ${roleSelect("role", "member", "invite-role")}
            <button type="submit" class="button">Create invite link</button>
          </form>
        </section>
        <section class="panel" aria-labelledby="create-user-heading">
          <h2 id="create-user-heading">Create a user</h2>
          ${errorSummary(Object.fromEntries(Object.entries(errors).filter(([name]) => name !== "inviteEmail")))}
          <form method="post" action="/users" class="form">
            ${csrfField(page.csrfToken)}
            ${field({ name: "email", id: "create-email", label: "Email", type: "email", required: true, value: values.email, error: errors.email })}
            ${field({ name: "displayName", id: "create-display-name", label: "Display name", value: values.displayName, error: errors.displayName })}
            ${field({ name: "password", id: "create-password", label: "Initial password", type: "password", required: true, error: errors.password, autocomplete: "new-password" })}
            ${roleSelect("role", values.role === "admin" ? "admin" : "member", "create-role")}
            <button type="submit" class="button">Create user</button>
          </form>
        </section>
      </div>`,
  };
}

function allowanceCell(allowance: UserAllowance): Html {
  return html`${allowanceUse(allowance)}${allowance.isDefault ? html` <span class="muted">(default)</span>` : html``}`;
}

function parseAllowance(text: string | undefined): number | null | "invalid" {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") return null;
  if (!/^\d+$/.test(trimmed) || Number(trimmed) < 1 || Number(trimmed) > KEY_ALLOWANCE_MAX) return "invalid";
  return Number(trimmed);
}

async function userDetail(page: PageRequest, user: User, errors: Record<string, string>): Promise<PageResponse> {
  const self = user.id === page.user!.id;
  const allowance = await userAllowance(page.services, user, await page.services.keys.list({ ownerId: user.id }));
  return {
    status: Object.keys(errors).length > 0 ? 400 : 200,
    title: user.displayName,
    main: html`<dl class="details">
        <dt>Email</dt><dd>${user.email}</dd><dt>Role</dt><dd>${user.role}</dd>
        <dt>Status</dt><dd>${user.disabledAt ? html`disabled since ${time(user.disabledAt)}` : "active"}</dd>
        <dt>Created</dt><dd>${time(user.createdAt)}</dd>
        <dt>Allowance this hour</dt><dd>${allowanceCell(allowance)}</dd>
        <dt>Active keys</dt><dd>${activeKeysOfCap(allowance)}</dd>
      </dl>
      ${errorSummary(errors)}
      <section class="panel" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Role and allowance</h2>
        <form method="post" action="/users/${user.id}" class="form">
          ${csrfField(page.csrfToken)}
          <input type="hidden" name="action" value="settings">
          ${self ? html`<p class="hint">You cannot change your own role.</p>` : roleSelect("role", user.role)}
          ${field({ name: "keyAllowance", label: "Key allowance (requests per hour)", type: "number", value: user.keyAllowance === null ? "" : String(user.keyAllowance), hint: `Requests per hour that all this user’s keys may make together, and the largest limit one key may have. Empty: the service default (${count(page.services.config.quota.defaultLimit)}) for a member; none for an admin.`, error: errors.keyAllowance, attributes: html`min="1" max="${KEY_ALLOWANCE_MAX}" step="1"` })}
          <button type="submit" class="button">Save</button>
        </form>
      </section>
      <section class="panel" aria-labelledby="reset-heading">
        <h2 id="reset-heading">Reset password</h2>
        <form method="post" action="/users/${user.id}" class="form">
          ${csrfField(page.csrfToken)}
          <input type="hidden" name="action" value="password">
          ${field({ name: "password", label: "New password", type: "password", required: true, hint: "Ends all of this user's sessions.", error: errors.password, autocomplete: "new-password" })}
          <button type="submit" class="button">Set password</button>
        </form>
      </section>
      ${self ? html`` : html`<form method="post" action="/users/${user.id}" class="form">
          ${csrfField(page.csrfToken)}
          <input type="hidden" name="action" value="${user.disabledAt ? "enable" : "disable"}">
          <button type="submit" class="button ${user.disabledAt ? "" : "button-danger"}">${user.disabledAt ? "Enable account" : "Disable account"}</button>
        </form>`}
      <p><a href="/users">Back to users</a></p>`,
  };
}

export function registerUserPages(router: express.Router, services: AtelierServices): void {
  registerPage(router, services, {
    path: "/users",
    title: "Users",
    nav: { label: "Users", order: 60 },
    access: "admin",
    get: (page) => usersPage(page, {}),
    post: async (page) => {
      const { form } = page;
      try {
        const user = await services.accounts.createUser({
          email: form.email ?? "",
          displayName: form.displayName,
          password: form.password ?? "",
          role: form.role === "admin" ? "admin" : "member",
        });
        services.logger.info({ part: "console", by: page.user!.id, userId: user.id }, "user created in the console");
        return redirect("/users", `User ${user.email} created.`);
      } catch (error) {
        return usersPage(page, fieldErrors(error), form);
      }
    },
  });

  registerPage(router, services, {
    path: "/users/invite",
    title: "Users",
    access: "admin",
    post: async (page) => {
      const email = page.form.email ?? "";
      try {
        const { code, expiresAt } = await services.accounts.createInvite(email, page.form.role === "admin" ? "admin" : "member", page.user!.id);
        // Shown by the GET the redirect leads to, once: a reload makes no second invite (flash.ts).
        await putFlash(page, { kind: "invite", email: email.trim().toLowerCase(), code, expiresAtMs: expiresAt.getTime() });
        return redirect("/users/invite");
      } catch (error) {
        const errors = fieldErrors(error);
        return usersPage(page, { inviteEmail: Object.values(errors).join(" ") }, { inviteEmail: email });
      }
    },
    get: async (page) => {
      const invite = await takeFlash(page, "invite");
      return usersPage(page, {}, {}, invite ? invitePanel(page, invite.email, invite.code, new Date(invite.expiresAtMs)) : inviteGonePanel());
    },
  });

  registerPage(router, services, {
    path: "/users/:id",
    title: "User",
    access: "admin",
    get: async (page) => {
      const user = await services.accounts.getUser(page.params.id!);
      return user ? userDetail(page, user, {}) : { status: 404, title: "User not found", main: html`<p>There is no such user.</p>` };
    },
    post: async (page) => {
      const user = await services.accounts.getUser(page.params.id!);
      if (!user) return { status: 404, title: "User not found", main: html`<p>There is no such user.</p>` };
      const self = user.id === page.user!.id;
      try {
        switch (page.form.action) {
          case "settings": {
            const allowance = parseAllowance(page.form.keyAllowance);
            if (allowance === "invalid") return userDetail(page, user, { keyAllowance: `Key allowance must be a whole number from 1 to ${count(KEY_ALLOWANCE_MAX)}, or empty.` });
            await services.accounts.setKeyAllowance(user.id, allowance);
            if (!self && (page.form.role === "admin" || page.form.role === "member")) await services.accounts.setRole(user.id, page.form.role);
            return redirect(`/users/${user.id}`, "Saved.");
          }
          case "password":
            await services.accounts.setPassword(user.id, page.form.password ?? "");
            return redirect(`/users/${user.id}`, "Password set; the user's sessions have ended.");
          case "disable":
          case "enable":
            if (self) return userDetail(page, user, { action: "You cannot disable your own account." });
            await services.accounts.setDisabled(user.id, page.form.action === "disable");
            if (page.form.action === "enable") return redirect(`/users/${user.id}`, "Account enabled.");
            // A disabled account's keys stop working too: someone who left keeps no access.
            for (const key of await services.keys.list({ ownerId: user.id })) await services.keys.revoke(key.id);
            return redirect(`/users/${user.id}`, "Account disabled; its sessions have ended and its keys are revoked.");
          default:
            return userDetail(page, user, { action: "Unknown action." });
        }
      } catch (error) {
        return userDetail(page, user, fieldErrors(error));
      }
    },
  });
}
