/**
 * What build is running, for `GET /version` and the `build_info` metric: the package's version,
 * the git commit (GIT_COMMIT as the deployment set it, else the checkout's HEAD read once at
 * start, else unknown) and the Bun version.
 */
import { join } from "node:path";
import packageJson from "../package.json" with { type: "json" };

export interface BuildInfo {
  version: string;
  /** Full hex commit id; null when not known. */
  commit: string | null;
  bun: string;
}

const ROOT = join(import.meta.dir, "..");

let headCommit: string | null | undefined;

/** The checkout's HEAD commit, or null (no git, not a checkout): one `git rev-parse`, the first time asked. */
function checkoutCommit(): string | null {
  headCommit ??= readHead();
  return headCommit;
}

function readHead(): string | null {
  try {
    const result = Bun.spawnSync(["git", "rev-parse", "--verify", "HEAD"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "ignore",
    });
    const text = result.stdout.toString().trim();
    return result.exitCode === 0 && /^[0-9a-f]{40,64}$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/** The running build; `commit` (GIT_COMMIT from the configuration) wins over the checkout's HEAD (~30 ms to read, once). */
export function readBuildInfo(commit?: string): BuildInfo {
  return { version: packageJson.version, commit: commit ?? checkoutCommit(), bun: Bun.version };
}
