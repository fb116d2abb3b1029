/**
 * Which partitions of the change log an API process reads: a view of the
 * cluster in (the live processes, each partition's lease holder), the leases
 * this process should take and give up out. Pure; partitioned-feed.ts runs it
 * every round against Redis.
 *
 * The scheme, and why it holds:
 * - **At most one reader per partition** comes from the leases alone, not from
 *   this plan: a reader reads only while its process holds the partition's
 *   Redis lease, and a key has one holder (feed-lease.ts). A plan made on a
 *   stale view can only fail to take a lease, never share one.
 * - **No process reads more than its share**: with N live processes the share
 *   is q = ⌈P / N⌉; a process holding more gives the excess up (after its
 *   readers saved their positions), and takes only while it holds fewer.
 * - **Every partition is read while a process lives**: N·q ≥ P, so while a
 *   partition is free some process holds fewer than q, and takes a free one at
 *   its next round. Nothing is taken above the share and nothing given up at
 *   or below it, so once the live set is steady, holdings only move towards
 *   the shares: no partition is passed back and forth.
 * - **A dead process's partitions move** once its leases lapse: its heartbeat
 *   lapses before them (partitioned-feed.ts), the others' shares then cover
 *   P, and they take the free leases at their next round.
 * Each process prefers the partitions it ranks first on by rendezvous hashing
 * (process × partition), so processes starting together mostly ask for
 * different leases, and a restarted process tends to get its old ones back.
 */

/** What a process knows of the cluster at the start of a round. */
export interface AssignmentView {
  /** P, the change log's partitions. */
  partitions: number;
  /** The live API processes (as their heartbeats list them); `self` counts whether listed or not. */
  members: readonly string[];
  self: string;
  /** Each partition's lease holder, by partition; null when the lease is free. */
  holders: readonly (string | null)[];
}

/** What this process does with the leases in this round. */
export interface AssignmentMoves {
  /** Free partitions to take, most preferred first. */
  take: number[];
  /** Partitions held here to give up, least preferred first. */
  release: number[];
}

/** The most partitions one of `members` live processes reads: ⌈P / N⌉. */
export function shareOf(partitions: number, members: number): number {
  return Math.ceil(partitions / Math.max(1, members));
}

/** FNV-1a of `text`: a stable, spread score every process computes alike. */
function score(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** How many of `members` rank above `self` for `partition` (0: its first choice). */
function rankOf(self: string, members: readonly string[], partition: number): number {
  const mine = score(`${self}/${partition}`);
  return members.filter((member) => member !== self && score(`${member}/${partition}`) > mine).length;
}

/** The moves of one round for `view.self`. */
export function planAssignment(view: AssignmentView): AssignmentMoves {
  const { partitions, self, holders } = view;
  const members = [...new Set([...view.members, self])];
  const share = shareOf(partitions, members.length);
  const all = Array.from({ length: partitions }, (_, p) => p);
  const rank = new Map(all.map((p) => [p, rankOf(self, members, p)]));
  const byPreference = (a: number, b: number) => (rank.get(a) ?? 0) - (rank.get(b) ?? 0) || a - b;
  const held = all.filter((p) => holders[p] === self);
  if (held.length > share)
    return {
      take: [],
      release: held
        .sort(byPreference)
        .reverse()
        .slice(0, held.length - share),
    };
  const free = all.filter((p) => (holders[p] ?? null) === null);
  return { take: free.sort(byPreference).slice(0, share - held.length), release: [] };
}
