/**
 * An admin could show and rotate the webhook signing secret of a member's key in the console,
 * although the member's jobs are not theirs to read. One rule now: only the key's owner sees or
 * rotates its secret; an admin gets the 404 of a key that is not theirs and no button to press,
 * and the secret stays as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postForm, postFormAndFollow, signInHttp, startConsoleService, type ConsoleService, type HttpSession } from "../../console/support/console-service.js";

const PASSWORD = "correct horse battery staple";

let service: ConsoleService;
let admin: HttpSession;
let member: HttpSession;
let memberKeyId: string;
let adminKeyId: string;

const secretOf = (keyId: string) => service.jobs.service.signingSecret(keyId);
const shownSecret = (page: string) => /id="webhook-secret"[^>]*value="(whsec_[^"]+)"/.exec(page)?.[1];

beforeAll(async () => {
  service = await startConsoleService();
  const adminUser = await service.createUser("admin@example.com", PASSWORD, "admin");
  const memberUser = await service.createUser("member@example.com", PASSWORD);
  memberKeyId = (await service.services.keys.create({ name: "member's key", ownerId: memberUser.id })).record.id;
  adminKeyId = (await service.services.keys.create({ name: "admin's key", ownerId: adminUser.id })).record.id;
  admin = await signInHttp(service.url, "admin@example.com", PASSWORD);
  member = await signInHttp(service.url, "member@example.com", PASSWORD);
});
afterAll(async () => {
  await service?.close();
});

describe("a key's webhook signing secret is its owner's alone", () => {
  it("refuses an admin who asks to see a member's secret, as for a key that is not theirs", async () => {
    const secret = await secretOf(memberKeyId);
    const answer = await postForm(service.url, `/keys/${memberKeyId}/webhook-secret`, admin, { action: "show" });
    expect(answer.status).toBe(404);
    const page = await answer.text();
    expect(page).not.toContain(secret);
    expect(page).not.toContain("whsec_");
  });

  it("refuses an admin who asks to rotate a member's secret, and the secret stays as it was", async () => {
    const before = await secretOf(memberKeyId);
    const answer = await postForm(service.url, `/keys/${memberKeyId}/webhook-secret`, admin, { action: "rotate" });
    expect(answer.status).toBe(404);
    expect(await answer.text()).not.toContain("whsec_");
    expect(await secretOf(memberKeyId)).toBe(before);
  });

  it("shows an admin a member's key page, which they may manage, without the secret's buttons or the key's jobs", async () => {
    const page = await (await fetch(`${service.url}/keys/${memberKeyId}`, { headers: { cookie: admin.cookie } })).text();
    expect(page).toContain("member&#39;s key");
    expect(page).toContain("Rename");
    expect(page).not.toContain("Show signing secret");
    expect(page).not.toContain("Rotate signing secret");
    expect(page).not.toContain(`/keys/${memberKeyId}/webhook-secret`);
    expect(page).not.toContain(`/jobs?key=${memberKeyId}`);
  });

  it("still lets the owner, member or admin, show and rotate their own key's secret", async () => {
    for (const [session, keyId] of [[member, memberKeyId], [admin, adminKeyId]] as const) {
      const keyPage = await (await fetch(`${service.url}/keys/${keyId}`, { headers: { cookie: session.cookie } })).text();
      expect(keyPage).toContain("Show signing secret");
      const { page: shown } = await postFormAndFollow(service.url, `/keys/${keyId}/webhook-secret`, session, { action: "show" });
      expect(shown.status).toBe(200);
      expect(shownSecret(await shown.text())).toBe(await secretOf(keyId));
      const before = await secretOf(keyId);
      const { page: rotated } = await postFormAndFollow(service.url, `/keys/${keyId}/webhook-secret`, session, { action: "rotate" });
      expect(rotated.status).toBe(200);
      const after = await secretOf(keyId);
      expect(after).not.toBe(before);
      expect(shownSecret(await rotated.text())).toBe(after);
    }
  });
});
