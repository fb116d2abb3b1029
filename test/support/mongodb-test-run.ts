/**
 * Whether this run reaches a MongoDB replica set: MONGODB_TEST_URL names one,
 * or the MongoDB runs are skipped, and say so in one plain line (the
 * conformance suite, and the gate's summary: scripts/check.ts). No MongoDB
 * server can be started by the tests: there is none to install here.
 */

/** Why the MongoDB runs did not happen, in one line. */
export const MONGODB_SKIPPED =
  "skipped: MONGODB_TEST_URL is not set, and no MongoDB server can be started here; the MongoDB engine was not tested against a server in this run";

/** The replica set the MongoDB runs use (`mongodb://…/?replicaSet=…`), or null when they are skipped. */
export function mongodbTestUrl(env: Record<string, string | undefined> = process.env): string | null {
  return env.MONGODB_TEST_URL || null;
}
