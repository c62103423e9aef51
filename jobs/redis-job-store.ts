/**
 * The shared job store: every router on one Redis (ATELIER_REDIS_URL) sees the same job records,
 * progress, events, idempotency keys, webhook deliveries and signing secrets. Each change that
 * SQLite makes in a transaction is one Lua script here (atomic in Redis), e.g. an insert under the
 * per-key and global caps, or a claim. Keys live under `atelier:jobs:`; a single Redis (or a
 * primary with replicas) is assumed, not Redis Cluster.
 *
 * Queued jobs wait in per-key sorted sets; BullMQ (bullmq-job-scheduler.ts) only hands out turns,
 * and {@link RedisJobStore.claimTurn} picks the job a turn runs: the head of the key served longest
 * ago, across all routers.
 *
 * Images are not in the records: a job's request and result images are binary strings of their own
 * (redis-image-blobs.ts), written before the record refers to them, and the records hold stand-ins
 * (job-images.ts). A 20 MB field read or written as a string was copied whole on the event loop.
 */
import type { Redis } from "ioredis";
import { IDEMPOTENCY_WINDOW_MS } from "./idempotency.js";
import { copyForDelivery, insertWithImages, type BlobReader } from "./job-image-blobs.js";
import { imagesJson, NO_IMAGES, parseImages, storedOnly, type BlobRef, type ImagesToStore } from "./job-images.js";
import { QUEUED_PROGRESS, type JobProgress, type JobRecord, type JobStatus } from "./job-record.js";
import { DROP_IMAGES_LUA, RedisImageBlobs } from "./redis-image-blobs.js";
import { newJobValues, type DueDeliveries, type IdempotencyEntry, type InsertOutcome, type JobEvent, type JobListPage, type JobOutcome, type JobStore, type NewJob, type QueueLimits, type WebhookAttempt, type WebhookDelivery } from "./job-store.js";

const PREFIX = "atelier:jobs:";

/**
 * Lua shared by the delivery scripts. Each key's pending deliveries wait in a line of their own,
 * `deliveries-due:<apiKeyId>`, by next attempt (a lease ahead while one is being attempted), and
 * `delivery-keys` holds the keys that have any by their earliest, so keys take turns.
 */
const DELIVERY_LUA = `
local function deliveryDue(key, id, at)
  local line = P .. 'deliveries-due:' .. key
  if at then redis.call('ZADD', line, at, id) else redis.call('ZREM', line, id) end
  local first = redis.call('ZRANGE', line, 0, 0, 'WITHSCORES')
  if #first == 0 then redis.call('ZREM', P .. 'delivery-keys', key) else redis.call('ZADD', P .. 'delivery-keys', first[2], key) end
end
`;

/** Lua shared by the scripts: moving a job between status sets and keeping the waiting keys' order. */
const HELPERS = `
local P = ARGV[1]
${DROP_IMAGES_LUA}
local function move(id, key, from, to, seq)
  redis.call('ZREM', P .. 'key:' .. key .. ':' .. from, id)
  redis.call('ZADD', P .. 'key:' .. key .. ':' .. to, seq, id)
  if from == 'queued' or from == 'running' then redis.call('ZREM', P .. from, id) end
  if to == 'queued' or to == 'running' then redis.call('ZADD', P .. to, seq, id) end
end
-- waiting-keys: keys with queued jobs, ordered by the turn they were last served at; keys never
-- served come first, oldest head first.
local function keyWaiting(key)
  local head = redis.call('ZRANGE', P .. 'key:' .. key .. ':queued', 0, 0, 'WITHSCORES')
  if #head == 0 then
    redis.call('ZREM', P .. 'waiting-keys', key)
  else
    local turn = redis.call('HGET', P .. 'turns', key)
    redis.call('ZADD', P .. 'waiting-keys', turn or (tonumber(head[2]) - 1e15), key)
  end
end
`;

const SCRIPTS = {
  /** ARGV: prefix, id, apiKeyId, operation, input, requestId, createdAt, progress, webhookUrl ('' for none), maxActivePerKey, maxQueued, images ('' for none) */
  jobsInsert: `${HELPERS}
local id, key = ARGV[2], ARGV[3]
local active = redis.call('ZCARD', P .. 'key:' .. key .. ':queued') + redis.call('ZCARD', P .. 'key:' .. key .. ':running')
if active >= tonumber(ARGV[10]) then return 'key' end
if redis.call('ZCARD', P .. 'queued') >= tonumber(ARGV[11]) then return 'queue' end
local seq = redis.call('INCR', P .. 'seq')
redis.call('HSET', P .. 'job:' .. id, 'seq', seq, 'id', id, 'apiKeyId', key, 'operation', ARGV[4], 'input', ARGV[5],
  'requestId', ARGV[6], 'status', 'queued', 'attempts', 0, 'createdAt', ARGV[7], 'progress', ARGV[8])
if ARGV[9] ~= '' then redis.call('HSET', P .. 'job:' .. id, 'webhookUrl', ARGV[9]) end
if ARGV[12] ~= '' then redis.call('HSET', P .. 'job:' .. id, 'images', ARGV[12]) end
redis.call('ZADD', P .. 'key:' .. key .. ':all', seq, id)
redis.call('ZADD', P .. 'key:' .. key .. ':queued', seq, id)
redis.call('ZADD', P .. 'queued', seq, id)
keyWaiting(key)
return 'inserted'`,
  /**
   * ARGV: prefix, token, now, maxAttempts, progress, tokenTtlMs. A turn already bound to a job
   * (its router died) retries that job, or reports it `lost` after maxAttempts; a new turn claims
   * the head of the waiting key served longest ago.
   */
  jobsClaimTurn: `${HELPERS}
local tokenKey = P .. 'token:' .. ARGV[2]
local bound = redis.call('GET', tokenKey)
if bound then
  local job = P .. 'job:' .. bound
  if redis.call('HGET', job, 'status') ~= 'running' then return {'done', bound} end
  local attempts = tonumber(redis.call('HGET', job, 'attempts'))
  if attempts >= tonumber(ARGV[4]) then return {'lost', bound} end
  redis.call('HSET', job, 'attempts', attempts + 1, 'startedAt', ARGV[3], 'progress', ARGV[5])
  return {'run', bound}
end
local key = redis.call('ZRANGE', P .. 'waiting-keys', 0, 0)[1]
if not key then return {'none'} end
local id = redis.call('ZRANGE', P .. 'key:' .. key .. ':queued', 0, 0)[1]
local job = P .. 'job:' .. id
move(id, key, 'queued', 'running', redis.call('HGET', job, 'seq'))
redis.call('HINCRBY', job, 'attempts', 1)
redis.call('HSET', job, 'status', 'running', 'startedAt', ARGV[3], 'progress', ARGV[5])
redis.call('HSET', P .. 'turns', key, redis.call('INCR', P .. 'turn'))
keyWaiting(key)
redis.call('SET', tokenKey, id, 'PX', ARGV[6])
return {'run', id}`,
  /**
   * ARGV: prefix, id, status, now, result ('' unless succeeded), error ('' when succeeded), resultExpires,
   * progress, images ('' for none). A finished job's request images go: it never runs again.
   */
  jobsFinish: `${HELPERS}
local id = ARGV[2]
local job = P .. 'job:' .. id
local old = redis.call('HGET', job, 'status')
if old ~= 'queued' and old ~= 'running' then return 0 end
local key = redis.call('HGET', job, 'apiKeyId')
move(id, key, old, ARGV[3], redis.call('HGET', job, 'seq'))
redis.call('HSET', job, 'status', ARGV[3], 'finishedAt', ARGV[4], 'resultExpires', ARGV[7], 'progress', ARGV[8])
if ARGV[3] == 'succeeded' then
  redis.call('HSET', job, 'result', ARGV[5])
  redis.call('ZADD', P .. 'results', ARGV[7], id)
else
  redis.call('HSET', job, 'error', ARGV[6])
end
redis.call('ZADD', P .. 'finished', ARGV[4], id)
if ARGV[9] ~= '' then redis.call('HSET', job, 'images', ARGV[9]) end
dropImages(id, 'input')
if old == 'queued' then keyWaiting(key) end
return 1`,
  /** ARGV: prefix, id, progress */
  jobsSetProgress: `
local job = ARGV[1] .. 'job:' .. ARGV[2]
if redis.call('HGET', job, 'status') == 'running' then redis.call('HSET', job, 'progress', ARGV[3]) end
return 0`,
  /** ARGV: prefix, jobId, type, data. Returns the event's id (numbered across the store). */
  jobsAppendEvent: `
local id = redis.call('INCR', ARGV[1] .. 'event-seq')
redis.call('ZADD', ARGV[1] .. 'events:' .. ARGV[2], id, id .. '\\n' .. ARGV[3] .. '\\n' .. ARGV[4])
return id`,
  /** ARGV: prefix, jobId, apiKeyId. Queued jobs that run before this one when keys take turns. */
  jobsQueuePosition: `
local P = ARGV[1]
local ahead = redis.call('ZRANK', P .. 'key:' .. ARGV[3] .. ':queued', ARGV[2])
if not ahead then return 0 end
local others = 0
for _, key in ipairs(redis.call('ZRANGE', P .. 'waiting-keys', 0, -1)) do
  if key ~= ARGV[3] then others = others + math.min(redis.call('ZCARD', P .. 'key:' .. key .. ':queued'), ahead + 1) end
end
return ahead + others + 1`,
  /** ARGV: prefix, apiKeyId, key, fingerprint, jobId, createdAt, ttlMs */
  jobsBindIdempotencyKey: `
local entry = ARGV[1] .. 'idempotency:' .. ARGV[2] .. ':' .. ARGV[3]
if redis.call('EXISTS', entry) == 1 then return 0 end
redis.call('HSET', entry, 'fingerprint', ARGV[4], 'jobId', ARGV[5], 'createdAt', ARGV[6])
redis.call('PEXPIRE', entry, ARGV[7])
return 1`,
  /** ARGV: prefix, apiKeyId, key, jobId */
  jobsReleaseIdempotencyKey: `
local entry = ARGV[1] .. 'idempotency:' .. ARGV[2] .. ':' .. ARGV[3]
if redis.call('HGET', entry, 'jobId') == ARGV[4] then redis.call('DEL', entry) end
return 0`,
  /** ARGV: prefix, jobId, apiKeyId, url, messageId, payload, createdAt, nextAttempt, images ('' for none) */
  jobsCreateDelivery: `
local P = ARGV[1]
${DELIVERY_LUA}
if redis.call('EXISTS', P .. 'delivery-of:' .. ARGV[2]) == 1 then return 0 end
local id = redis.call('INCR', P .. 'delivery-seq')
redis.call('SET', P .. 'delivery-of:' .. ARGV[2], id)
redis.call('HSET', P .. 'delivery:' .. id, 'id', id, 'jobId', ARGV[2], 'apiKeyId', ARGV[3], 'url', ARGV[4], 'messageId', ARGV[5],
  'payload', ARGV[6], 'status', 'pending', 'createdAt', ARGV[7], 'nextAttempt', ARGV[8])
if ARGV[9] ~= '' then redis.call('HSET', P .. 'delivery:' .. id, 'images', ARGV[9]) end
deliveryDue(ARGV[3], id, ARGV[8])
return id`,
  /**
   * ARGV: prefix, now, limit, leaseMs, perKeyLimit, then the apiKeyId of each delivery the caller has
   * in flight. Takes due deliveries for this caller by moving them a lease ahead, keys taking turns
   * (job-store.ts DueDeliveries).
   */
  jobsTakeDueDeliveries: `
local P = ARGV[1]
${DELIVERY_LUA}
local now, limit, lease, perKey = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- A single due line (deliveries-due), as a router of the older layout still writes it, joins the keys' lines.
local single = redis.call('ZRANGE', P .. 'deliveries-due', 0, -1, 'WITHSCORES')
for i = 1, #single, 2 do
  local key = redis.call('HGET', P .. 'delivery:' .. single[i], 'apiKeyId')
  if key then deliveryDue(key, single[i], single[i + 1]) end
end
redis.call('DEL', P .. 'deliveries-due')
local busy, busyKeys = {}, 0
for i = 6, #ARGV do
  if not busy[ARGV[i]] then busyKeys = busyKeys + 1 end
  busy[ARGV[i]] = (busy[ARGV[i]] or 0) + 1
end
-- Enough keys to fill the limit though every busy one is full.
local turns = {}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', P .. 'delivery-keys', '-inf', now, 'LIMIT', 0, limit + busyKeys)) do
  local held = busy[key] or 0
  if held < perKey then
    for i, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'deliveries-due:' .. key, '-inf', now, 'LIMIT', 0, perKey - held)) do
      turns[held + i] = turns[held + i] or {}
      table.insert(turns[held + i], {key, id})
    end
  end
end
local taken = {}
for turn = 1, perKey do
  for _, pick in ipairs(turns[turn] or {}) do
    if #taken < limit then
      deliveryDue(pick[1], pick[2], now + lease)
      table.insert(taken, pick[2])
    end
  end
end
return taken`,
  /** ARGV: prefix, id, attempt, status, nextAttempt. A delivery no longer pending needs its images no more. */
  jobsRecordAttempt: `
local P = ARGV[1]
${DROP_IMAGES_LUA}
${DELIVERY_LUA}
redis.call('RPUSH', P .. 'delivery:' .. ARGV[2] .. ':attempts', ARGV[3])
redis.call('HSET', P .. 'delivery:' .. ARGV[2], 'status', ARGV[4], 'nextAttempt', ARGV[5])
local key = redis.call('HGET', P .. 'delivery:' .. ARGV[2], 'apiKeyId')
if ARGV[4] == 'pending' then
  if key then deliveryDue(key, ARGV[2], ARGV[5]) end
else
  if key then deliveryDue(key, ARGV[2], nil) end
  local jobId = redis.call('HGET', P .. 'delivery:' .. ARGV[2], 'jobId')
  if jobId then dropImages(jobId, 'webhook') end
end
return 0`,
  /** ARGV: prefix, now, recordsBefore, batch. Idempotency keys expire by themselves (PEXPIRE). */
  jobsPurge: `
local P = ARGV[1]
${DROP_IMAGES_LUA}
local results = redis.call('ZRANGEBYSCORE', P .. 'results', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(results) do
  redis.call('HDEL', P .. 'job:' .. id, 'result')
  redis.call('ZREM', P .. 'results', id)
  dropImages(id, 'result')
end
local old = redis.call('ZRANGEBYSCORE', P .. 'finished', '-inf', '(' .. ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(old) do
  local job = P .. 'job:' .. id
  local key, status = unpack(redis.call('HMGET', job, 'apiKeyId', 'status'))
  if key then
    redis.call('ZREM', P .. 'key:' .. key .. ':all', id)
    redis.call('ZREM', P .. 'key:' .. key .. ':' .. status, id)
  end
  redis.call('DEL', job, P .. 'events:' .. id)
  dropImages(id, 'input')
  dropImages(id, 'result')
  local delivery = redis.call('GET', P .. 'delivery-of:' .. id)
  if delivery and redis.call('HGET', P .. 'delivery:' .. delivery, 'status') ~= 'pending' then
    redis.call('DEL', P .. 'delivery:' .. delivery, P .. 'delivery:' .. delivery .. ':attempts', P .. 'delivery-of:' .. id)
    dropImages(id, 'webhook')
  end
  redis.call('ZREM', P .. 'finished', id)
  redis.call('ZREM', P .. 'results', id)
end
return {#results, #old}`,
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** What {@link RedisJobStore.claimTurn} decided for one turn. */
export type TurnClaim =
  /** Run this job (a new head, or a retry of the job this turn's dead router was running). */
  | { run: JobRecord }
  /** The turn's job was interrupted too often: fail it. */
  | { lost: JobRecord }
  /** Nothing to run: the queue is empty or the turn's job has finished meanwhile. */
  | { idle: true };

/** How long a turn remembers the job it claimed: longer than any job runs. */
const TURN_MEMORY_MS = 7 * 24 * 3_600_000;
/** Records removed per purge call; the purge runs every minute. */
const PURGE_BATCH = 1_000;

function fromHash(hash: Record<string, string>): JobRecord | null {
  if (!hash.id) return null;
  const number = (value: string | undefined) => (value === undefined ? null : Number(value));
  return {
    id: hash.id,
    apiKeyId: hash.apiKeyId!,
    operation: hash.operation!,
    input: JSON.parse(hash.input!) as unknown,
    requestId: hash.requestId!,
    status: hash.status as JobStatus,
    attempts: Number(hash.attempts),
    createdAtMs: Number(hash.createdAt),
    startedAtMs: number(hash.startedAt),
    finishedAtMs: number(hash.finishedAt),
    progress: JSON.parse(hash.progress!) as JobProgress,
    result: hash.result === undefined ? null : (JSON.parse(hash.result) as unknown),
    error: hash.error === undefined ? null : (JSON.parse(hash.error) as JobRecord["error"]),
    resultExpiresAtMs: number(hash.resultExpires),
    webhookUrl: hash.webhookUrl ?? null,
    images: parseImages(hash.images),
  };
}

export interface RedisJobStoreOptions {
  /** How long a router that took a due webhook delivery has to attempt it before another may. */
  deliveryLeaseMs: number;
}

export class RedisJobStore implements JobStore {
  private readonly blobs: RedisImageBlobs;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisJobStoreOptions,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys: 0, lua });
    this.blobs = new RedisImageBlobs(redis, PREFIX);
  }

  private script<T>(name: ScriptName, ...args: (string | number)[]): Promise<T> {
    const command = (this.redis as unknown as Record<ScriptName, (...a: (string | number)[]) => Promise<T>>)[name];
    return command.call(this.redis, PREFIX, ...args);
  }

  insert(job: NewJob, limits: QueueLimits): Promise<InsertOutcome> {
    return insertWithImages(this.blobs, job, async (images) => {
      const outcome = await this.script<"inserted" | "key" | "queue">(
        "jobsInsert",
        ...newJobValues(job),
        job.webhookUrl ?? "",
        limits.maxActivePerKey,
        limits.maxQueued,
        imagesJson(storedOnly(images)) ?? "",
      );
      return outcome === "inserted" ? { inserted: (await this.get(job.id))! } : { refused: outcome };
    });
  }

  async readImage(jobId: string, blob: BlobRef): Promise<Buffer | null> {
    return this.blobs.read(jobId, blob);
  }

  imageReader(jobId: string, blob: BlobRef): Promise<BlobReader | null> {
    return this.blobs.reader(jobId, blob);
  }

  async get(id: string): Promise<JobRecord | null> {
    return fromHash(await this.redis.hgetall(`${PREFIX}job:${id}`));
  }

  private async getMany(ids: string[]): Promise<JobRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(`${PREFIX}job:${id}`);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([, hash]) => fromHash(hash as Record<string, string>)).filter((job): job is JobRecord => job !== null);
  }

  async list(apiKeyId: string, options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage> {
    return this.listForKeys([apiKeyId], options);
  }

  /** The jobs of all these keys, newest first; `cursor` is the last id of the previous page. */
  async listForKeys(apiKeyIds: string[], options: { status?: JobStatus; cursor?: string; limit: number }): Promise<JobListPage> {
    let below = "+inf";
    if (options.cursor) {
      const [seq, owner] = (await this.redis.hmget(`${PREFIX}job:${options.cursor}`, "seq", "apiKeyId")) as [string | null, string | null];
      // An unknown cursor (or another key's job) ends the listing, as in SQLite.
      below = seq !== null && owner !== null && apiKeyIds.includes(owner) ? `(${seq}` : "-inf";
    }
    const pages = await Promise.all(
      apiKeyIds.map((key) =>
        this.redis.zrevrangebyscore(`${PREFIX}key:${key}:${options.status ?? "all"}`, below, "-inf", "WITHSCORES", "LIMIT", 0, options.limit + 1),
      ),
    );
    const entries = pages
      .flatMap((flat) => Array.from({ length: flat.length / 2 }, (_, i) => ({ id: flat[2 * i]!, seq: Number(flat[2 * i + 1]) })))
      .sort((a, b) => b.seq - a.seq)
      .slice(0, options.limit + 1);
    const jobs = await this.getMany(entries.slice(0, options.limit).map((entry) => entry.id));
    return { jobs, nextCursor: entries.length > options.limit ? jobs[jobs.length - 1]!.id : null };
  }

  /** Decides what one BullMQ turn runs (see the script above), atomically across routers. */
  async claimTurn(token: string, nowMs: number, maxAttempts: number): Promise<TurnClaim> {
    const progress: JobProgress = { fraction: 0, step: 0, steps: 0, stage: "running" };
    const [verdict, id] = await this.script<[string, string?]>("jobsClaimTurn", token, nowMs, maxAttempts, JSON.stringify(progress), TURN_MEMORY_MS);
    const job = id === undefined ? null : await this.get(id);
    if (verdict === "run" && job) return { run: job };
    if (verdict === "lost" && job) return { lost: job };
    return { idle: true };
  }

  /** Forgets a turn whose job has finished. */
  async endTurn(token: string): Promise<void> {
    await this.redis.del(`${PREFIX}token:${token}`);
  }

  async setProgress(id: string, progress: JobProgress): Promise<void> {
    await this.script("jobsSetProgress", id, JSON.stringify(progress));
  }

  async finish(id: string, outcome: JobOutcome, nowMs: number, resultExpiresAtMs: number): Promise<boolean> {
    const resultImages: ImagesToStore = (outcome.status === "succeeded" && outcome.images) || new Map();
    // The bytes first: a record never refers to bytes not written yet.
    await this.blobs.write(id, resultImages);
    const job = await this.get(id);
    const progress: JobProgress =
      outcome.status === "succeeded"
        ? { fraction: 1, step: job?.progress.steps ?? 0, steps: job?.progress.steps ?? 0, stage: "done" }
        : { ...(job?.progress ?? QUEUED_PROGRESS), stage: outcome.status };
    const changed = await this.script<number>(
      "jobsFinish",
      id,
      outcome.status,
      nowMs,
      outcome.status === "succeeded" ? JSON.stringify(outcome.result) : "",
      outcome.status === "succeeded" ? "" : JSON.stringify(outcome.error),
      resultExpiresAtMs,
      JSON.stringify(progress),
      imagesJson(new Map([...(job?.images ?? NO_IMAGES), ...storedOnly(resultImages)])) ?? "",
    );
    // Lost the race to another outcome: the bytes just written are nobody's.
    if (changed !== 1) await this.blobs.remove(id, [...resultImages.values()].map(({ image }) => image.blob));
    return changed === 1;
  }

  async queuePosition(job: JobRecord): Promise<number> {
    return this.script<number>("jobsQueuePosition", job.id, job.apiKeyId);
  }

  async appendEvent(jobId: string, type: JobEvent["type"], data: unknown): Promise<JobEvent> {
    const id = await this.script<number>("jobsAppendEvent", jobId, type, JSON.stringify(data));
    return { id, jobId, type, data };
  }

  async eventsAfter(jobId: string, afterId: number): Promise<JobEvent[]> {
    const members = await this.redis.zrangebyscore(`${PREFIX}events:${jobId}`, `(${afterId}`, "+inf");
    // `<id>\n<type>\n<data JSON>`: JSON text never holds a raw newline.
    return members.map((member) => {
      const [id, type, data] = member.split("\n") as [string, JobEvent["type"], string];
      return { id: Number(id), jobId, type, data: JSON.parse(data) as unknown };
    });
  }

  async idempotencyEntry(apiKeyId: string, key: string, notBeforeMs: number): Promise<IdempotencyEntry | null> {
    const hash = await this.redis.hgetall(`${PREFIX}idempotency:${apiKeyId}:${key}`);
    if (!hash.jobId || Number(hash.createdAt) < notBeforeMs) return null;
    return { apiKeyId, key, fingerprint: hash.fingerprint!, jobId: hash.jobId, createdAtMs: Number(hash.createdAt) };
  }

  async bindIdempotencyKey(entry: IdempotencyEntry): Promise<boolean> {
    const ttlMs = Math.max(1, entry.createdAtMs + IDEMPOTENCY_WINDOW_MS - Date.now());
    return (await this.script<number>("jobsBindIdempotencyKey", entry.apiKeyId, entry.key, entry.fingerprint, entry.jobId, entry.createdAtMs, ttlMs)) === 1;
  }

  async releaseIdempotencyKey(apiKeyId: string, key: string, jobId: string): Promise<void> {
    await this.script("jobsReleaseIdempotencyKey", apiKeyId, key, jobId);
  }

  async signingSecret(apiKeyId: string, create: () => string): Promise<string> {
    await this.redis.hsetnx(`${PREFIX}signing-secrets`, apiKeyId, create());
    return (await this.redis.hget(`${PREFIX}signing-secrets`, apiKeyId))!;
  }

  async rotateSigningSecret(apiKeyId: string, secret: string): Promise<void> {
    await this.redis.hset(`${PREFIX}signing-secrets`, apiKeyId, secret);
  }

  async createDelivery(delivery: Omit<WebhookDelivery, "id" | "status" | "attempts">): Promise<void> {
    const images = await copyForDelivery(this.blobs, delivery.jobId, delivery.images);
    const created = await this.script<number>(
      "jobsCreateDelivery",
      delivery.jobId,
      delivery.apiKeyId,
      delivery.url,
      delivery.messageId,
      delivery.payload,
      delivery.createdAtMs,
      delivery.nextAttemptAtMs,
      imagesJson(images) ?? "",
    );
    if (created === 0) await this.blobs.remove(delivery.jobId, [...images.values()].map((image) => image.blob));
  }

  private async delivery(id: string): Promise<WebhookDelivery | null> {
    const [[, hash], [, attempts]] = (await this.redis
      .multi()
      .hgetall(`${PREFIX}delivery:${id}`)
      .lrange(`${PREFIX}delivery:${id}:attempts`, 0, -1)
      .exec()) as [[null, Record<string, string>], [null, string[]]];
    if (!hash.id) return null;
    return {
      id: Number(hash.id),
      jobId: hash.jobId!,
      apiKeyId: hash.apiKeyId!,
      url: hash.url!,
      messageId: hash.messageId!,
      payload: hash.payload!,
      status: hash.status as WebhookDelivery["status"],
      createdAtMs: Number(hash.createdAt),
      nextAttemptAtMs: Number(hash.nextAttempt),
      attempts: attempts.map((attempt) => JSON.parse(attempt) as WebhookAttempt),
      images: parseImages(hash.images),
    };
  }

  async dueDeliveries(nowMs: number, take: DueDeliveries): Promise<WebhookDelivery[]> {
    // The caller's deliveries in flight are leased, so out of the lines already; only their keys count.
    const busyKeys = take.inFlight.map((delivery) => delivery.apiKeyId);
    const ids = await this.script<string[]>("jobsTakeDueDeliveries", nowMs, take.limit, this.options.deliveryLeaseMs, take.perKeyLimit, ...busyKeys);
    const deliveries = await Promise.all(ids.map((id) => this.delivery(id)));
    return deliveries.filter((delivery): delivery is WebhookDelivery => delivery !== null);
  }

  async recordAttempt(id: number, attempt: WebhookAttempt, next: { status: WebhookDelivery["status"]; nextAttemptAtMs: number }): Promise<void> {
    await this.script("jobsRecordAttempt", id, JSON.stringify(attempt), next.status, next.nextAttemptAtMs);
  }

  async deliveryOf(jobId: string): Promise<WebhookDelivery | null> {
    const id = await this.redis.get(`${PREFIX}delivery-of:${jobId}`);
    return id === null ? null : this.delivery(id);
  }

  async purge(nowMs: number, recordsBeforeMs: number): Promise<{ results: number; records: number }> {
    const [results, records] = await this.script<[number, number]>("jobsPurge", nowMs, recordsBeforeMs, PURGE_BATCH);
    return { results, records };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
