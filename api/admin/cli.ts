/**
 * The admin command-line tool (`npm run admin -- <command>`): opens the store
 * the environment chooses (DATA_DIR, DATABASE_URL, MONGODB_URL with STORE_EXPERIMENTAL, as the API
 * does), runs one command, prints its lines. `copy-store` opens the two stores its arguments name
 * instead, and writes its progress to stderr.
 */
import { isAppError } from "../../common/errors.ts";
import { loadConfig } from "../../common/load-config.ts";
import { ApiConfigSchema } from "../config.ts";
import { openCoreServices } from "../services.ts";
import { runAdminCommand } from "./admin-commands.ts";
import { runCopyStoreCommand } from "./copy-store-command.ts";

const AdminConfigSchema = ApiConfigSchema.pick({
  DATA_DIR: true,
  JWT_SECRET: true,
  SECRETS_KEY: true,
  DATABASE_URL: true,
  DATABASE_POOL_SIZE: true,
  MONGODB_URL: true,
  STORE_EXPERIMENTAL: true,
  TOKEN_CACHE_TTL_MS: true,
  TOKEN_REVOCATION_CHECK_MS: true,
  TENANT_CACHE_SIZE: true,
  CUSTOM_MAX_FIELDS_PER_OBJECT: true,
});

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  if (command === "copy-store") {
    for (const line of await runCopyStoreCommand(rest, (line) => console.error(line))) console.log(line);
    return 0;
  }
  const services = await openCoreServices(loadConfig(AdminConfigSchema, process.env));
  try {
    for (const line of await runAdminCommand(process.argv.slice(2), services)) console.log(line);
    return 0;
  } finally {
    await services.store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? `admin: ${error.message}` : error);
    for (const detail of (isAppError(error) && error.details) || [])
      console.error(`  ${detail.path}: ${detail.message}`);
    process.exit(isAppError(error) ? 2 : 1);
  },
);
