/**
 * What every job store (jobs/job-store.ts) promises, as one suite each store runs: SQLite and Redis
 * (test/jobs/job-stores.test.ts). Listing: one key's jobs and several keys' jobs in one newest-first
 * sequence (the console's view of a user's keys), with status filter and cursor. Images: kept as
 * bytes beside the record, never inside it (a large data URL read or written as part of a record
 * holds the router's event loop), read back whole (Redis moves them in 1 MB pieces) or a chunk at a
 * time, and each set deleted when nothing needs it any more: the request's when the job finishes, a
 * webhook's copy once delivered, the result's when purged. Due webhook deliveries: keys take turns
 * (every key's oldest before any key's second), deliveries in flight are never handed out again and
 * count against their key, and a key never has more than the per-key limit in flight, so one key's
 * slow receivers never hold another's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { keepRequestImages, keepResultImages, type StoredImage } from "../../jobs/job-images.js";
import type { DueDeliveries, JobStore, WebhookDelivery } from "../../jobs/job-store.js";

/** A fresh, empty store of one kind. */
export interface OpenedJobStore {
  store: JobStore;
  /** The characters the store's record of a job takes (its images must not be among them). */
  recordChars(id: string): Promise<number>;
  dispose(): Promise<void>;
}

/** Opens a fresh store; `deliveryLeaseMs` is how long a handed-out webhook delivery stays taken (Redis). */
export type OpenJobStore = (options: { deliveryLeaseMs: number }) => Promise<OpenedJobStore>;

const LIMITS = { maxActivePerKey: 100, maxQueued: 100 };

/** 2.5 MB of bytes that are not all alike (several of Redis's 1 MB pieces, the last one short). */
function bytes(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}

const only = (images: ReadonlyMap<string, StoredImage>, part: StoredImage["blob"]["part"]) => [...images.values()].filter((image) => image.blob.part === part);

/** Deliveries created oldest first: `a1` is key_a's first, due at 1000 + its place. */
const ORDER = ["a1", "a2", "a3", "a4", "a5", "a6", "b1", "c1", "c2"];

/** Creates the deliveries of ORDER, each due at its creation. */
export async function createAll(store: JobStore): Promise<void> {
  for (const [n, name] of ORDER.entries()) {
    await store.createDelivery({ jobId: `job_${name}`, apiKeyId: `key_${name[0]}`, url: "https://example.com/hook", messageId: `msg_${name}`, payload: "{}", images: new Map(), createdAtMs: 1_000 + n, nextAttemptAtMs: 1_000 + n });
  }
}

export const names = (deliveries: WebhookDelivery[]) => deliveries.map((delivery) => delivery.jobId.slice("job_".length));
const inFlight = (deliveries: WebhookDelivery[]): DueDeliveries["inFlight"] => deliveries.map(({ id, apiKeyId }) => ({ id, apiKeyId }));

export function jobStoreContract(name: string, open: OpenJobStore): void {
  describe(`${name} listing`, () => {
    let store: JobStore;
    let dispose: () => Promise<void>;
    // Inserted oldest first, alternating keys, with a third key that is never asked for.
    const order = ["a1", "b1", "c1", "a2", "b2", "a3", "c2", "b3"];
    const keyOf = (id: string) => `key_${id[0]}`;

    beforeAll(async () => {
      ({ store, dispose } = await open({ deliveryLeaseMs: 1_000 }));
      for (const [n, id] of order.entries()) {
        await store.insert(
          { id, apiKeyId: keyOf(id), operation: "/v1/tools/upscale", input: {}, requestId: `req_${id}`, webhookUrl: null, createdAtMs: 1_000 + n },
          LIMITS,
        );
      }
      await store.finish("a2", { status: "succeeded", result: { ok: true } }, 2_000, 3_000);
      await store.finish("b3", { status: "succeeded", result: { ok: true } }, 2_000, 3_000);
    });
    afterAll(async () => {
      await dispose?.();
    });

    const ids = (page: { jobs: { id: string }[] }) => page.jobs.map((job) => job.id);

    it("lists the jobs of several keys newest first, leaving other keys' jobs out", async () => {
      const page = await store.listForKeys(["key_a", "key_b"], { limit: 10 });
      expect(ids(page)).toEqual(["b3", "a3", "b2", "a2", "b1", "a1"]);
      expect(page.nextCursor).toBeNull();
    });

    it("pages with the previous page's last id as cursor until nextCursor is null", async () => {
      const first = await store.listForKeys(["key_a", "key_b"], { limit: 4 });
      expect(ids(first)).toEqual(["b3", "a3", "b2", "a2"]);
      expect(first.nextCursor).toBe("a2");
      const second = await store.listForKeys(["key_a", "key_b"], { limit: 4, cursor: first.nextCursor! });
      expect(ids(second)).toEqual(["b1", "a1"]);
      expect(second.nextCursor).toBeNull();
      // Exactly full: no empty page promised.
      const exact = await store.listForKeys(["key_a", "key_b"], { limit: 3, cursor: "b2" });
      expect(ids(exact)).toEqual(["a2", "b1", "a1"]);
      expect(exact.nextCursor).toBeNull();
    });

    it("filters by status across the keys", async () => {
      expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, status: "succeeded" }))).toEqual(["b3", "a2"]);
      const queued = await store.listForKeys(["key_a", "key_b"], { limit: 2, status: "queued" });
      expect(ids(queued)).toEqual(["a3", "b2"]);
      expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 2, status: "queued", cursor: queued.nextCursor! }))).toEqual(["b1", "a1"]);
    });

    it("ends the listing at a cursor that belongs to none of the keys, and lists nothing for no keys", async () => {
      expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, cursor: "c2" }))).toEqual([]);
      expect(ids(await store.listForKeys(["key_a", "key_b"], { limit: 10, cursor: "no-such-job" }))).toEqual([]);
      expect(await store.listForKeys([], { limit: 10 })).toEqual({ jobs: [], nextCursor: null });
    });

    it("keeps list as the one-key case", async () => {
      const page = await store.list("key_a", { limit: 2 });
      expect(ids(page)).toEqual(["a3", "a2"]);
      expect(ids(await store.list("key_a", { limit: 2, cursor: page.nextCursor! }))).toEqual(["a1"]);
      expect(ids(await store.list("key_a", { limit: 10, cursor: "b2" }))).toEqual([]);
    });
  });

  describe(`${name} images`, () => {
    let opened: OpenedJobStore;
    beforeAll(async () => {
      opened = await open({ deliveryLeaseMs: 1_000 });
    });
    afterAll(async () => {
      await opened.dispose();
    });

    it("keeps them beside the record, reads them back whole, and deletes each set when it is no longer needed", async () => {
      const { store, recordChars } = opened;
      const request = Buffer.concat([Buffer.from("data:image/png;base64,"), Buffer.from(bytes(1_900_000, 1).toString("base64"))]);
      const imageUrl = request.toString("latin1");
      const submitted = keepRequestImages({ imageUrl, scale: 2 }, (text) => (text === imageUrl ? request : undefined));
      const inserted = await store.insert(
        { id: "job_images", apiKeyId: "key_a", operation: "/v1/tools/upscale", input: submitted.input, images: submitted.images, requestId: "req_1", webhookUrl: "https://example.com/hook", createdAtMs: 1_000 },
        { maxActivePerKey: 10, maxQueued: 10 },
      );
      expect("inserted" in inserted).toBe(true);
      expect(await recordChars("job_images")).toBeLessThan(2_000);
      const queued = (await store.get("job_images"))!;
      const [requestImage] = only(queued.images, "input");
      expect((await store.readImage("job_images", requestImage!.blob))!.equals(request)).toBe(true);

      const png = bytes(2_500_000, 2);
      const result = { id: "req_1", data: [{ url: "stand-in", mimeType: "image/png", width: 1, height: 1 }] };
      const images = keepResultImages(result, new Map([["stand-in", { bytes: png, mimeType: "image/png" }]]));
      expect(await store.finish("job_images", { status: "succeeded", result, images }, 2_000, 3_000)).toBe(true);
      expect(await recordChars("job_images")).toBeLessThan(2_000);
      const finished = (await store.get("job_images"))!;
      expect(finished.result).toEqual(result);
      // A finished job never runs again: its request's bytes are gone, its description stays.
      expect(await store.readImage("job_images", requestImage!.blob)).toBeNull();
      expect(only(finished.images, "input")).toEqual([requestImage]);
      const [resultImage] = only(finished.images, "result");
      expect((await store.readImage("job_images", resultImage!.blob))!.equals(png)).toBe(true);

      await store.createDelivery({ jobId: "job_images", apiKeyId: "key_a", url: "https://example.com/hook", messageId: "msg_job_images", payload: "{}", images: new Map([["stand-in", resultImage!]]), createdAtMs: 2_000, nextAttemptAtMs: 2_000 });
      const delivery = (await store.deliveryOf("job_images"))!;
      const [copy] = [...delivery.images.values()];
      expect(copy!.blob).not.toEqual(resultImage!.blob);
      expect((await store.readImage("job_images", copy!.blob))!.equals(png)).toBe(true);
      await store.recordAttempt(delivery.id, { at: new Date(2_500).toISOString(), statusCode: 200, error: null }, { status: "delivered", nextAttemptAtMs: 2_500 });
      expect(await store.readImage("job_images", copy!.blob)).toBeNull();
      expect((await store.readImage("job_images", resultImage!.blob))!.equals(png)).toBe(true);

      expect((await store.purge(3_000, 0, 0)).results).toBe(1);
      expect(await store.readImage("job_images", resultImage!.blob)).toBeNull();
      expect((await store.get("job_images"))!.result).toBeNull();
    });

    it("reads an image a chunk at a time, as often as asked, and fails or has no reader once it is deleted", async () => {
      const { store } = opened;
      await store.insert(
        { id: "job_chunks", apiKeyId: "key_a", operation: "/v1/tools/upscale", input: {}, requestId: "req_2", webhookUrl: null, createdAtMs: 1_000 },
        { maxActivePerKey: 10, maxQueued: 10 },
      );
      const png = bytes(200_000, 3);
      const result = { id: "req_2", data: [{ url: "stand-in", mimeType: "image/png", width: 1, height: 1 }] };
      const images = keepResultImages(result, new Map([["stand-in", { bytes: png, mimeType: "image/png" }]]));
      expect(await store.finish("job_chunks", { status: "succeeded", result, images }, 2_000, 3_000)).toBe(true);
      const [image] = only((await store.get("job_chunks"))!.images, "result");

      const reader = (await store.imageReader("job_chunks", image!.blob))!;
      expect(reader.length).toBe(png.length);
      for (let time = 0; time < 2; time++) {
        const chunks: Buffer[] = [];
        for await (const chunk of reader.chunks(48 * 1024)) chunks.push(chunk);
        expect(chunks.map((chunk) => chunk.length)).toEqual([49_152, 49_152, 49_152, 49_152, 3_392]);
        expect(Buffer.concat(chunks).equals(png)).toBe(true);
      }

      // A reader whose image is purged before it reads fails rather than giving other or fewer bytes.
      const stale = (await store.imageReader("job_chunks", image!.blob))!;
      expect((await store.purge(3_000, 0, 0)).results).toBe(1);
      await expect((async () => {
        for await (const _chunk of stale.chunks(48 * 1024));
      })()).rejects.toThrow();
      expect(await store.imageReader("job_chunks", image!.blob)).toBeNull();
    });
  });

  describe(`${name}: due webhook deliveries`, () => {
    let opened: OpenedJobStore | undefined;
    afterEach(async () => {
      await opened?.dispose();
      opened = undefined;
    });

    it("lets keys take turns, never hands out one in flight and keeps each key within its limit", async () => {
      opened = await open({ deliveryLeaseMs: 60_000 });
      const { store } = opened;
      await createAll(store);

      const first = await store.dueDeliveries(2_000, { limit: 4, perKeyLimit: 3, inFlight: [] });
      expect(names(first)).toEqual(["a1", "b1", "c1", "a2"]);

      // key_a holds 2 of its 3 places, key_c 1: c2 comes before a3, and nothing else of key_a.
      const second = await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(first) });
      expect(names(second)).toEqual(["c2", "a3"]);

      const running = [...first, ...second];
      expect(await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(running) })).toEqual([]);

      // a1 delivered frees one of key_a's places for a4.
      const a1 = running.find((delivery) => delivery.jobId === "job_a1")!;
      await store.recordAttempt(a1.id, { at: new Date(2_000).toISOString(), statusCode: 200, error: null }, { status: "delivered", nextAttemptAtMs: 2_000 });
      const third = await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: inFlight(running.filter((delivery) => delivery !== a1)) });
      expect(names(third)).toEqual(["a4"]);
    });

    it("hands out nothing before it is due, and a retried delivery when its next attempt comes", async () => {
      opened = await open({ deliveryLeaseMs: 60_000 });
      const { store } = opened;
      await createAll(store);
      expect(await store.dueDeliveries(999, { limit: 10, perKeyLimit: 3, inFlight: [] })).toEqual([]);

      const [b1] = (await store.dueDeliveries(2_000, { limit: 10, perKeyLimit: 3, inFlight: [] })).filter((delivery) => delivery.apiKeyId === "key_b");
      await store.recordAttempt(b1!.id, { at: new Date(2_000).toISOString(), statusCode: 500, error: "The receiver answered 500." }, { status: "pending", nextAttemptAtMs: 5_000 });
      const due = (at: number) => store.dueDeliveries(at, { limit: 10, perKeyLimit: 10, inFlight: [] });
      expect(names(await due(4_999)).filter((name) => name === "b1")).toEqual([]);
      expect(names(await due(200_000)).filter((name) => name === "b1")).toEqual(["b1"]);
    });
  });
}
