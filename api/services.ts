/**
 * Opens what the API process and the admin tool both need from a validated
 * configuration: the store (the engine the configuration chooses, through the
 * store factory) and the auth service.
 */
import { join } from "node:path";
import type { SecretBox } from "../common/secret-box.ts";
import { openSecretBox, readOrCreateSecret } from "../common/secret-file.ts";
import { storeLocationOf } from "../common/store/store-location.ts";
import { type AuthService, createAuthService } from "./auth/auth-service.ts";
import { createTokenSigner } from "./auth/token-signer.ts";
import { type CatalogueService, createCatalogueService } from "./catalogue/catalogue-service.ts";
import type { ApiConfig } from "./config.ts";
import { type ConfigVarService, createConfigVarService } from "./config-vars/config-var-service.ts";
import { openStore } from "./store/open-store.ts";
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
  | "DATABASE_URL"
  | "DATABASE_POOL_SIZE"
  | "MONGODB_URL"
  | "TOKEN_CACHE_TTL_MS"
  | "TOKEN_REVOCATION_CHECK_MS"
  | "TENANT_CACHE_SIZE"
  | "CUSTOM_MAX_FIELDS_PER_OBJECT"
  | "FEED_PARTITIONS"
> &
  // The admin tool sets no statement time limit (a store copy's reads may rightly run long).
  Partial<Pick<ApiConfig, "STORE_STATEMENT_TIMEOUT_MS">>;

/**
 * @throws ConfigError when the configuration chooses an engine that is not available, or change-feed
 * partitions the store cannot have (FEED_PARTITIONS).
 */
export async function openCoreServices(config: Readonly<CoreConfig>): Promise<CoreServices> {
  const store = await openStore(storeLocationOf(config), { feedPartitions: config.FEED_PARTITIONS });
  const secret = config.JWT_SECRET ?? readOrCreateSecret(join(config.DATA_DIR, "jwt-secret"));
  const auth = createAuthService({
    store,
    signer: createTokenSigner(secret),
    cacheTtlMs: config.TOKEN_CACHE_TTL_MS,
    revocationCheckMs: config.TOKEN_REVOCATION_CHECK_MS,
  });
  const catalogues = createCatalogueService({
    store,
    cacheSize: config.TENANT_CACHE_SIZE,
    limits: { maxFieldsPerObject: config.CUSTOM_MAX_FIELDS_PER_OBJECT },
  });
  const box = openSecretBox(config);
  const configVars = createConfigVarService(store, box);
  return { store, auth, catalogues, configVars, box };
}
