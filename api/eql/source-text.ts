/** Positions in a filter's text and the wording of its parse errors. */
import { FilterParseError, type SourcePosition } from "../../common/errors.ts";

/** A function from a 0-based offset in `text` to its offset, 1-based line and 1-based column (UTF-16 units). */
export function positioner(text: string): (offset: number) => SourcePosition {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
  return (offset) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    return { offset, line: low + 1, column: offset - (lineStarts[low] ?? 0) + 1 };
  };
}

/** `column 14`, or `line 2, column 3` past the first line. */
export function describePosition(position: SourcePosition): string {
  return position.line > 1 ? `line ${position.line}, column ${position.column}` : `column ${position.column}`;
}

/**
 * `expected <expected>[ after <after>] at column N, found <found>`, as a
 * `FilterParseError` with `expected` and `found` filled.
 */
export function expectedError(
  expected: string,
  found: string,
  position: SourcePosition,
  after: string | null = null,
): FilterParseError {
  const context = after === null ? "" : ` after ${after}`;
  return new FilterParseError(
    `expected ${expected}${context} at ${describePosition(position)}, found ${found}`,
    position,
    expected,
    found,
  );
}

/** `<problem> at column N`, as a `FilterParseError`. */
export function filterError(
  problem: string,
  position: SourcePosition,
  expected: string | null = null,
  found: string | null = null,
): FilterParseError {
  return new FilterParseError(`${problem} at ${describePosition(position)}`, position, expected, found);
}

/** `'text'`, shortened past 40 characters: how error messages quote what they found. */
export function quote(text: string): string {
  return `'${text.length > 40 ? `${text.slice(0, 37)}...` : text}'`;
}
