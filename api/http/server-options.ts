/**
 * How the API listens: its configuration in, the Bun.serve options out.
 * main.ts listens with these and the transport tests do the same.
 *
 * Bun's own body cap (`maxRequestBodySize`) is lifted: over it, Bun answers a
 * bare 413 without our error shape, before any of our code runs. The error
 * plugin holds every body to MAX_BODY_BYTES instead: a declared length at
 * once, a chunked body as it streams in (error-plugin.ts).
 *
 * What Bun (1.4.5) still answers itself, with no hook to shape it: a header
 * block over 16 KiB (`bun --max-http-header-size`) or of more than 198 fields
 * gets a bare `431 Request Header Fields Too Large` and the connection closed;
 * `Expect: 100-continue` gets `100 Continue` before the handler runs, so an
 * over-limit declared length sees `100 Continue` and then our 413 (which
 * closes the connection, so the withheld body is never expected).
 */
import type { ApiConfig } from "../config.ts";

/** Bun's own send-buffer cap, kept above LIVE_MAX_BUFFERED_BYTES: past it Bun would drop messages unsaid. */
const BUN_BACKPRESSURE_FLOOR = 16 * 1024 * 1024;

export function serverOptions(
  config: Pick<ApiConfig, "PORT" | "HOST" | "LIVE_MAX_MESSAGE_BYTES" | "LIVE_MAX_BUFFERED_BYTES">,
) {
  return {
    port: config.PORT,
    hostname: config.HOST,
    reusePort: false,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Live subscriptions: a larger client message is closed by Bun with 1009 before it is buffered;
    // the send buffer is bounded by the connection itself (api/live/live-connection.ts).
    websocket: {
      maxPayloadLength: config.LIVE_MAX_MESSAGE_BYTES,
      backpressureLimit: Math.max(BUN_BACKPRESSURE_FLOOR, 2 * config.LIVE_MAX_BUFFERED_BYTES),
      closeOnBackpressureLimit: false,
    },
  };
}
