/**
 * Whether this process should receive traffic: every registered check (workers, key store, Redis,
 * models folder) answers within its time limit, and the process is not shutting down. Checks run
 * concurrently on each probe; none of them changes any state.
 */
export interface CheckResult {
  ok: boolean;
  /** What was found, for people: an address, a reason, a progress line. */
  detail?: string;
  /** Extra facts shown in `/readyz` (e.g. provisioning progress). */
  info?: Record<string, unknown>;
}

export interface ReadinessCheck {
  name: string;
  /** False: reported in `/readyz` but never makes the process unready (e.g. model downloads). */
  critical?: boolean;
  run(signal: AbortSignal): Promise<CheckResult>;
}

export interface CheckReport extends CheckResult {
  name: string;
  critical: boolean;
  ms: number;
}

export interface ReadinessReport {
  ready: boolean;
  /** The critical checks that failed, and `shutdown` while draining. */
  notReady: { name: string; detail: string }[];
  checks: CheckReport[];
}

const CHECK_TIMEOUT_MS = 2_000;

export class Readiness {
  private readonly checks: ReadinessCheck[] = [];
  private drainingSince: number | undefined;

  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  /** From now on the process reports itself not ready (load balancers stop sending it traffic). */
  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** Runs every check, each bounded by its time limit. */
  async report(): Promise<ReadinessReport> {
    const checks = await Promise.all(this.checks.map((check) => runCheck(check)));
    const notReady = checks.filter((check) => check.critical && !check.ok).map((check) => ({ name: check.name, detail: check.detail ?? "failed" }));
    if (this.drainingSince !== undefined) notReady.unshift({ name: "shutdown", detail: "this process is shutting down and takes no new requests" });
    return { ready: notReady.length === 0, notReady, checks };
  }
}

async function runCheck(check: ReadinessCheck): Promise<CheckReport> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ ok: false, detail: `no answer within ${CHECK_TIMEOUT_MS} ms` });
    }, CHECK_TIMEOUT_MS);
  });
  let result: CheckResult;
  try {
    result = await Promise.race([check.run(controller.signal), timeout]);
  } catch (error) {
    result = { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
  return { name: check.name, critical: check.critical ?? true, ms: Math.round(performance.now() - started), ...result };
}
