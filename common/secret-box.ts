/**
 * Encryption at rest for secret values (config variables of type `secret`):
 * AES-256-GCM with a random 96-bit IV, bound to a context string (tenant and
 * name) so a ciphertext cannot be moved to another row. Output: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** @throws Error when the ciphertext was tampered with or sealed for another context or key. */
  open(sealed: string, context: string): string;
}

/** The context a config variable's secret value is sealed for (tenant and key). */
export const configSecretContext = (tenantId: string, key: string) => `config:${tenantId}:${key}`;

/** The context a webhook's signing secret is sealed for (tenant and webhook). */
export const webhookSecretContext = (tenantId: string, webhookId: string) =>
  `webhook:${tenantId}:${webhookId}`;

/** `keyMaterial`: any string
 of ≥ 32 characters; it is hashed to the 256-bit key. */
export function createSecretBox(keyMaterial: string): SecretBox {
  const key = createHash("sha256").update(keyMaterial).digest();
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(".");
    },
    open(sealed, context) {
      const [version, iv, ciphertext, tag] = sealed.split(".");
      if (version !== "v1" || iv === undefined || ciphertext === undefined || tag === undefined)
        throw new Error("not a sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, "base64url")),
        decipher.final(),
      ]).toString("utf8");
    },
  };
}
