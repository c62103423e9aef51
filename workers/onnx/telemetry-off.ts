/**
 * onnxruntime's Linux and macOS builds send usage telemetry (they resolve and contact
 * mobile.events.data.microsoft.com every minute or two once a session exists) unless
 * ORT_DISABLE_TELEMETRY is set when the library loads. Atelier makes no outbound request it was not
 * asked for, so it is switched off for the whole process, unconditionally.
 *
 * The native library reads the process environment (getenv), which only the main thread's
 * `process.env` writes through to; worker threads see a copy. So this runs on the main thread
 * before the inference thread, the one place onnxruntime-node is loaded, is started.
 */
export const ORT_TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY";

export function disableOnnxTelemetry(): void {
  process.env[ORT_TELEMETRY_VARIABLE] = "1";
}
