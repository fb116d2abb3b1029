/**
 * The browser console (console/) bundled by Bun.build into memory: its source folder in, a
 * ConsoleBundle out (the page and its assets, each with its content type, ETag and gzip copy).
 * Nothing is written to disk, so neither `npm start` nor a test run leaves build output behind.
 *
 * Two builds: Monaco's workers first (GraphiQL's editor runs its language services in them), then
 * the page, told the workers' URLs through the `CONSOLE_WORKERS` constant. Every script, style and
 * font is named with a hash of its content, so the routes may let browsers keep them for good.
 */
import { join } from "node:path";
import { type ConsoleFile, consoleFile } from "./console-file.ts";

/** Where the page is served, and under which prefix its assets are. */
export const CONSOLE_PATH = "/console";
export const CONSOLE_ASSETS_PATH = "/console/assets/";

export interface ConsoleBundle {
  /** index.html, naming its script and stylesheet by their hashed names. */
  page: ConsoleFile;
  /** By file name (`index-3f9ac1d2.js`): scripts, chunks loaded on demand, styles, fonts, workers. */
  assets: ReadonlyMap<string, ConsoleFile>;
}

const CONSOLE_DIR = join(import.meta.dir, "../../console");
const WORKERS = ["editor", "json", "graphql"] as const;

const COMMON = {
  target: "browser",
  format: "esm",
  minify: true,
  // React's production build: no development checks, a third of the size.
  define: { "process.env.NODE_ENV": '"production"' },
} as const;

/**
 * Builds the console from `sourceDir` (default: the repository's console/).
 * @throws Error with Bun's build messages when the source does not build.
 */
export async function buildConsole(sourceDir = CONSOLE_DIR): Promise<ConsoleBundle> {
  const assets = new Map<string, ConsoleFile>();

  const workers = await Bun.build({
    ...COMMON,
    entrypoints: WORKERS.map((name) => join(sourceDir, "workers", `${name}.worker.ts`)),
    naming: "[name]-[hash].[ext]",
  });
  const workerUrls: Record<string, string> = {};
  for (const output of builtOutputs(workers)) {
    const name = fileName(output.path);
    assets.set(name, consoleFile(new Uint8Array(await output.arrayBuffer()), output.type));
    const worker = WORKERS.find((label) => name.startsWith(`${label}.worker-`));
    if (worker) workerUrls[worker] = `${CONSOLE_ASSETS_PATH}${name}`;
  }

  const site = await Bun.build({
    ...COMMON,
    entrypoints: [join(sourceDir, "index.html")],
    splitting: true,
    publicPath: CONSOLE_ASSETS_PATH,
    naming: { entry: "[name].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { ...COMMON.define, CONSOLE_WORKERS: JSON.stringify(workerUrls) },
  });
  let page: ConsoleFile | undefined;
  for (const output of builtOutputs(site)) {
    const name = fileName(output.path);
    const file = consoleFile(new Uint8Array(await output.arrayBuffer()), output.type);
    if (name === "index.html") page = file;
    else assets.set(name, file);
  }
  if (!page) throw new Error("console build: no index.html among the outputs");
  return { page, assets };
}

function builtOutputs(result: Bun.BuildOutput): Bun.BuildArtifact[] {
  if (!result.success) {
    throw new Error(`console build failed:\n${result.logs.map((log) => String(log)).join("\n")}`);
  }
  return result.outputs;
}

/** `./index-3f9ac1d2.js` → `index-3f9ac1d2.js` (outputs sit in one folder: the naming has no [dir]). */
const fileName = (path: string) => path.replace(/^\.\//, "");
