/**
 * Filter text → syntax tree (ast.ts), by recursive descent over the grammar
 * of SPEC.md §4: OR of ANDs of (NOT) comparisons and parenthesised groups.
 * Pure. Throws `FilterParseError` (with position, `expected` and `found`) for
 * any text outside the grammar, a text longer than `maxLength`, or nesting
 * (parentheses, NOT, sub-queries) deeper than `maxDepth`.
 */
import type { SourcePosition } from "../../common/errors.ts";
import type { CompareOperator, FilterNode, InNode, Name, Operand, PathNode, SubqueryNode } from "./ast.ts";
import { tokenize } from "./lexer.ts";
import { isNowNext, parseList, parseLiteral, parseNow, parseValues } from "./parse-literal.ts";
import { isReservedWord } from "./reserved-words.ts";
import { filterError, positioner, quote } from "./source-text.ts";
import { describeToken, TokenStream } from "./token-stream.ts";

/** Default longest filter text accepted, in UTF-16 units. */
const MAX_FILTER_LENGTH = 10_000;
/** Default deepest nesting of parentheses, NOT and sub-queries. */
export const MAX_FILTER_DEPTH = 64;

/** Limits of `parseFilter`, so hostile input cannot exhaust memory or the stack. */
export interface ParseFilterOptions {
  /** Default `MAX_FILTER_LENGTH`. */
  maxLength?: number;
  /** Default `MAX_FILTER_DEPTH`. */
  maxDepth?: number;
}

const SYMBOL_OPERATORS = new Set(["==", "!=", "<", "<=", ">", ">="]);
const COMPARISON_OPERATORS =
  "a comparison operator (==, !=, <, <=, >, >=, LIKE, NOTLIKE, IN, NOTIN, INCLUDES, EXCLUDES)";

/**
 * Parses an EQL filter into its syntax tree; every node carries its source position.
 * @throws FilterParseError for text outside the grammar or over the limits.
 */
export function parseFilter(text: string, options: ParseFilterOptions = {}): FilterNode {
  const maxLength = options.maxLength ?? MAX_FILTER_LENGTH;
  if (text.length > maxLength) {
    const found = `${text.length} characters`;
    throw filterError(
      `filter is longer than ${maxLength} characters`,
      positioner(text)(maxLength),
      `at most ${maxLength} characters`,
      found,
    );
  }
  return new Parser(new TokenStream(text, tokenize(text)), options.maxDepth ?? MAX_FILTER_DEPTH).parse();
}

class Parser {
  private depth = 0;

  constructor(
    private readonly stream: TokenStream,
    private readonly maxDepth: number,
  ) {}

  parse(): FilterNode {
    const filter = this.parseOr();
    if (this.stream.peek().kind !== "end") this.stream.fail("AND, OR or end of filter");
    return filter;
  }

  /** Runs `parse` one nesting level deeper, refusing to go past `maxDepth`. */
  private nested<T>(position: SourcePosition, parse: () => T): T {
    if (++this.depth > this.maxDepth) {
      const expected = `at most ${this.maxDepth} levels of nesting`;
      throw filterError(
        `filter nests deeper than ${this.maxDepth} levels`,
        position,
        expected,
        "deeper nesting",
      );
    }
    const result = parse();
    this.depth--;
    return result;
  }

  private parseOr(): FilterNode {
    return this.parseChain("OR", () => this.parseAnd());
  }

  private parseAnd(): FilterNode {
    return this.parseChain("AND", () => this.parseUnary());
  }

  private parseChain(word: "AND" | "OR", parseOperand: () => FilterNode): FilterNode {
    const first = parseOperand();
    const operands = [first];
    while (this.stream.acceptKeyword(word)) operands.push(parseOperand());
    return operands.length === 1
      ? first
      : { kind: word === "AND" ? "and" : "or", operands, position: first.position };
  }

  private parseUnary(): FilterNode {
    const not = this.stream.acceptKeyword("NOT");
    if (!not) return this.parsePrimary();
    return this.nested(not.position, () => ({
      kind: "not",
      operand: this.parseUnary(),
      position: not.position,
    }));
  }

  private parsePrimary(): FilterNode {
    const open = this.stream.acceptPunct("(");
    if (!open) return this.parseComparison();
    return this.nested(open.position, () => {
      const inner = this.parseOr();
      if (!this.stream.acceptPunct(")")) this.stream.fail("AND, OR or ')'");
      return inner;
    });
  }

  private parseComparison(): FilterNode {
    const after =
      this.stream.previous() === this.stream.peek() ? null : describeToken(this.stream.previous());
    const left = this.parseOperand("a condition", after);
    const opToken = this.stream.peek();
    const leftSource = quote(this.stream.sourceFrom(left.position));
    if (opToken.kind === "operator" && SYMBOL_OPERATORS.has(opToken.source)) {
      this.stream.next();
      const right = this.parseOperand("a value", quote(opToken.source));
      const operator = opToken.source as CompareOperator;
      return {
        kind: "compare",
        operator,
        operatorPosition: opToken.position,
        left,
        right,
        position: left.position,
      };
    }
    const word = this.operatorWord();
    if (word === null) return this.stream.fail(COMPARISON_OPERATORS, leftSource);
    if (word === "LIKE" || word === "NOTLIKE") {
      const right = this.parseOperand("a pattern", quote(word));
      return {
        kind: "compare",
        operator: word,
        operatorPosition: opToken.position,
        left,
        right,
        position: left.position,
      };
    }
    if (left.kind !== "path")
      throw filterError(`${word} needs a field on its left`, left.position, "a field", leftSource);
    if (word === "IN" || word === "NOTIN") return this.parseIn(left, word, opToken.position);
    const values = parseValues(this.stream, word);
    return {
      kind: "includes",
      negated: word === "EXCLUDES",
      path: left,
      operatorPosition: opToken.position,
      values,
      position: left.position,
    };
  }

  /** Consumes an operator word (`NOT IN` and `NOT LIKE` count as NOTIN and NOTLIKE); null when none is next. */
  private operatorWord(): "LIKE" | "NOTLIKE" | "IN" | "NOTIN" | "INCLUDES" | "EXCLUDES" | null {
    for (const word of ["LIKE", "NOTLIKE", "IN", "NOTIN", "INCLUDES", "EXCLUDES"] as const) {
      if (this.stream.acceptKeyword(word)) return word;
    }
    if (
      this.stream.isKeyword("NOT") &&
      (this.stream.isKeyword("IN", 1) || this.stream.isKeyword("LIKE", 1))
    ) {
      this.stream.next();
      return this.stream.next().source.toUpperCase() === "IN" ? "NOTIN" : "NOTLIKE";
    }
    return null;
  }

  private parseOperand(expected: string, after: string | null): Operand {
    if (isNowNext(this.stream)) return parseNow(this.stream);
    const literal = parseLiteral(this.stream);
    if (literal) return literal;
    const token = this.stream.peek();
    // A reserved word starts no path (after a `.`, any identifier is a field name).
    if (token.kind === "ident" && !isReservedWord(token.source)) return this.parsePath();
    return this.stream.fail(expected, after);
  }

  private parsePath(): PathNode {
    const first = this.stream.next();
    const segments: Name[] = [{ name: first.source, position: first.position }];
    while (this.stream.acceptPunct(".")) {
      const token = this.stream.peek();
      if (token.kind !== "ident") this.stream.fail("a field name", "'.'");
      this.stream.next();
      segments.push({ name: token.source, position: token.position });
    }
    return { kind: "path", segments, position: first.position };
  }

  private parseIn(path: PathNode, word: "IN" | "NOTIN", operatorPosition: SourcePosition): InNode {
    const base = {
      kind: "in",
      negated: word === "NOTIN",
      path,
      operatorPosition,
      position: path.position,
    } as const;
    if (this.stream.isPunct("(") && this.stream.isKeyword("SELECT", 1)) {
      return { ...base, source: this.parseSubquery() };
    }
    return {
      ...base,
      source: parseList(this.stream, word, "a list like ['a', 'b'] or a sub-query (SELECT ...)"),
    };
  }

  private parseSubquery(): SubqueryNode {
    const open = this.stream.next();
    return this.nested(open.position, () => {
      this.stream.next();
      const token = this.stream.peek();
      if (token.kind !== "ident" || isReservedWord(token.source)) this.stream.fail("a field", "'SELECT'");
      const select = this.parsePath();
      this.stream.expectKeyword("FROM", quote(this.stream.sourceFrom(select.position)));
      const object = this.stream.peek();
      if (object.kind !== "ident") this.stream.fail("an object name", "'FROM'");
      this.stream.next();
      const where = this.stream.acceptKeyword("WHERE") ? this.parseOr() : null;
      if (!this.stream.acceptPunct(")")) this.stream.fail(where ? "AND, OR or ')'" : "WHERE or ')'");
      const from = { name: object.source, position: object.position };
      return { kind: "subquery", select, from, where, position: open.position };
    });
  }
}
