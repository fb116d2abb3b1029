/** Values written as EQL literal text in the many forms the grammar allows, for generated filters. */
import type { Random } from "./prng.ts";

/** A string literal: single or double quotes, backslashes and the quote escaped. */
export function quoted(value: string, random: Random): string {
  const quote = random.chance(0.5) ? "'" : '"';
  return quote + value.replaceAll("\\", "\\\\").replaceAll(quote, `\\${quote}`) + quote;
}

/** A keyword in random letter case. */
export function keyword(word: string, random: Random): string {
  const roll = random.int(3);
  return roll === 0 ? word : roll === 1 ? word.toLowerCase() : word[0] + word.slice(1).toLowerCase();
}

/** An instant, unquoted or quoted, in UTC or with an offset. */
export function instantText(ms: number, random: Random): string {
  const offsets = [0, 120, -330];
  const minutes = random.pick(offsets);
  const shifted = new Date(ms + minutes * 60_000).toISOString();
  let text = new Date(ms).toISOString();
  if (minutes !== 0 && /^\d{4}-/.test(shifted)) {
    const sign = minutes > 0 ? "+" : "-";
    const abs = Math.abs(minutes);
    text = `${shifted.slice(0, -1)}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  }
  return random.chance(0.2) ? quoted(text, random) : text;
}

/** A stored time (`HH:MM:SS.sss`) written short when it can be. */
export function timeText(time: string, random: Random): string {
  let text = time;
  if (time.endsWith(":00.000") && random.chance(0.5)) text = time.slice(0, 5);
  else if (time.endsWith(".000") && random.chance(0.5)) text = time.slice(0, 8);
  return random.chance(0.2) ? quoted(text, random) : text;
}

/** A decimal (canonical text) written with superfluous zeros, quoted, or as is. */
export function decimalText(decimal: string, random: Random): string {
  let text = decimal;
  if (random.chance(0.3)) text = decimal.includes(".") ? `${decimal}0` : `${decimal}.00`;
  if (random.chance(0.2)) text = text.replace(/^(-?)/, "$10");
  return random.chance(0.2) ? quoted(text, random) : text;
}

/** Minutes as a number or a duration literal. */
export function minutesText(minutes: number, random: Random): string {
  const forms: string[] = [
    String(minutes),
    `${minutes} minutes`,
    `duration(${minutes} minute)`,
    `${minutes * 60} seconds`,
  ];
  if (minutes % 60 === 0) forms.push(`${minutes / 60} hours`, `${minutes / 60} HOUR`);
  if (minutes % 1440 === 0) forms.push(`duration(${minutes / 1440} days)`);
  return random.pick(forms);
}

/**
 * A LIKE pattern matching `text` or near it: some characters become `_`, some
 * runs `%`, ASCII letters change case, literal wildcards are escaped (or not).
 */
export function likePattern(text: string, random: Random): string {
  let pattern = random.chance(0.3) ? "%" : "";
  for (const ch of text) {
    const roll = random.next();
    if (roll < 0.12) pattern += "_";
    else if (roll < 0.2) pattern += "%";
    else if ("%_\\".includes(ch)) pattern += random.chance(0.8) ? `\\${ch}` : ch;
    else if (roll < 0.25) pattern += `\\${ch}`;
    else pattern += random.chance(0.3) ? (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()) : ch;
  }
  if (random.chance(0.3)) pattern += random.pick(["%", "_", "x"]);
  return quoted(pattern, random);
}
