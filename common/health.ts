/**
 * Liveness and readiness as both processes answer them. `/healthz`: the process runs and its
 * event loop answers (nothing else is asked: a dependency being down is no reason to restart it).
 * `/readyz`: every dependency it needs answers now, each within a deadline; the answer names them.
 */

/** A dependency check: true when it answers. A check that throws or passes the deadline is down. */
export type ReadinessChecks = Record<string, () => Promise<boolean>>;

export interface Readiness {
  ready: boolean;
  /** Each check by name: `ok` or `down`. */
  checks: Record<string, "ok" | "down">;
}

/** Longest a readiness check may take before it counts as down. */
const CHECK_TIMEOUT_MS = 1000;

/** Runs every check at once, each bounded by `timeoutMs`. */
export async function checkReadiness(
  checks: ReadinessChecks,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Readiness> {
  const names = Object.keys(checks);
  const results = await Promise.all(
    names.map((name) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const answer = Promise.resolve()
        .then(() => (checks[name] as () => Promise<boolean>)())
        .catch(() => false);
      return Promise.race([answer, late]).finally(() => clearTimeout(timer));
    }),
  );
  const named: Record<string, "ok" | "down"> = {};
  names.forEach((name, i) => {
    named[name] = results[i] === true ? "ok" : "down";
  });
  return { ready: results.every((result) => result === true), checks: named };
}

/** The `/readyz` answer of a readiness: 200 when ready, else 503. */
export function readinessResponse({ ready, checks }: Readiness): Response {
  return Response.json({ status: ready ? "ready" : "not_ready", checks }, { status: ready ? 200 : 503 });
}

/** The `/healthz` answer: the process runs. */
export function livenessResponse(): Response {
  return Response.json({ status: "ok" });
}
