/**
 * Opens what the API process and the admin tool both need from a validated
 * configuration: the store and the auth service. Picks the store engine.
 */
import { join } from "node:path";
import { ConfigError } from "../common/errors.ts";
import { createSecretBox, type SecretBox } from "../common/secret-box.ts";

import { readOrCreateSecret } from "../common/secret-file.ts";
import { type AuthService, createAuthService } from "./auth/auth-service.ts";
import { createTokenSigner } from "./auth/token-signer.ts";
import { type CatalogueService, createCatalogueService } from "./catalogue/catalogue-service.ts";
import type { ApiConfig } from "./config.ts";
import { type ConfigVarService, createConfigVarService } from "./config-vars/config-var-service.ts";
import { openSqliteStore } from "./store/sqlite/sqlite-store.ts";
import type { Store } from "./store/store.ts";

export interface CoreServices {
  store: Store;
  auth: AuthService;
  catalogues: CatalogueService;
  configVars: ConfigVarService;
  /** Seals and opens secrets at rest (config variables, webhook signing secrets). */
  box: SecretBox;
}

type CoreConfig = Pick<
  ApiConfig,
  | "DATA_DIR"
  | "JWT_SECRET"
  | "SECRETS_KEY"
  | "MONGODB_URL"
  | "TOKEN_CACHE_TTL_MS"
  | "TENANT_CACHE_SIZE"
  | "CUSTOM_MAX_FIELDS_PER_OBJECT"
>;

export function openCoreServices(config: Readonly<CoreConfig>): CoreServices {
  if (config.MONGODB_URL) {
    throw new ConfigError([
      "MONGODB_URL: the MongoDB engine is not available yet; unset it to use the embedded store",
    ]);
  }
  const store = openSqliteStore(join(config.DATA_DIR, "store.sqlite"));
  const secret = config.JWT_SECRET ?? readOrCreateSecret(join(config.DATA_DIR, "jwt-secret"));
  const auth = createAuthService({
    store,
    signer: createTokenSigner(secret),
    cacheTtlMs: config.TOKEN_CACHE_TTL_MS,
  });
  const catalogues = createCatalogueService({
    store,
    cacheSize: config.TENANT_CACHE_SIZE,
    limits: { maxFieldsPerObject: config.CUSTOM_MAX_FIELDS_PER_OBJECT },
  });
  const box = createSecretBox(config.SECRETS_KEY ?? readOrCreateSecret(join(config.DATA_DIR, "secrets-key")));
  const configVars = createConfigVarService(store, box);
  return { store, auth, catalogues, configVars, box };
}
