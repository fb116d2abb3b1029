/**
 * A parsed subscription's selection → what is wrong with its size. Every
 * selected member is written into every delivery's every element, so aliases
 * multiply a body without adding information (1,600 aliases of one textarea
 * made a 7.4 MB body per change). Checked when a definition is written, not
 * when a stored one is compiled: a webhook stored before the bound keeps
 * firing. Pure.
 */
import type { ErrorDetail } from "../../common/errors.ts";
import { memberName } from "../model/member-name.ts";
import type { Member, Subscription } from "./subscription.ts";

/** Response keys shown in a message before it says "…". */
const KEYS_SHOWN = 3;

/**
 * The problems of `subscription`'s selection, at path `query`: more than `maxFields` fields
 * under `data` and `previous` together; a record field selected under two keys of one of them;
 * a member of the event (`operation`, `timestamp`, `data`, `previous`) selected under two keys.
 * The same field in `data` and in `previous` is one value each, not a repeat.
 */
export function selectionProblems(subscription: Subscription, maxFields: number): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const problem = (message: string) => details.push({ path: "query", message });
  const sections = subscription.members.filter(
    (member): member is Extract<Member, { fields: unknown }> => "fields" in member,
  );
  const selected = sections.reduce((count, section) => count + section.fields.length, 0);
  if (selected > maxFields)
    problem(
      `the subscription selects ${selected} fields under data and previous; at most ${maxFields} are allowed`,
    );
  for (const [kind, members] of Map.groupBy(subscription.members, (member) => member.kind)) {
    if (members.length > 1)
      problem(`${kind} is selected ${members.length} times (as ${keyList(members)}); select it once`);
  }
  const fieldsByName = new Map(subscription.object.fields.map((field) => [field.name, field]));
  for (const section of sections) {
    for (const [name, keys] of Map.groupBy(section.fields, (f) => f.field)) {
      // Named as the client wrote it: `RegionId`, not the field `Region`.
      const field = fieldsByName.get(name);
      const written = field ? memberName(field) : name;
      if (keys.length > 1)
        problem(
          `${section.kind} selects ${written} ${keys.length} times (as ${keyList(keys)}); select each field once`,
        );
    }
  }
  return details;
}

/** `a, b, c, …`: the first few response keys. */
function keyList(selections: readonly { key: string }[]): string {
  const shown = selections.slice(0, KEYS_SHOWN).map((selection) => selection.key);
  return selections.length > KEYS_SHOWN ? `${shown.join(", ")}, …` : shown.join(", ");
}
