/**
 * How deeply a GraphQL document's text nests its brackets ({ } [ ] ( )),
 * checked before it is parsed: graphql-js parses nested values and selections
 * by recursion, so a document of a few thousand nested list brackets, well
 * within the token limit, overflows the call stack ("Maximum call stack size
 * exceeded", which is no message for a client). Strings (block strings too)
 * and comments are skipped: brackets in them nest nothing. Linear in the text;
 * stops at the first level past the limit. Pure.
 */

/** Deepest bracket nesting a document may have: far beyond the selection depth limit and any value a field takes. */
export const MAX_DOCUMENT_NESTING = 256;

const OPENING = new Set(["{", "[", "("]);
const CLOSING = new Set(["}", "]", ")"]);

/** True when `text` nests brackets more than `max` levels deep outside strings and comments. */
export function nestsDeeperThan(text: string, max: number = MAX_DOCUMENT_NESTING): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "#") {
      while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
    } else if (c === '"') {
      i = text.startsWith('"""', i) ? blockStringEnd(text, i + 3) : stringEnd(text, i + 1);
    } else if (c !== undefined && OPENING.has(c)) {
      if (++depth > max) return true;
    } else if (c !== undefined && CLOSING.has(c)) {
      depth--;
    }
  }
  return false;
}

/** Where a string that starts at `from` ends (its closing quote, or the line's or text's end: the parser reports those). */
function stringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === '"' || c === "\n" || c === "\r") return i;
  }
  return text.length;
}

/** Where a block string whose body starts at `from` ends (the last quote of its closing `"""`, escaped `\"""` skipped). */
function blockStringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text.startsWith('\\"""', i)) i += 3;
    else if (text.startsWith('"""', i)) return i + 2;
  }
  return text.length;
}
