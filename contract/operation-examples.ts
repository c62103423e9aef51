/**
 * Examples a procedure documents next to its schemas, published in the OpenAPI document and sent by
 * the contract test (test/contract/) to a real server: the success example must succeed as printed
 * once the models in `needs` are installed, and each error example must fail with its code.
 */
import type { OpenApiMeta } from "trpc-to-openapi";
import type { ErrorCode, FieldIssue } from "../core/errors.js";

export interface ErrorExample {
  summary: string;
  /** The body that provokes it, with a valid key. */
  request: unknown;
  /** The message the server answers, when more telling than the kind's generic example. */
  message?: string;
  issues?: FieldIssue[];
}

export interface OperationExamples {
  /** Catalog ids of the models the success example runs that an operator pulls first (built-in ones need nothing). */
  needs: string[];
  success: { summary: string; request?: unknown; response: unknown };
  errors?: Partial<Record<ErrorCode, ErrorExample>>;
}

export type AtelierMeta = OpenApiMeta & { examples?: OperationExamples };
