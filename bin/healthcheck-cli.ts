/**
 * The container health probe (Dockerfile HEALTHCHECK, compose): `healthcheck-cli` asks the HTTP
 * facade's `/healthz`; `healthcheck-cli worker` asks a worker's gRPC health service. Exit 0 when
 * healthy, 1 otherwise, with the reason on stderr. No shell or curl is needed in the image.
 */
import { credentials, makeClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

const TIMEOUT_MS = 3_000;

async function probeHttp(): Promise<string | undefined> {
  const port = process.env.PORT || "8080";
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  return response.ok ? undefined : `/healthz answered ${response.status}`;
}

function probeWorker(): Promise<string | undefined> {
  const address = `127.0.0.1:${process.env.ATELIER_WORKER_PORT || "50051"}`;
  const Client = makeClientConstructor(healthService, "grpc.health.v1.Health");
  const client = new Client(address, credentials.createInsecure()) as unknown as {
    check(request: { service: string }, options: { deadline: Date }, callback: (error: ServiceError | null, response?: { status: string | number }) => void): void;
    close(): void;
  };
  return new Promise((resolve) =>
    client.check({ service: "" }, { deadline: new Date(Date.now() + TIMEOUT_MS) }, (error, response) => {
      client.close();
      if (error) resolve(`${address}: ${error.details || error.message}`);
      else resolve(response?.status === "SERVING" || response?.status === 1 ? undefined : `${address}: ${String(response?.status)}`);
    }),
  );
}

const problem = await (process.argv[2] === "worker" ? probeWorker() : probeHttp()).catch((error: unknown) => (error as Error).message);
if (problem) console.error(`unhealthy: ${problem}`);
process.exit(problem ? 1 : 0);
