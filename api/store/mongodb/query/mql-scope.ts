/**
 * One pipeline's records and what has been joined to them: the lookup paths (`Owner.Region.Name`)
 * the filter and the order read, each reference followed once by a `$lookup` stage that puts the
 * target record (or nothing) in a temporary top-level field, and the names of the pipeline's other
 * temporaries. Lookup paths are joined in the pipeline, not resolved beforehand into lists of
 * UIDs: an order by `Region.Name` needs the joined value per record anyway, a join reads one
 * target per record through the target's UID index, and a pre-resolved `Region.Name != 'x'` would
 * be a list of nearly every region. A record's UID is read at the layout's `uidPath` (indexed),
 * every other field in the values sub-document.
 */
import type { Document } from "mongodb";
import type { FieldOperand } from "../../../eql/checked-filter.ts";
import type { ObjectDef } from "../../../model/catalogue.ts";
import { comparableKey, valueKey } from "../record-codec.ts";
import { type MqlLayout, TEMPORARY_PREFIX } from "./mql-layout.ts";

/** What all scopes of one compilation share: the layout, NOW() and the temporaries' counter. */
export class MqlCompilation {
  private counter = 0;

  constructor(
    readonly layout: MqlLayout,
    /** The instant `NOW()` means, ms since the epoch. */
    readonly now: number,
  ) {}

  /** A fresh temporary field name, `_eql_<kind><n>`. */
  temporary(kind: string): string {
    return `${TEMPORARY_PREFIX}${kind}${++this.counter}`;
  }
}

/** The records of one pipeline (the listed object's, or a sub-query's) and their joins. */
export class MqlScope {
  /** Stages adding joined records and sub-query probes, in the order they must run. */
  readonly stages: Document[] = [];
  private readonly joins = new Map<string, string>();

  constructor(
    readonly object: ObjectDef,
    readonly compilation: MqlCompilation,
  ) {}

  get layout(): MqlLayout {
    return this.compilation.layout;
  }

  /** The path of a field's value (`"d.name"`) in a document at `base` (a joined field, or "" for the record). */
  fieldPath(base: string, key: string): string {
    return `${base ? `${base}.` : ""}${this.layout.valuesPath}.${key}`;
  }

  /** The field holding the record an operand's hops reach ("" for the record itself), joining what is not joined yet. */
  baseOf(operand: Pick<FieldOperand, "hops">): string {
    let base = "";
    let key = "";
    for (const { reference, target } of operand.hops) {
      key += `.${reference.name}`;
      let joined = this.joins.get(key);
      if (joined === undefined) {
        joined = this.compilation.temporary("j");
        this.stages.push(...this.joinStages(this.fieldPath(base, valueKey(reference)), target, joined));
        this.joins.set(key, joined);
      }
      base = joined;
    }
    return base;
  }

  /** The path EQL compares and orders an operand by (a decimal's shadow, a UID's path), through its joins. */
  comparablePath(operand: FieldOperand): string {
    const base = this.baseOf(operand);
    if (operand.field.type === "id") return base ? `${base}.${this.layout.uidPath}` : this.layout.uidPath;
    return this.fieldPath(base, comparableKey(operand.field));
  }

  /**
   * `$lookup` of the `target` record whose UID is at `referencePath`, left at `as` (absent when
   * none). The join matches the UID alone, `localField`/`foreignField` on `uidPath`: the form the
   * server runs as an index (or hash) join, without a sub-pipeline per record. It then keeps only
   * this tenant's record of `target` among the matches, so another tenant's or object's record with
   * the same UID is never read. Not a `let` + `$expr` sub-pipeline (one per record), and not
   * `localField`/`foreignField` with a `pipeline` (mingo runs that form wrongly, see
   * test/eql/support/mingo-divergences.ts), which the server would run as well.
   */
  private joinStages(referencePath: string, target: ObjectDef, as: string): Document[] {
    const lookup = {
      from: this.layout.collection(target),
      localField: referencePath,
      foreignField: this.layout.uidPath,
      as,
    };
    const inScope = Object.entries(this.layout.scope(target)).map(([key, value]) => ({
      $eq: [`$$joined.${key}`, { $literal: value }],
    }));
    const kept = { $filter: { input: `$${as}`, as: "joined", cond: { $and: inScope } } };
    return [{ $lookup: lookup }, { $set: { [as]: { $arrayElemAt: [kept, 0] } } }];
  }
}
