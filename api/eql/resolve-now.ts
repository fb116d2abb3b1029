/** `NOW()` operands → concrete values, given the instant the caller calls now. */
import type { NowOperand } from "./checked-filter.ts";
import { splitInstant } from "./literal-text.ts";

/**
 * The value of `NOW() + offsetMs` in the class it is compared in: ms for
 * datetime fields, the UTC date (`YYYY-MM-DD`) for date fields, the UTC time
 * of day (`HH:MM:SS.sss`) for time fields.
 */
export function resolveNow(operand: NowOperand, now: number): number | string {
  const instant = now + operand.offsetMs;
  if (operand.as === "datetime") return instant;
  const { date, time } = splitInstant(instant);
  return operand.as === "date" ? date : time;
}
