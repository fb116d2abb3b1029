/**
 * PostGraphile v5 as the comparison runs it (a process of its own, under Bun):
 * the Amber preset plus the connection-filter plugin, on schema `app` of
 * DATABASE_URL, served by grafserv's Node adaptor at http://127.0.0.1:PORT/graphql.
 * Production settings: no GraphiQL, no watch mode, no EXPLAIN, default pg pool (10).
 * Modules come from PEERS_DIR (bench/.peers), never from the service's node_modules.
 */
import { createServer } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(`${process.env.PEERS_DIR}/package.json`);
const { postgraphile } = require("postgraphile");
const { PostGraphileAmberPreset } = require("postgraphile/presets/amber");
const { makePgService } = require("postgraphile/adaptors/pg");
const { grafserv } = require("postgraphile/grafserv/node");
const { PostGraphileConnectionFilterPreset } = require("postgraphile-plugin-connection-filter");

const port = Number(process.env.PORT);
const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
  // PostGraphile only offers filters on indexed columns by default; our service filters on any
  // field without an index, so the same filter is allowed here (and no extra index is created).
  disablePlugins: ["PgIndexBehaviorsPlugin"],
  pgServices: [makePgService({ connectionString: process.env.DATABASE_URL, schemas: ["app"] })],
  grafserv: { port, host: "127.0.0.1", graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
await serv.addTo(server);
server.listen({ port, host: "127.0.0.1" }, () => console.log(`PostGraphile listening on ${port}`));
process.on("SIGTERM", () => {
  server.close();
  void pgl.release().then(() => process.exit(0));
});
