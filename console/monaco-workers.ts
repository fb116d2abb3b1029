/**
 * Where GraphiQL's editor (Monaco) finds its web workers. The server builds them as entry points of
 * their own and names their hashed URLs in `CONSOLE_WORKERS` at build time (api/console/build-console.ts):
 * no CDN, nothing from outside this origin.
 */

declare const CONSOLE_WORKERS: { editor: string; json: string; graphql: string };

(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_workerId: string, label: string): Worker {
    const url = label === "json" || label === "graphql" ? CONSOLE_WORKERS[label] : CONSOLE_WORKERS.editor;
    return new Worker(url, { type: "module", name: label });
  },
};
