/**
 * The worst filters the EQL limits allow for an engine's expression depth (10,000 characters, 64
 * levels of nesting, sub-queries 4 deep, 8 per filter, long AND/OR chains, NOT chains), over one
 * object `Xs` of an int `A` and a decimal `B`: each engine's expression-depth test runs them all on
 * a real database holding `record`, so that each condition and sub-query is evaluated, not only
 * parsed. Comparisons use a one-letter field, so the text holds as many as it can.
 */
import { MAX_SUBQUERIES, MAX_SUBQUERY_DEPTH } from "../../../../api/eql/check-filter.ts";
import { MAX_FILTER_DEPTH } from "../../../../api/eql/parse-filter.ts";
import type { Catalogue } from "../../../../api/model/catalogue.ts";
import { standardObject } from "../../../../api/model/field-factory.ts";
import type { RecordValues } from "../../../../api/model/record-values.ts";

/** The longest filter text the parser takes. */
export const MAX_LENGTH = 10_000;
export const things = standardObject("Xs", "X", { A: { type: "int" }, B: { type: "decimal" } });
export const catalogue: Catalogue = { tenantId: "t1", version: 1, objects: [things] };
/** The one record of `Xs`: every `A==1` and `B==1` of the filters is false on it. */
export const record: RecordValues = { UID: "x-1", A: 0, B: "0" };

/** `A==1 AND A==1 ...` as long as `length` allows. */
export function chain(word: "AND" | "OR", length: number): string {
  const count = Math.max(1, Math.floor((length + word.length + 2) / (word.length + 6)));
  return Array(count).fill("A==1").join(` ${word} `);
}

/** Where the 4 sub-queries sit among the 64 levels: SQLite counts what is inside a sub-query once more per sub-query around it. */
const PLACES = {
  outermost: (level: number) => level < MAX_SUBQUERY_DEPTH,
  innermost: (level: number) => level >= MAX_FILTER_DEPTH - MAX_SUBQUERY_DEPTH,
  spread: (level: number) => level % (MAX_FILTER_DEPTH / MAX_SUBQUERY_DEPTH) === 0,
};

/**
 * 64 levels of nesting, 4 of them sub-queries; each level a chain of `width` operands with the deeper
 * level first (parsed left to right, the first operand is the deepest), the leaf a chain as long as
 * the rest of the text allows.
 */
function deepest(width: number, leafWord: "AND" | "OR", isSubquery: (level: number) => boolean): string {
  let open = "";
  let close = "";
  for (let level = 0; level < MAX_FILTER_DEPTH; level++) {
    const rest = ` ${level % 2 ? "AND" : "OR"} B==1`.repeat(width - 1);
    open += isSubquery(level) ? "UID IN (SELECT UID FROM Xs WHERE " : "(";
    close = `${rest})${close}`;
  }
  return `${open}${chain(leafWord, MAX_LENGTH - open.length - close.length)}${close}`;
}

/** The NOTs of `notChain`: with the group and the sub-queries, 64 levels. */
const NOTS = MAX_FILTER_DEPTH - MAX_SUBQUERY_DEPTH - 1;

/** NOT 64 levels deep around the most sub-queries, nested as deep as allowed (false on `record` but for the NOTs). */
function notChain(): string {
  const nested = `${"UID IN (SELECT UID FROM Xs WHERE ".repeat(MAX_SUBQUERY_DEPTH)}A==1${")".repeat(MAX_SUBQUERY_DEPTH)}`;
  const siblings = Array(MAX_SUBQUERIES - MAX_SUBQUERY_DEPTH).fill("UID IN (SELECT UID FROM Xs WHERE B==1)");
  const inner = [nested, ...siblings].join(" OR ");
  return `${"NOT ".repeat(NOTS)}(${inner})`;
}

/** One worst case: what it is, its text (within `MAX_LENGTH`, passing the checks) and the UIDs it selects. */
export interface WorstCaseFilter {
  name: string;
  filter: string;
  selects: string[];
}

/** Every worst case, those whose shape does not fit in `MAX_LENGTH` left out. */
export function worstCaseFilters(): WorstCaseFilter[] {
  const cases: WorstCaseFilter[] = [
    { name: "the longest chain of ANDs", filter: chain("AND", MAX_LENGTH), selects: [] },
    { name: "the longest chain of ORs", filter: chain("OR", MAX_LENGTH), selects: [] },
  ];
  for (const [place, isSubquery] of Object.entries(PLACES))
    for (const width of [1, 2, 3, 4, 5, 8, 16])
      for (const word of ["AND", "OR"] as const)
        cases.push({
          name: `64 levels, sub-queries ${place}, chains of ${width}, the leaf an ${word} chain`,
          filter: deepest(width, word, isSubquery),
          selects: [],
        });
  cases.push({
    name: "NOT 64 levels deep around 8 sub-queries, 4 nested",
    filter: notChain(),
    selects: NOTS % 2 === 1 ? [String(record.UID)] : [],
  });
  return cases.filter((one) => one.filter.length <= MAX_LENGTH);
}
