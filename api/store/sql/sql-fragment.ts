/**
 * SQL text assembled from pieces, each carrying the values of its `?`s in
 * textual order, so a piece can be placed anywhere and the finished
 * statement's values still line up (the dialect numbers them last).
 */
import type { Slot } from "../read-tree.ts";

/** A bound value: a slot's (given per request) or a constant (a filter's). */
export type Param<V> = { slot: Slot } | { value: V };

/** SQL text and the values of its `?`s, in order. */
export class Frag<V = unknown> {
  constructor(
    readonly text: string,
    readonly params: readonly Param<V>[] = [],
  ) {}
}

/** Text and fragments joined, the fragments' values in the order they appear. */
export function sql<V>(strings: TemplateStringsArray, ...parts: (Frag<V> | string)[]): Frag<V> {
  let text = strings[0] as string;
  const params: Param<V>[] = [];
  parts.forEach((part, i) => {
    if (part instanceof Frag) {
      text += part.text;
      params.push(...part.params);
    } else text += part;
    text += strings[i + 1] as string;
  });
  return new Frag(text, params);
}

/** Fragments joined by `separator`, their values in order. */
export function joined<V>(frags: readonly Frag<V>[], separator: string): Frag<V> {
  return new Frag(
    frags.map((frag) => frag.text).join(separator),
    frags.flatMap((frag) => frag.params),
  );
}

/** A string literal (keys and constants of a read tree come from the schema, never from requests). */
export const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
