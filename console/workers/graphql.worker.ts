/** The GraphQL language worker (completion, validation against the schema), an entry of the console's build. */
import "monaco-graphql/esm/graphql.worker.js";
