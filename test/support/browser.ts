/**
 * Headless Chromium for tests that drive a page as a person would: Debian's package
 * (`apt-get install chromium`, which scripts/setup.sh does for `npm test`), driven by playwright-core.
 * Never a browser download: this machine and CI reach no such host.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";

const CHROMIUM_PATH = "/usr/bin/chromium";

/** Why no browser test can run here, or null when Chromium is installed. */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} not found (apt-get install chromium)`;
}

/**
 * Launches Chromium headless. The flags keep it off the network it would otherwise call home on
 * (updates, field trials), which this machine refuses; --no-sandbox because tests run as root.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}

/** `.test-data/screenshots/<name>/` in the repository (gitignored), created if missing. */
export function screenshotDir(name: string): string {
  const dir = join(import.meta.dir, "../../.test-data/screenshots", name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
