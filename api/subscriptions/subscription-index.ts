/**
 * Subscriptions held for matching, indexed so that a change is tested only against those that can
 * fire on it: changes in → the subscribers worth giving to `matchChanges`, in the order they were
 * added. A subscription whose filters pin a field (pinned-values.ts) is filed under its object, that
 * field and each pinned value; the rest go in their object's scan list. Finding the candidates of
 * a change costs one map look-up per pinned field of its object plus the hits and the scan list,
 * not one filter test per subscription. In memory, no I/O.
 *
 * The candidates are a superset of the subscribers some change fires (matchChanges decides): the
 * index reads each pinned field from the values the filter will be tested on, as match-changes.ts
 * does — a plain filter the change's new values (the last ones for a DELETE), `Current.` the new
 * values, `Previous.` the old ones.
 */
import type { ScalarValue, ValueClass } from "../eql/checked-filter.ts";
import { comparable } from "../eql/compare-values.ts";
import type { ChangeEntry, RecordValues } from "../model/record-values.ts";
import { type PinnedField, type PinnedRoot, pinnedValues } from "./pinned-values.ts";
import type { Subscription } from "./subscription.ts";

/** The subscribers of one pinned field of one object, by pinned value. */
interface PinTable<S> {
  root: PinnedRoot;
  field: string;
  valueClass: ValueClass;
  byValue: Map<ScalarValue, Set<S>>;
}

interface ObjectTable<S> {
  scan: Set<S>;
  pins: Map<string, PinTable<S>>;
}

/** Where a subscriber was filed, to take it out again. */
interface Placement {
  object: string;
  pin: { key: string; values: ScalarValue[] } | null;
}

/**
 * The pin to file a subscription under: the one with the fewest values (fewest entries, most
 * selective), from either filter, since a match needs both filters to hold; null for none.
 */
function choosePin(subscription: Subscription): PinnedField | null {
  const pins = [subscription.filter, subscription.extendedFilter].flatMap((filter) =>
    filter ? pinnedValues(filter) : [],
  );
  return pins.reduce<PinnedField | null>(
    (best, pin) => (best === null || pin.values.length < best.values.length ? pin : best),
    null,
  );
}

/** The values a filter term on `root` is tested against for `change` (match-changes.ts). */
function valuesRead(root: PinnedRoot, change: ChangeEntry): RecordValues | null {
  if (root === "current") return change.after;
  if (root === "previous") return change.before;
  return change.after ?? change.before;
}

export type SubscriptionIndex<S extends { subscription: Subscription }> = ReturnType<
  typeof createSubscriptionIndex<S>
>;

/** An empty index of subscribers (anything holding a subscription; compared by identity). */
export function createSubscriptionIndex<S extends { subscription: Subscription }>() {
  const objects = new Map<string, ObjectTable<S>>();
  // Insertion order is the subscribers' order: candidates are returned in it.
  const order = new Map<S, number>();
  const placements = new Map<S, Placement>();
  let next = 0;

  function tableOf(object: string): ObjectTable<S> {
    let table = objects.get(object);
    if (!table) {
      table = { scan: new Set(), pins: new Map() };
      objects.set(object, table);
    }
    return table;
  }

  function remove(subscriber: S): void {
    const placement = placements.get(subscriber);
    if (!placement) return;
    placements.delete(subscriber);
    order.delete(subscriber);
    const table = objects.get(placement.object);
    if (!table) return;
    if (!placement.pin) table.scan.delete(subscriber);
    else {
      const pinTable = table.pins.get(placement.pin.key);
      for (const value of placement.pin.values) {
        const held = pinTable?.byValue.get(value);
        held?.delete(subscriber);
        if (held?.size === 0) pinTable?.byValue.delete(value);
      }
      if (pinTable?.byValue.size === 0) table.pins.delete(placement.pin.key);
    }
    if (table.scan.size === 0 && table.pins.size === 0) objects.delete(placement.object);
  }

  /** Adds the subscribers a change fires, or may fire, to `found`. */
  function collect(change: ChangeEntry, table: ObjectTable<S>, found: Set<S>): void {
    for (const pin of table.pins.values()) {
      const value = comparable(valuesRead(pin.root, change)?.[pin.field] ?? null, pin.valueClass);
      // Absent: `==` is unknown and `IN` (without null) too, so no pinned subscriber fires.
      if (value === null) continue;
      // compare-values.ts orders NaN equal to every number: `==` would hold for each pinned value.
      if (typeof value === "number" && Number.isNaN(value)) {
        for (const held of pin.byValue.values()) for (const subscriber of held) found.add(subscriber);
        continue;
      }
      for (const subscriber of pin.byValue.get(value) ?? []) found.add(subscriber);
    }
  }

  return {
    /** Files a subscriber (again, at the end of the order, if it was held). */
    add(subscriber: S): void {
      remove(subscriber);
      const { subscription } = subscriber;
      const table = tableOf(subscription.object.name);
      const pin = choosePin(subscription);
      order.set(subscriber, next++);
      if (!pin) {
        table.scan.add(subscriber);
        placements.set(subscriber, { object: subscription.object.name, pin: null });
        return;
      }
      const key = `${pin.root}\u0000${pin.field}\u0000${pin.valueClass}`;
      let pinTable = table.pins.get(key);
      if (!pinTable) {
        pinTable = { root: pin.root, field: pin.field, valueClass: pin.valueClass, byValue: new Map() };
        table.pins.set(key, pinTable);
      }
      for (const value of pin.values) {
        const held = pinTable.byValue.get(value) ?? new Set<S>();
        held.add(subscriber);
        pinTable.byValue.set(value, held);
      }
      placements.set(subscriber, { object: subscription.object.name, pin: { key, values: pin.values } });
    },
    /** Takes a subscriber out (idempotent). */
    remove,
    size: (): number => order.size,
    /** Every subscriber held, in the order added. */
    all: (): S[] => [...order.keys()],
    /**
     * The subscribers some change of `changes` may fire, in the order added: every one a change
     * fires is among them (matchChanges over them gives what it gives over `all()`).
     */
    candidates(changes: readonly ChangeEntry[]): S[] {
      const found = new Set<S>();
      const scanned = new Set<ObjectTable<S>>();
      for (const change of changes) {
        const table = objects.get(change.objectName);
        if (!table) continue;
        if (!scanned.has(table)) {
          scanned.add(table);
          for (const subscriber of table.scan) found.add(subscriber);
        }
        collect(change, table, found);
      }
      if (found.size === order.size) return [...order.keys()];
      return [...found].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    },
  };
}
