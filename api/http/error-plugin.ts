/**
 * Elysia plugin turning every failure (ours, Elysia's, unknown) into the
 * documented error shape, and refusing oversized bodies before they are read.
 */
import { Elysia } from "elysia";
import { BadRequestError, NotFoundError, PayloadTooLargeError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { errorResponse } from "./error-response.ts";

export function errorPlugin(log: Logger, maxBodyBytes: number) {
  return new Elysia({ name: "errors" })
    .onRequest(({ request }) => {
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > maxBodyBytes) {
        return errorResponse(new PayloadTooLargeError(`the request body exceeds ${maxBodyBytes} bytes`), log);
      }
    })
    .onError({ as: "global" }, ({ code, error }) => {
      switch (code) {
        case "NOT_FOUND":
          return errorResponse(new NotFoundError("no such endpoint"), log);
        case "PARSE":
          return errorResponse(new BadRequestError("the request body is not valid JSON"), log);
        case "VALIDATION":
        case "INVALID_COOKIE_SIGNATURE":
        case "INVALID_FILE_TYPE":
          return errorResponse(new BadRequestError("the request is malformed"), log);
        default:
          return errorResponse(error, log);
      }
    });
}
