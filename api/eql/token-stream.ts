/** A cursor over a filter's tokens with the look-ahead and expectation helpers the parser needs. */
import type { FilterParseError, SourcePosition } from "../../common/errors.ts";
import type { Token } from "./lexer.ts";
import { expectedError, quote } from "./source-text.ts";

/** How an error message names a token: `'AND'`, or `end of filter`. */
export function describeToken(token: Token): string {
  if (token.kind === "end") return "end of filter";
  // A string token is quoted already.
  return token.kind === "string" && token.source.length <= 40 ? token.source : quote(token.source);
}

/** The parser's cursor: consumes tokens and builds errors that say what was expected where. */
export class TokenStream {
  private index = 0;

  constructor(
    readonly text: string,
    private readonly tokens: Token[],
  ) {}

  /** The token `ahead` places after the current one (the `end` token past the last). */
  peek(ahead = 0): Token {
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)] as Token;
  }

  /** The last consumed token (the first token before any is consumed). */
  previous(): Token {
    return this.tokens[Math.max(this.index - 1, 0)] as Token;
  }

  next(): Token {
    const token = this.peek();
    if (this.index < this.tokens.length - 1) this.index++;
    return token;
  }

  /** True when the token `ahead` is the identifier `word`, in any letter case. */
  isKeyword(word: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === "ident" && token.source.toUpperCase() === word;
  }

  isPunct(ch: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === "punct" && token.source === ch;
  }

  /** Consumes and returns the keyword `word` when it is next. */
  acceptKeyword(word: string): Token | null {
    return this.isKeyword(word) ? this.next() : null;
  }

  acceptPunct(ch: string): Token | null {
    return this.isPunct(ch) ? this.next() : null;
  }

  /** Consumes the punctuation `ch`, or throws "expected '<ch>' [after ...]". */
  expectPunct(ch: string, after: string | null = null): Token {
    return this.acceptPunct(ch) ?? this.fail(`'${ch}'`, after);
  }

  /** Consumes the keyword `word`, or throws "expected <word> [after ...]". */
  expectKeyword(word: string, after: string | null = null): Token {
    return this.acceptKeyword(word) ?? this.fail(word, after);
  }

  /** An error saying what was expected where the next token is. */
  error(expected: string, after: string | null = null): FilterParseError {
    const token = this.peek();
    return expectedError(expected, describeToken(token), token.position, after);
  }

  fail(expected: string, after: string | null = null): never {
    throw this.error(expected, after);
  }

  /** The text from `start` to the end of the last consumed token. */
  sourceFrom(start: SourcePosition): string {
    const last = this.previous();
    const end = Math.max(last.position.offset + last.source.length, start.offset);
    return this.text.slice(start.offset, end);
  }
}
