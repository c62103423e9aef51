/**
 * The HTTP front door: the exact `/api/v1` REST endpoints (the router's procedures, each at the path
 * its OpenAPI meta names), the OpenAPI document, and tRPC over HTTP at `/trpc` for internal services.
 * Every response, success or failure, from any layer, is JSON and carries `X-Request-Id`.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import { createExpressMiddleware } from "@trpc/server/adapters/express";
import type { TRPCError } from "@trpc/server";
import { sessionCalls } from "../console/playground/session-calls.js";
import { createConsoleRouter } from "../console/server/create-console-router.js";
import type { FirstAdminSetup } from "../console/server/first-admin-setup.js";
import { AtelierError } from "../core/errors.js";
import type { AtelierServices, RequestContext } from "../server/context.js";
import { httpHeadersOf, httpStatusOf } from "../server/http-error-meta.js";
import { appRouter } from "../server/router.js";
import { inRequestTrace, observeRequests, operationResolver, requestNotes } from "../observability/request-observer.js";
import { corsFor } from "../operations/cors.js";
import { HEALTH_PATH, healthRoutes, READY_PATH } from "../operations/health/health-routes.js";
import { Readiness } from "../operations/health/readiness.js";
import { refuseWhileDraining } from "../operations/shutdown/graceful-shutdown.js";
import { atelierErrorOf } from "../server/trpc-errors.js";
import { sendError } from "./error-responses.js";
import { earlyAuthenticatedKeys, earlyAuthentication } from "./early-authentication.js";
import { headAsGet } from "./head-as-get.js";
import { noStoreAnswers } from "./no-store.js";
import { jsonBodies } from "./json-body.js";
import { bodyStringBytes } from "./body-strings.js";
import { LargeBodies } from "./large-bodies.js";
import { multipartBodies } from "./multipart-body.js";
import { refuseUnreadBody } from "./refuse-unread-body.js";
import { uploadForms } from "./upload-forms.js";
import { sendTrpcError, sendTrpcRequestError } from "./trpc-error-response.js";
import { limitTrpcBatches, trpcCallsOf } from "./trpc-batch.js";
import { servedOpenApiDocument } from "./served-openapi-document.js";
import { assignRequestId, requestIdOf } from "./request-id.js";
import { restHandler, restRoutes } from "./rest-routes.js";
import { jobRoutes, jobSubmissions } from "./jobs-routes.js";
import type { JobService } from "../jobs/job-service.js";
import { JOB_OPERATIONS } from "../jobs/job-operations.js";

const API_PREFIX = "/api";
const TRPC_PREFIX = "/trpc";
/** Where an API path lands when its `/api` prefix is forgotten (`/v1/tools/upscale`). */
const UNPREFIXED_API = "/v1";
/** The paths whose request bodies the body reader (json-body.ts) reads. */
export const JSON_BODY_PREFIXES = [API_PREFIX, TRPC_PREFIX] as const;
const OPENAPI_PATH = "/api/v1/openapi.json";

export function contextFor(services: AtelierServices, req: Request, res: Response): RequestContext {
  const disconnected = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) disconnected.abort(new AtelierError("CANCELLED", "The client closed the connection."));
  });
  return {
    requestId: requestIdOf(res),
    authorization: req.get("authorization"),
    authenticated: earlyAuthenticatedKeys(res),
    setHeader: (name, value) => {
      if (!res.headersSent) res.setHeader(name, value);
    },
    signal: disconnected.signal,
    services,
    note: (fields) => Object.assign(requestNotes(res), fields),
    bodyStringBytes: (text) => bodyStringBytes(res, text),
  };
}

/** Status and headers of a failed procedure called over tRPC's HTTP adapter. */
function errorResponseMeta({ errors, info }: { errors: TRPCError[]; info: unknown }) {
  const [first] = errors;
  if (!first) return {};
  const failure = atelierErrorOf(first);
  // A request tRPC could not read at all (a batch mixing queries and mutations) is answered in
  // JSON like any other, but without a content type of tRPC's own.
  const headers = info === undefined ? { ...httpHeadersOf(failure), "content-type": "application/json" } : httpHeadersOf(failure);
  return { status: httpStatusOf(failure), headers };
}

/** Operations parts the facade mounts: readiness (for `/readyz` and refusing work while draining), and the router's jobs. */
export interface FacadeOperations {
  readiness: Readiness;
  /** Asynchronous jobs (`Prefer: respond-async`, `/api/v1/jobs`); absent: synchronous calls only. */
  jobs?: JobService;
  /** The console's first-administrator link, the one the start banner prints; absent: one printed nowhere. */
  firstAdmin?: FirstAdminSetup;
}

export function createFacadeApp(services: AtelierServices, version: string, ops: FacadeOperations = { readiness: new Readiness() }): express.Express {
  const { jobs } = ops;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", services.config.console.trustProxy);
  app.use(headAsGet);
  app.use(assignRequestId);
  app.use(observeRequests(services.logger, operationResolver(API_PREFIX, [HEALTH_PATH, READY_PATH])));
  const cors = corsFor(services.config.corsOrigins, [...JOB_OPERATIONS.values()].flatMap((operation) => operation.rawImageHeaders));
  if (cors) app.use(cors);
  app.use([API_PREFIX, TRPC_PREFIX], noStoreAnswers);
  app.use(healthRoutes(ops.readiness));
  app.all([HEALTH_PATH, READY_PATH], (req, res) => {
    res.setHeader("Allow", "GET, HEAD");
    sendError(res, new AtelierError("METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${req.path}; use GET.`));
  });
  app.use(refuseWhileDraining(ops.readiness));

  // Key and quota from the headers, then the body within its limits (facade/json-body.ts), for both transports.
  const largeBodies = new LargeBodies(services.config.http.maxConcurrentLargeBodies);
  const bodies = jsonBodies(services.config.http, largeBodies);
  app.use(TRPC_PREFIX, limitTrpcBatches(sendTrpcRequestError), earlyAuthentication(services, trpcCallsOf, sendTrpcError), bodies(sendTrpcError));
  const trpcHandler = createExpressMiddleware({
    router: appRouter,
    createContext: ({ req, res }) => contextFor(services, req, res),
    responseMeta: errorResponseMeta,
    maxBodySize: services.config.http.maxBodyBytes,
  });
  app.use(TRPC_PREFIX, (req, res, next) => {
    // tRPC's adapter reads a string `req.body` as the body's raw text: a body that is a JSON string
    // (`"x"`) goes back as its JSON text, so the procedure's schema judges the string itself.
    if (typeof req.body === "string") req.body = JSON.stringify(req.body);
    // The body was read from stream events, outside the request's trace: re-enter it for the procedure.
    inRequestTrace(res, () => void trpcHandler(req, res, next));
  });

  const document = servedOpenApiDocument(version);
  // The image operations also take their body as a multipart form, with the image as a file.
  const forms = uploadForms(document);
  const formBodies = multipartBodies({ ...services.config.http, maxImageBytes: services.config.images.maxBytes }, forms, largeBodies);
  const operations = restRoutes(API_PREFIX);
  const routes = new Map<string, string[]>();
  for (const { path, method } of operations) routes.set(path, [...(routes.get(path) ?? []), method]);
  app.get(OPENAPI_PATH, (_req, res) => {
    res.json(document);
  });

  if (jobs) app.use(API_PREFIX, jobRoutes(services, jobs, contextFor));
  // Unknown paths, wrong methods and bodies of other media types are refused before the body is read.
  app.use(API_PREFIX, (req, res, next) => {
    const path = req.originalUrl.split("?")[0]!.replace(/\/+$/, "");
    const methods = path === OPENAPI_PATH ? ["GET"] : routes.get(path);
    if (!methods) return sendError(res, new AtelierError("NOT_FOUND", `No endpoint at ${path}. See ${OPENAPI_PATH} for the API.`));
    if (!methods.includes(req.method) && !(req.method === "HEAD" && methods.includes("GET"))) {
      res.setHeader("Allow", methods.join(", "));
      return sendError(res, new AtelierError("METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${path}; use ${methods.join(" or ")}.`));
    }
    next();
  });
  const restFailure = (_req: Request, res: Response, error: AtelierError) => sendError(res, error);
  const restOperations = new Map(operations.map((route) => [`${route.method} ${route.path}`, route.procedure]));
  const restOperationOf = (req: Request) => restOperations.get(`${req.method} ${req.originalUrl.split("?")[0]!.replace(/\/+$/, "")}`);
  // The console's playground calls operations with the session and one of the user's keys, named by id.
  if (services.config.console.enabled) app.use(API_PREFIX, sessionCalls(services, restOperationOf, (req, res, error) => refuseUnreadBody(req, res, () => sendError(res, error))));
  app.use(API_PREFIX, earlyAuthentication(services, (req) => [restOperationOf(req) ?? ""], restFailure), formBodies(restFailure, bodies(restFailure)));
  // trpc-to-openapi spreads the body into an object, which would turn `[1]` or `"text"` into
  // `{"0": ...}`; a body that is not an object is refused here with a plain message instead.
  app.use(API_PREFIX, (req, res, next) => {
    const body: unknown = req.body;
    if (body !== undefined && (body === null || typeof body !== "object" || Array.isArray(body))) {
      return sendError(res, new AtelierError("INVALID_INPUT", `Invalid request: expected a JSON object as the body but received ${Array.isArray(body) ? "an array" : JSON.stringify(body)}.`));
    }
    next();
  });

  if (jobs) app.use(API_PREFIX, jobSubmissions(services, jobs, contextFor));
  for (const route of operations) {
    const handler = restHandler(route, (req, res) => contextFor(services, req, res));
    // Body parsing resumed the chain outside the request's trace: re-enter it for the procedure.
    const traced = (req: Request, res: Response) => inRequestTrace(res, () => void handler(req, res));
    if (route.method === "GET") app.get(route.path, traced);
    else app.post(route.path, traced);
  }

  // An API path without its `/api` is a client's slip, not a console page: a JSON 404 naming the path meant.
  app.use(UNPREFIXED_API, (req, res) => {
    const path = req.originalUrl.split("?")[0]!;
    sendError(res, new AtelierError("NOT_FOUND", `No such path. The API lives under ${API_PREFIX}: did you mean ${req.method} ${API_PREFIX}${path}?`));
  });

  // The web console under `/` (its own router skips /api and /trpc paths); ATELIER_CONSOLE=off drops it.
  if (services.config.console.enabled) app.use(createConsoleRouter(services, jobs, ops.firstAdmin));

  app.use((_req: Request, res: Response) => {
    sendError(res, new AtelierError("NOT_FOUND", `No endpoint at ${_req.path}. The API lives under /api/v1 (see ${OPENAPI_PATH}).`));
  });

  // Body-parser and any other express-level failure, as the same JSON errors.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") {
      return sendError(res, new AtelierError("PAYLOAD_TOO_LARGE", `The request body is over this server's limit of ${services.config.http.maxBodyBytes} bytes (ATELIER_MAX_BODY_BYTES).`));
    }
    if (type === "entity.parse.failed") {
      return sendError(res, new AtelierError("MALFORMED_JSON", "The request body is not valid JSON."));
    }
    if (type === "charset.unsupported" || type === "encoding.unsupported") {
      return sendError(res, new AtelierError("UNSUPPORTED_MEDIA_TYPE", "Send the body as UTF-8 JSON without content encoding."));
    }
    // express's router cannot decode a path parameter with a malformed %-escape (`/api/v1/jobs/%zz`).
    if (error instanceof URIError) {
      const message = "The request path has a malformed %-escape.";
      return sendError(res, new AtelierError("INVALID_INPUT", `Invalid request: ${message}`, { issues: [{ path: "path", message }] }));
    }
    services.logger.error({ requestId: requestIdOf(res), err: error, path: req.path }, "unhandled facade error");
    sendError(res, new AtelierError("INTERNAL", "The server failed to process the request. Try again later."));
  });
  return app;
}
