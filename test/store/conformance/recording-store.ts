/**
 * Instrumentation, not a mock: a real store behind a proxy that notes the
 * name of every port member called (on the store, and on the writer each
 * unit of work hands out), so the suite can tell which members it never ran.
 */
import type { Store } from "../../../api/store/store.ts";

/** `store`, noting in `called` each member called (and `engine` when read). */
export function recordingStore(store: Store, called: Set<string>): Store {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, member, receiver) {
        const value = Reflect.get(object, member, receiver);
        if (typeof member !== "string") return value;
        if (typeof value !== "function") {
          if (member === "engine") called.add(member);
          return value;
        }
        return (...args: unknown[]) => {
          called.add(member);
          if (member === "unitOfWork") {
            const work = args[0] as (tx: object) => Promise<unknown>;
            return value.call(object, (tx: object) => work(wrap(tx)));
          }
          return value.apply(object, args);
        };
      },
    });
  return wrap(store);
}
