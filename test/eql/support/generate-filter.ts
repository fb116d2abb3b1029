/**
 * Random, well-typed EQL filters over the test catalogue: every operator,
 * literal form, lookup path, sub-query and NOW() offset the grammar has, with
 * values drawn from the pools the records use so comparisons hit.
 */

import type { ValueClass } from "../../../api/eql/checked-filter.ts";
import { VALUE_CLASS } from "../../../api/eql/coerce-literal.ts";
import type { FieldType, ObjectDef } from "../../../api/model/catalogue.ts";
import type { Random } from "./prng.ts";
import {
  decimalText,
  instantText,
  keyword,
  likePattern,
  minutesText,
  quoted,
  timeText,
} from "./render-literal.ts";
import { testObject } from "./test-catalogue.ts";
import {
  DANGLING_UID,
  DATES,
  DECIMALS,
  INSTANTS,
  INTS,
  KINDS,
  MINUTES,
  OWNER_UIDS,
  TAGS,
  TEXTS,
  THING_UIDS,
  TIMES,
} from "./value-pools.ts";

interface PathInfo {
  path: string;
  type: FieldType;
  valueClass: ValueClass;
}

/** System references lead to Users, which the test leaves empty: only worth an occasional path. */
const SKIPPED = new Set(["CreatedBy", "LastModifiedBy", "LastModifiedDate"]);

/** Every path from `object`: its fields, `<Ref>Id` aliases, and lookups up to `depth` references deep. */
function pathsOf(object: ObjectDef, depth: number, prefix = ""): PathInfo[] {
  return object.fields.flatMap((field) => {
    if (SKIPPED.has(field.name)) return [];
    const own = { path: prefix + field.name, type: field.type, valueClass: VALUE_CLASS[field.type] };
    if (field.type !== "reference") return [own];
    const alias = { ...own, path: `${own.path}Id` };
    const deeper = depth > 0 ? pathsOf(testObject(field.referenceTo ?? ""), depth - 1, `${own.path}.`) : [];
    return [own, alias, ...deeper];
  });
}

const ORDERING = ["==", "!=", "<", "<=", ">", ">="];

function uidLiteral(random: Random): string {
  return quoted(random.pick([...OWNER_UIDS, ...THING_UIDS.slice(0, 5), DANGLING_UID, "abc"]), random);
}

/** A literal fitting a field of `type`; `equality` keeps picklist values to the picklist's items. */
function literalFor(type: FieldType, random: Random, equality = true): string {
  switch (type) {
    case "int":
      return random.chance(0.15) ? minutesText(random.pick(MINUTES), random) : String(random.pick(INTS));
    case "duration":
      return minutesText(random.pick(MINUTES), random);
    case "decimal":
      return decimalText(random.pick(DECIMALS), random);
    case "boolean":
      return random.chance(0.2)
        ? quoted(String(random.chance(0.5)), random)
        : keyword(random.chance(0.5) ? "TRUE" : "FALSE", random);
    case "datetime":
      return random.chance(0.2)
        ? random.pick(DATES.slice(1, -1))
        : instantText(random.pick(INSTANTS), random);
    case "date":
      return random.chance(0.2) ? quoted(random.pick(DATES), random) : random.pick(DATES);
    case "time":
      return timeText(random.pick(TIMES), random);
    case "picklist":
      return quoted(equality || random.chance(0.5) ? random.pick(KINDS) : random.pick(TEXTS), random);
    case "multipicklist":
      return quoted(random.pick(TAGS), random);
    case "id":
    case "reference":
      return uidLiteral(random);
    default:
      return quoted(random.pick(TEXTS), random);
  }
}

function nowText(random: Random): string {
  const offset = random.pick(["", " - 2 h", " + 1d", "-5m", " - 123 ms", " + 30 s", " - 1 day"]);
  return `NOW()${offset}`;
}

function listOf(path: PathInfo, random: Random): string {
  const values = Array.from({ length: 1 + random.int(3) }, () => literalFor(path.type, random));
  if (random.chance(0.2)) values.splice(random.int(values.length + 1), 0, keyword("NULL", random));
  return random.chance(0.5) ? `[${values.join(", ")}]` : `(${values.join(",")})`;
}

export class FilterGenerator {
  constructor(private readonly random: Random) {}

  /** A filter on `object`, nesting logic up to `depth` levels. */
  condition(object: ObjectDef, depth: number): string {
    const random = this.random;
    if (depth > 0 && random.chance(0.4)) {
      if (random.chance(0.2)) return `${keyword("NOT", random)} ${this.condition(object, depth - 1)}`;
      const word = keyword(random.chance(0.5) ? "AND" : "OR", random);
      const parts = Array.from({ length: 2 + random.int(2) }, () => this.condition(object, depth - 1));
      const joined = parts.join(` ${word} `);
      return random.chance(0.5) ? `(${joined})` : joined;
    }
    return this.atom(object, depth);
  }

  private atom(object: ObjectDef, depth: number): string {
    const random = this.random;
    const roll = random.next();
    const path = this.path(object);
    if (roll < 0.08) return `${path.path} ${random.pick(["==", "!="])} ${keyword("NULL", random)}`;
    if (path.valueClass === "multipicklist") return this.multipicklist(path);
    if (roll < 0.12 && path.valueClass !== "boolean") return `${path.path} ${random.pick(["<", ">="])} null`;
    if (roll < 0.25) return this.fieldToField(object, path);
    if (roll < 0.38)
      return `${path.path} ${keyword(random.pick(["IN", "NOTIN"]), random)} ${listOf(path, random)}`;
    if (roll < 0.48 && depth > 0) return this.subquery(path, depth);
    if (roll < 0.65 && path.valueClass === "text") {
      const op = keyword(random.pick(["LIKE", "NOTLIKE"]), random);
      return `${path.path} ${op} ${likePattern(random.pick(path.type === "picklist" ? KINDS : TEXTS), random)}`;
    }
    return this.comparison(path);
  }

  /** A path of `object`: mostly its own fields, some one lookup deep, a few two. */
  private path(object: ObjectDef): PathInfo {
    const depth = this.random.pick([0, 0, 0, 0, 0, 0, 1, 1, 1, 2]);
    const paths = pathsOf(object, depth).filter((path) => path.path.split(".").length === depth + 1);
    return this.random.chance(0.03)
      ? { path: "CreatedBy.LastName", type: "string", valueClass: "text" }
      : this.random.pick(paths);
  }

  private comparison(path: PathInfo): string {
    const random = this.random;
    const ops = path.valueClass === "boolean" ? ["==", "!="] : ORDERING;
    const op = random.pick(ops);
    const isTemporal = ["datetime", "date", "time"].includes(path.valueClass);
    const value =
      isTemporal && random.chance(0.3)
        ? nowText(random)
        : literalFor(path.type, random, op === "==" || op === "!=");
    return random.chance(0.2) ? `${value} ${op} ${path.path}` : `${path.path} ${op} ${value}`;
  }

  private multipicklist(path: PathInfo): string {
    const random = this.random;
    const op = keyword(random.pick(["INCLUDES", "EXCLUDES"]), random);
    if (random.chance(0.5)) return `${path.path} ${op} ${literalFor("multipicklist", random)}`;
    const values = Array.from({ length: 1 + random.int(3) }, () => literalFor("multipicklist", random));
    return `${path.path} ${op} [${values.join(", ")}]`;
  }

  private fieldToField(object: ObjectDef, path: PathInfo): string {
    const random = this.random;
    const others = pathsOf(object, 1).filter((other) => other.valueClass === path.valueClass);
    const other = random.pick(others);
    const op = random.pick(path.valueClass === "boolean" ? ["==", "!="] : ORDERING);
    return `${path.path} ${op} ${other.path}`;
  }

  private subquery(path: PathInfo, depth: number): string {
    const random = this.random;
    const owners = testObject("Owners");
    const candidates = pathsOf(owners, 1).filter((other) => other.valueClass === path.valueClass);
    if (candidates.length === 0) return this.comparison(path);
    const select = random.pick(candidates).path;
    const where = random.chance(0.8)
      ? ` ${keyword("WHERE", random)} ${this.condition(owners, depth - 1)}`
      : "";
    const op = keyword(random.pick(["IN", "NOTIN"]), random);
    return `${path.path} ${op} (${keyword("SELECT", random)} ${select} ${keyword("FROM", random)} Owners${where})`;
  }
}
