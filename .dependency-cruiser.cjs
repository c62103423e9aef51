/**
 * Atelier's layers, lowest first, checked by dependency-cruiser (test/layers/layer-rules.test.ts runs
 * it in `npm test`; `npx depcruise --config .dependency-cruiser.cjs <folders>` prints the same). A
 * module may import from its own layer and the layers below it, never from one above, and nothing may
 * import in a circle. The router (server/) and the workers (workers/) are two processes that meet only
 * over gRPC (transport/): neither imports the other, even though they share a layer.
 */

/** @type {{ name: string; meaning: string; paths: string[] }[]} */
const LAYERS = [
  { name: "core", meaning: "shared facts: errors, limits, settings, image formats, logging; and the code generated from proto/", paths: ["^core/", "^gen/"] },
  {
    name: "plumbing",
    meaning: "the router-worker transport, the database openers and migrations, the metrics registry and trace context",
    paths: ["^transport/", "^database/", "^observability/(metrics|metrics-server|trace-context)\\.ts$"],
  },
  { name: "models", meaning: "the model catalog, store, installer and converters that both processes read", paths: ["^models/"] },
  { name: "contract", meaning: "the list of public operations and their schemas", paths: ["^contract/"] },
  { name: "processes", meaning: "the router's procedures and stores; the workers' inference", paths: ["^server/", "^workers/"] },
  { name: "jobs", meaning: "background jobs, their stores, events and webhooks", paths: ["^jobs/"] },
  {
    name: "edges",
    meaning: "the HTTP facade, the console, operations (health, shutdown, provisioning) and the request observer",
    paths: ["^facade/", "^console/", "^operations/", "^observability/request-observer\\.ts$"],
  },
  { name: "bin", meaning: "composition roots and command-line programs", paths: ["^bin/"] },
];

const anyOf = (paths) => `(${paths.join("|")})`;

/** One rule per layer: nothing in it imports from any layer above it. */
const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `${layer.name}-imports-no-higher-layer`,
  comment: `${layer.name} (${layer.meaning}) may import only from itself and lower layers: ${LAYERS.slice(0, index)
    .map((lower) => lower.name)
    .join(", ") || "none"}.`,
  severity: "error",
  from: { path: anyOf(layer.paths) },
  to: { path: anyOf(LAYERS.slice(index + 1).flatMap((higher) => higher.paths)) },
}));

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "router-imports-no-worker-code",
      comment: "The router reaches the workers over gRPC (transport/) only; what both need lives in core/ or models/.",
      severity: "error",
      from: { path: "^server/" },
      to: { path: "^workers/" },
    },
    {
      name: "workers-import-no-router-code",
      comment: "The workers serve gRPC and know nothing of the router; what both need lives in core/ or models/.",
      severity: "error",
      from: { path: "^workers/" },
      to: { path: "^server/" },
    },
    {
      name: "no-circular",
      comment: "Modules that import each other in a circle cannot be understood, tested or loaded one without the other.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules", "^gen/"] },
    // Type-only imports are dependencies too: a layer rule holds for types as for values.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
/** The layers in order, for the test's report (not part of dependency-cruiser's configuration). */
Object.defineProperty(module.exports, "layers", { value: LAYERS, enumerable: false });
