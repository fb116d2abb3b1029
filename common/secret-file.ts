/**
 * Secrets generated on first start and kept in the data directory (mode 0600),
 * so restarts keep verifying the tokens and decrypting what earlier runs made.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createSecretBox, type SecretBox } from "./secret-box.ts";

/** Returns the secret in `path`, creating it with `bytes` random bytes (base64url) when absent. */
export function readOrCreateSecret(path: string, bytes = 48): string {
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (existing.length > 0) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(dirname(path), { recursive: true });
  const secret = randomBytes(bytes).toString("base64url");
  // "wx" fails if another process created it meanwhile; then theirs wins.
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "wx" });
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readFileSync(path, "utf8").trim();
    throw error;
  }
}

/**
 * The secret box both processes seal and open secrets at rest with: keyed by SECRETS_KEY when
 * set, else by the key generated into `DATA_DIR/secrets-key` on first start.
 */
export function openSecretBox(settings: { SECRETS_KEY?: string | undefined; DATA_DIR: string }): SecretBox {
  return createSecretBox(settings.SECRETS_KEY ?? readOrCreateSecret(join(settings.DATA_DIR, "secrets-key")));
}
