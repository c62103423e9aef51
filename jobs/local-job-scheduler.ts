/**
 * Scheduling on the embedded queue (one router, SQLite): at most `concurrency` jobs at once, keys
 * taking turns (the key served longest ago goes next, so one key's 500 jobs never starve another
 * key's one). On start it recovers the jobs this router left running when it stopped.
 */
import { interruptedOutcome, MAX_JOB_ATTEMPTS, type JobRunner, type JobScheduler } from "./job-runner.js";
import type { LocalJobQueue } from "./job-store.js";

export class LocalJobScheduler implements JobScheduler {
  private runner: JobRunner | undefined;
  private readonly running = new Set<Promise<unknown>>();
  /** The turn each key was last served at; keys never served go first. */
  private readonly lastTurn = new Map<string, number>();
  private turn = 0;
  private pumping = false;
  private pumpAgain = false;
  private stopped = false;

  constructor(
    private readonly queue: LocalJobQueue,
    private readonly concurrency: number,
  ) {}

  async start(runner: JobRunner): Promise<void> {
    this.runner = runner;
    const { error } = interruptedOutcome("recovery");
    const { requeued, failed } = await this.queue.recover(MAX_JOB_ATTEMPTS, error, runner.now());
    for (const id of requeued) await runner.emit(id, "status", { status: "queued" });
    for (const id of failed) await runner.emit(id, "status", { status: "failed" });
    if (requeued.length + failed.length > 0) runner.logger.warn({ requeued: requeued.length, failed: failed.length }, "recovered interrupted jobs");
    this.wake();
  }

  async queued(): Promise<void> {
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  private wake(): void {
    void this.pump().catch((error: unknown) => this.runner?.logger.error({ err: error }, "job queue failed"));
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && this.running.size < this.concurrency) {
          if (!(await this.startNext())) break;
        }
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
  }

  /** Claims the head of the key served longest ago; false when nothing is queued. */
  private async startNext(): Promise<boolean> {
    const runner = this.runner!;
    const heads = await this.queue.queueHeads();
    const order = heads
      .map((head, index) => ({ head, index, turn: this.lastTurn.get(head.apiKeyId) ?? -1 }))
      .sort((a, b) => a.turn - b.turn || a.index - b.index);
    for (const { head } of order) {
      const job = await this.queue.claim(head.jobId, runner.now());
      if (!job) continue;
      this.lastTurn.set(head.apiKeyId, ++this.turn);
      const running: Promise<unknown> = runner.run(job).finally(() => {
        this.running.delete(running);
        this.wake();
      });
      this.running.add(running);
      return true;
    }
    return false;
  }
}
