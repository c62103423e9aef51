/**
 * The deployment files hold together: Kubernetes manifests validate against the Kubernetes JSON
 * schemas (kubernetes-models) and wire router, workers and secrets as documented; the compose file
 * describes the scale-out topology; the Dockerfile is multi-stage, non-root, with a health check;
 * and the Grafana dashboard queries only metrics this service exports.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { metricsRegistry } from "../../observability/metrics.js";
import { HEALTH_PATH, READY_PATH } from "../../operations/health/health-routes.js";

const KUBERNETES = path.join("deploy", "kubernetes");

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: unknown };

/** The schema-checked model class of each kind the manifests use; any other kind fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "v1/Service": Service,
  "v1/Secret": Secret,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
};

function validate(manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!Model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`);
  new Model(manifest as never).validate();
}

function manifests(): Map<string, Manifest> {
  const byName = new Map<string, Manifest>();
  const kustomization = parse(fs.readFileSync(path.join(KUBERNETES, "kustomization.yaml"), "utf8")) as { resources: string[] };
  const files = fs.readdirSync(KUBERNETES).filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml");
  expect(kustomization.resources.sort()).toEqual(files.sort());
  for (const file of files) {
    for (const document of parseAllDocuments(fs.readFileSync(path.join(KUBERNETES, file), "utf8"))) {
      expect(document.errors, file).toEqual([]);
      const manifest = document.toJS() as Manifest;
      byName.set(`${manifest.kind}/${manifest.metadata.name}`, manifest);
    }
  }
  return byName;
}

type Container = { command: string[]; ports: { name: string; containerPort: number }[]; env?: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[]; readinessProbe: Record<string, unknown>; livenessProbe: Record<string, unknown>; volumeMounts: { name: string; mountPath: string }[] };
type DeploymentManifest = Manifest & { spec: { replicas: number; template: { metadata: { annotations: Record<string, string> }; spec: { containers: Container[]; securityContext: { runAsNonRoot: boolean }; volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] } } } };

describe("Kubernetes manifests", () => {
  const all = manifests();

  it("every manifest validates against the Kubernetes schema", () => {
    expect(all.size).toBe(6);
    for (const [name, manifest] of all) expect(() => validate(manifest), name).not.toThrow();
  });

  it("the schema check catches mistakes (a misspelt probe and a string replica count)", () => {
    const router = structuredClone(all.get("Deployment/atelier-router")!) as DeploymentManifest;
    (router.spec as unknown as { replicas: unknown }).replicas = "two";
    expect(() => validate(router)).toThrow(/replicas/);
    const worker = structuredClone(all.get("Deployment/atelier-worker")!) as DeploymentManifest;
    const container = worker.spec.template.spec.containers[0]! as unknown as Record<string, unknown>;
    container.readinessProbe = { grpc: { port: "fifty" } };
    expect(() => validate(worker)).toThrow(/port/);
  });

  it("routers reach workers through the headless service with dns:///, read secrets, and probe /readyz and /healthz", () => {
    const workerService = all.get("Service/atelier-worker") as Manifest & { spec: { clusterIP: string; ports: { port: number }[] } };
    expect(workerService.spec.clusterIP).toBe("None");
    const router = all.get("Deployment/atelier-router") as DeploymentManifest;
    const container = router.spec.template.spec.containers[0]!;
    const env = Object.fromEntries((container.env ?? []).map((entry) => [entry.name, entry]));
    expect(env.ATELIER_WORKER_ADDRESS?.value).toBe(`dns:///atelier-worker:${workerService.spec.ports[0]!.port}`);
    const secret = all.get("Secret/atelier-stores") as Manifest & { stringData: Record<string, string> };
    for (const name of ["ATELIER_DATABASE_URL", "ATELIER_REDIS_URL"]) {
      const ref = env[name]?.valueFrom?.secretKeyRef;
      expect(ref?.name, name).toBe("atelier-stores");
      expect(Object.keys(secret.stringData)).toContain(ref!.key);
    }
    expect(container.readinessProbe).toMatchObject({ httpGet: { path: READY_PATH } });
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: HEALTH_PATH } });
    expect(container.command).toEqual(["node", "dist/bin/service.js"]);
  });

  it("workers run non-root with gRPC probes and the models volume", () => {
    const worker = all.get("Deployment/atelier-worker") as DeploymentManifest;
    const spec = worker.spec.template.spec;
    expect(spec.securityContext.runAsNonRoot).toBe(true);
    const container = spec.containers[0]!;
    expect(container.command).toEqual(["node", "dist/bin/workers.js"]);
    expect(container.readinessProbe).toMatchObject({ grpc: { port: 50051 } });
    expect(container.livenessProbe).toMatchObject({ grpc: { port: 50051 } });
    expect(container.volumeMounts).toContainEqual({ name: "models", mountPath: "/models" });
    expect(spec.volumes.find((volume) => volume.name === "models")?.persistentVolumeClaim?.claimName).toBe("atelier-models");
    expect(all.has("PersistentVolumeClaim/atelier-models")).toBe(true);
  });

  it("routers and workers serve metrics on the port their annotations name, to other pods", () => {
    for (const name of ["Deployment/atelier-router", "Deployment/atelier-worker"]) {
      const deployment = all.get(name) as DeploymentManifest;
      const container = deployment.spec.template.spec.containers[0]!;
      const env = Object.fromEntries((container.env ?? []).map((entry) => [entry.name, entry.value]));
      const port = deployment.spec.template.metadata.annotations["prometheus.io/port"];
      expect(env.ATELIER_METRICS_PORT, name).toBe(port);
      expect(env.ATELIER_METRICS_HOST, name).toBe("0.0.0.0");
      expect(container.ports.find((entry) => entry.name === "metrics")?.containerPort, name).toBe(Number(port));
    }
  });
});

describe("compose topology", () => {
  const compose = parse(fs.readFileSync(path.join("deploy", "compose.yaml"), "utf8"), { merge: true }) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; ports?: string[]; deploy?: { replicas: number }; volumes?: string[]; healthcheck?: { test: string[] } }>;
    volumes: Record<string, unknown>;
  };

  it("runs a router, two worker replicas on a models volume, Redis and PostgreSQL", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["postgres", "redis", "router", "worker"]);
    const { router, worker } = compose.services;
    expect(router!.environment!.ATELIER_WORKER_ADDRESS).toBe("dns:///worker:50051");
    expect(router!.environment!.ATELIER_DATABASE_URL).toMatch(/^postgresql:\/\/atelier:.*@postgres:5432\/atelier$/);
    expect(router!.environment!.ATELIER_REDIS_URL).toBe("redis://redis:6379");
    expect(worker!.deploy!.replicas).toBe(2);
    expect(worker!.command).toEqual(["node", "dist/bin/workers.js"]);
    expect(worker!.volumes).toContain("models:/models");
    expect(worker!.healthcheck!.test).toEqual(["CMD", "node", "dist/bin/healthcheck-cli.js", "worker"]);
    expect(compose.volumes).toHaveProperty("models");
  });

  it("serves metrics from router and workers to the compose network, published on the host's loopback only", () => {
    const { router, worker } = compose.services;
    for (const service of [router!, worker!]) {
      expect(service.environment!.ATELIER_METRICS_PORT).toBe("9464");
      expect(service.environment!.ATELIER_METRICS_HOST).toBe("0.0.0.0");
    }
    expect(router!.ports!.filter((port) => port.endsWith(":9464"))).toEqual(["127.0.0.1:9464:9464"]);
  });
});

describe("Dockerfile", () => {
  const dockerfile = fs.readFileSync("Dockerfile", "utf8");
  const instructions = dockerfile.split("\n").filter((line) => /^[A-Z]+ /.test(line));

  it("builds in one stage and runs built output with production dependencies as a non-root user", () => {
    expect(instructions.filter((line) => line.startsWith("FROM "))).toEqual(["FROM ${NODE_IMAGE} AS build", "FROM ${NODE_IMAGE} AS runtime"]);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.indexOf("AS runtime"));
    expect(runtime).not.toMatch(/^COPY \. /m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^VOLUME \["\/data", "\/models"\]$/m);
    expect(runtime).toMatch(/ATELIER_MODELS_DIR=\/models/);
    // Metrics are off by default; the image serves them for a Prometheus in another container.
    expect(runtime).toMatch(/ATELIER_METRICS_PORT=9464/);
    expect(runtime).toMatch(/ATELIER_METRICS_HOST=0\.0\.0\.0/);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "dist\/bin\/healthcheck-cli\.js"\]$/m);
    expect(fs.existsSync(path.join("bin", "healthcheck-cli.ts"))).toBe(true);
  });

  it("keeps build output and local data out of the build context", () => {
    const ignored = fs.readFileSync(".dockerignore", "utf8").split("\n");
    for (const entry of ["node_modules", "dist", "gen", "data", ".git"]) expect(ignored).toContain(entry);
  });
});

describe("Grafana dashboard", () => {
  it("queries only metrics this service exports", async () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join("deploy", "grafana", "atelier-dashboard.json"), "utf8")) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exported = new Set((await metricsRegistry.getMetricsAsJSON()).map((metric) => metric.name));
    const used = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets) for (const [name] of expr.matchAll(/atelier_[a-z0-9_]+/g)) used.add(name.replace(/_(bucket|count|sum)$/, ""));
    }
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    for (const name of ["atelier_http_requests_total", "atelier_inference_duration_seconds", "atelier_queue_depth", "atelier_quota_rejections_total", "atelier_model_memory_bytes", "atelier_worker_up"]) {
      expect(used).toContain(name);
    }
  });
});
