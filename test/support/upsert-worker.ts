/**
 * A separate process for concurrency tests: opens the same store (DATA_DIR) and
 * sends GraphQL upserts through its own in-process app, as a second API would.
 * argv: <token> <keys (comma-separated)> <rounds>. Prints the number of successful mutations
 * (one answered UNAVAILABLE is sent again, up to 10 times).
 */

import { loadApiConfig } from "../../api/config.ts";
import { createApiRuntime } from "../../api/runtime.ts";
import { openCoreServices } from "../../api/services.ts";
import { createLogger } from "../../common/log.ts";
import { connectRedis } from "../../common/redis.ts";

const [token = "", keyList = "", rounds = "1"] = process.argv.slice(2);
const config = loadApiConfig(process.env);
const services = await openCoreServices(config);
const redis = connectRedis(config.REDIS_URL, () => undefined);
const runtime = createApiRuntime(config, services, redis, createLogger("error"));
const { app } = runtime;
const keys = keyList.split(",");
let ok = 0;
for (let round = 0; round < Number(rounds); round++) {
  const ops = keys
    .map(
      (key, i) =>
        `k${i}: upsertCustomExternalObject(input: {ExternalId: "${key}", Note: "${process.pid}-${round}"}, keyField: "ExternalId")`,
    )
    .join("\n");
  // A mutation answered UNAVAILABLE (PostgreSQL: it could not serialize in 20 runs beside the
  // others) wrote nothing, and is sent again as its message advises a client to.
  for (let attempt = 1; ; attempt++) {
    const response = await app.handle(
      new Request("http://worker/graphql/graphql", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ query: `mutation { schema { ${ops} } }` }),
      }),
    );
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
    if (!body.errors) ok++;
    const unavailable = body.errors?.every((error) => error.extensions?.code === "UNAVAILABLE");
    if (!unavailable || attempt === 10) break;
    await Bun.sleep(10 + Math.random() * 40);
  }
}
console.log(ok);
await runtime.stop();
redis.disconnect();
await services.store.close();
// As the service's entry points end (api/main.ts): on PostgreSQL something of Bun's client outlives the
// closed pool and would keep this process alive (not found yet; closing the pool alone exits elsewhere).
process.exit(0);
