/**
 * Parse Server as the comparison runs it (a process of its own, under Node.js, its
 * supported runtime): PostgreSQL storage adapter (DATABASE_URL), REST at /parse and
 * GraphQL at /graphql on http://127.0.0.1:PORT, logging off (silent, level error,
 * no log files), Cloud Code calls in-process (directAccess). Modules come from
 * PEERS_DIR (bench/.peers), never from the service's node_modules.
 */
import { createRequire } from "node:module";

const require = createRequire(`${process.env.PEERS_DIR}/package.json`);
const { ParseServer } = require("parse-server");

const port = Number(process.env.PORT);

/**
 * Parse has no upsert; a Cloud Code function is its way to add one (callable from
 * GraphQL as `callCloudCode(input: {functionName: upsertAccount, params})`).
 */
function defineCloudCode(Parse) {
  Parse.Cloud.define("upsertAccount", async (request) => {
    const { externalId, name } = request.params;
    const found = await new Parse.Query("Account")
      .equalTo("externalId", externalId)
      .first({ useMasterKey: true });
    const account = found ?? new Parse.Object("Account");
    account.set({ externalId, name });
    await account.save(null, { useMasterKey: true });
    return account.id;
  });
}

await ParseServer.startApp({
  appId: process.env.APP_ID,
  masterKey: process.env.MASTER_KEY,
  databaseURI: process.env.DATABASE_URL,
  port,
  host: "127.0.0.1",
  serverURL: `http://127.0.0.1:${port}/parse`,
  mountPath: "/parse",
  mountGraphQL: true,
  graphQLPath: "/graphql",
  directAccess: true,
  silent: true,
  logLevel: "error",
  logsFolder: null,
  verbose: false,
  cloud: defineCloudCode,
});
console.log(`Parse Server listening on ${port}`);
