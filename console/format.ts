/** Pure display helpers: values in, text out. */
import type { DeliveryAttempt } from "./api-types.ts";

/** The first `max` characters of `text` on one line, with an ellipsis when cut; "" for null. */
export function excerpt(text: string | null, max = 160): string {
  if (text === null) return "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** An ISO instant as local date and time to the second (`2026-01-31 14:05:09`). */
export function formatInstant(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** What an attempt came back with: the receiver's body, or the error that stood in for an answer. */
export function attemptAnswer(attempt: Pick<DeliveryAttempt, "responseBody" | "error">): string {
  if (attempt.error !== null) return attempt.error;
  return attempt.responseBody ?? "";
}
