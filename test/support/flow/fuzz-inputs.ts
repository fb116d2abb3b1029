/**
 * Hostile inputs for the fuzz scenario, from a seeded generator: random and
 * mutated JSON, EQL filters (grammatical, mutated, huge, deeply nested),
 * GraphQL documents over the tenant's real objects and arguments, path
 * segments and headers. Pure: a random source in, inputs out.
 */

export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;
const int = (random: Random, max: number) => Math.floor(random() * max);

/** Strings a parser or a store may choke on. */
export function nastyString(random: Random): string {
  switch (int(random, 14)) {
    case 0:
      return "";
    case 1:
      return "x".repeat(pick(random, [256, 4096, 70_000, 300_000]));
    case 2:
      return `'"\\\`$\{}%_*?`;
    case 3:
      return "\u0000\u0001\u001f\u007f";
    case 4:
      return "\ud800"; // a lone surrogate
    case 5:
      return "🦄".repeat(int(random, 300));
    case 6:
      return "'; DROP TABLE records; --";
    case 7:
      return "../../etc/passwd";
    case 8:
      return "%00%2e%2e%2f%ff";
    case 9:
      return "__proto__";
    case 10:
      return "constructor";
    case 11:
      return String(random() * 1e308);
    case 12:
      return "{{ SECRET }}";
    default:
      return Math.random()
        .toString(36)
        .repeat(int(random, 5) + 1);
  }
}

/** Any JSON value, nested up to `depth`. */
export function randomJson(random: Random, depth = 3): unknown {
  const kind = int(random, depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick(random, [0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MIN_VALUE]);
    case 3:
    case 4:
      return nastyString(random);
    case 5:
      return pick(random, ["INSERT", "2024-05-01T10:00:00Z", "10:00", "2024-02-30", "whsec_x", "graphql"]);
    case 6:
    case 7:
      return Array.from({ length: int(random, 5) }, () => randomJson(random, depth - 1));
    default:
      return Object.fromEntries(
        Array.from({ length: int(random, 5) }, () => [
          pick(random, [
            "name",
            "type",
            "query",
            "fields",
            "column",
            "__proto__",
            "constructor",
            nastyString(random),
          ]),
          randomJson(random, depth - 1),
        ]),
      );
  }
}

/** JSON text nested `depth` levels (arrays or objects). */
export function deepJson(depth: number, random: Random): string {
  return random() < 0.5
    ? `${"[".repeat(depth)}1${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** A valid body with one part changed: a field dropped, retyped, made huge or nested deep. */
export function mutateValue(random: Random, value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > 4 || random() < 0.25) {
    return random() < 0.5 ? randomJson(random, 2) : value;
  }
  if (Array.isArray(value)) {
    const copy = [...value];
    if (copy.length > 0 && random() < 0.7) {
      const at = int(random, copy.length);
      copy[at] = mutateValue(random, copy[at], depth + 1);
    } else copy.push(randomJson(random, 2));
    return copy;
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  const key = keys.length > 0 ? pick(random, keys) : "x";
  const roll = random();
  if (roll < 0.2) delete copy[key];
  else if (roll < 0.3) copy[nastyString(random)] = randomJson(random, 2);
  else copy[key] = mutateValue(random, copy[key], depth + 1);
  return copy;
}

const OPERATORS = [
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "LIKE",
  "NOTLIKE",
  "IN",
  "NOTIN",
  "INCLUDES",
  "EXCLUDES",
];
const LITERALS = [
  "'text'",
  '"text"',
  "'it\\'s'",
  "42",
  "-1.5",
  "1e400",
  "true",
  "false",
  "null",
  "2024-05-01T10:00:00Z",
  "2024-05-01T10:00:00.000+02:00",
  "2024-05-01",
  "10:00",
  "90 minutes",
  "duration(3 hours)",
  "NOW()",
  "NOW() - 2d",
  "NOW() + 99999999999d",
  "['a', 'b']",
  "(1, 2, 3)",
  "[]",
  "'%_\\\\'",
];

/** An EQL filter over `fields`: grammatical or near it, sometimes mutated, sometimes pathological. */
export function randomFilter(random: Random, fields: readonly string[], objects: readonly string[]): string {
  const roll = random();
  if (roll < 0.04) return `${"(".repeat(pick(random, [100, 3000, 50_000]))}UID == 'x'${")".repeat(3000)}`;
  if (roll < 0.08) return `${"NOT ".repeat(pick(random, [100, 5000, 50_000]))}UID == 'x'`;
  if (roll < 0.1) return Array.from({ length: pick(random, [500, 5000]) }, () => "UID == 'x'").join(" OR ");
  if (roll < 0.12)
    return `UID IN [${Array.from({ length: pick(random, [1000, 40_000]) }, (_, i) => `'${i}'`).join(",")}]`;
  if (roll < 0.15) return nastyString(random);
  const comparison = (): string => {
    const field = random() < 0.9 ? pick(random, fields) : nastyString(random).slice(0, 40);
    const path = random() < 0.2 ? `${field}.${pick(random, fields)}` : field;
    if (random() < 0.1) {
      const object = pick(random, objects);
      return `${path} IN (SELECT ${pick(random, fields)} FROM ${object} WHERE ${pick(random, fields)} != null)`;
    }
    const right = random() < 0.15 ? pick(random, fields) : pick(random, LITERALS);
    return `${path} ${pick(random, OPERATORS)} ${right}`;
  };
  const expression = (depth: number): string => {
    if (depth === 0 || random() < 0.4) return comparison();
    const join = pick(random, [" AND ", " OR ", " and ", " oR "]);
    const inner = `${expression(depth - 1)}${join}${expression(depth - 1)}`;
    return random() < 0.3 ? `${random() < 0.5 ? "NOT " : ""}(${inner})` : inner;
  };
  const text = expression(3);
  return random() < 0.3 ? mutateText(random, text) : text;
}

/** The text with a character inserted, a span cut or doubled, or a quote flipped. */
export function mutateText(random: Random, text: string): string {
  const at = int(random, text.length + 1);
  switch (int(random, 4)) {
    case 0:
      return (
        text.slice(0, at) +
        pick(random, ["'", '"', "(", ")", "\\", "[", "]", ",", ".", " ", "\u0000", "é"]) +
        text.slice(at)
      );
    case 1:
      return text.slice(0, at) + text.slice(at + int(random, 10));
    case 2:
      return text.slice(0, at) + text.slice(Math.max(0, at - 8), at) + text.slice(at);
    default:
      return text.replace(/'/, '"');
  }
}

/** A GraphQL literal for an argument: right or wrong type, huge, or nested. */
export function graphqlValue(random: Random): string {
  return pick(random, [
    "1",
    "-1",
    "0",
    "201",
    "2147483648",
    "1e400",
    "true",
    "null",
    '"x"',
    JSON.stringify(nastyString(random)),
    "[1, 2]",
    "{a: 1}",
    '"2024-13-45T99:99:99Z"',
    "$undefinedVariable",
    "ENUM_VALUE",
  ]);
}

/** A selection nested `depth` levels through a reference and back, as a depth-limit probe. */
export function deepSelection(depth: number, lookup: string, reverse: string): string {
  let selection = "UID";
  for (let i = 0; i < depth; i++) selection = `${i % 2 === 0 ? lookup : reverse} { ${selection} }`;
  return selection;
}
