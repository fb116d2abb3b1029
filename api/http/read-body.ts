/** A request body of unknown length (chunked) read within a byte limit, as it streams in. */
import { PayloadTooLargeError } from "../../common/errors.ts";

/** The error of a body over the limit, declared or counted. */
export const bodyTooLarge = (maxBytes: number) =>
  new PayloadTooLargeError(`the request body exceeds ${maxBytes} bytes`);

/**
 * The body's bytes, counted chunk by chunk: past `maxBytes` the stream is cancelled at once, so
 * at most `maxBytes` and one chunk are ever held.
 * @throws PayloadTooLargeError when the body is longer than `maxBytes`.
 */
export async function readBodyWithin(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
