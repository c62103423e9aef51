/**
 * Examples a procedure documents next to its schemas, published in the OpenAPI document and sent by
 * the contract test (test/contract/) to a real server: the success example must succeed as printed
 * once the models in `needs` are installed, and each error example must fail with its code.
 */
import type { OpenApiMeta } from "trpc-to-openapi";
import type { ErrorCode, FieldIssue } from "../../core/errors.js";

export interface ErrorExample {
  summary: string;
  /** The body that provokes it, with a valid key. */
  request: unknown;
  /** The message the server answers, when more telling than the kind's generic example. */
  message?: string;
  issues?: FieldIssue[];
}

export interface OperationExamples {
  /** Catalog ids of the models the success example runs; the operation's description names how to install them. */
  needs: string[];
  success: { summary: string; request?: unknown; response: unknown };
  errors?: Partial<Record<ErrorCode, ErrorExample>>;
}

export type AtelierMeta = OpenApiMeta & { examples?: OperationExamples };

/** A 16x16 PNG (an orange disc on blue) small enough to print, for examples that need an image. */
export const EXAMPLE_IMAGE =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQAQMAAAAlPW0iAAAABlBMVEXcWihGjNy7+o3qAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAHUlEQVQI12P4/58Bgn7IM3zgZ3jAjo6AgkApmDIACYMVi1L9jIMAAAAASUVORK5CYII=";

/** A flat grey 600x600 PNG: tiny to send, but too large to enlarge 8x within the default output limit. */
export const EXAMPLE_LARGE_IMAGE =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAlgAAAJYAQMAAACEqAqfAAAAA1BMVEWAgICQdD0xAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAQ0lEQVR42u3BAQ0AAADCoPdPbQ43oAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAvg2yIAABW5v6kQAAAABJRU5ErkJggg==";

/** Bytes that are not an image ("hello"), as a data URL. */
export const EXAMPLE_NOT_AN_IMAGE = "data:image/png;base64,aGVsbG8=";

/** How a result's data URL is shown in examples. */
export const EXAMPLE_RESULT_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA…";
