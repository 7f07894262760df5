/**
 * Builds the console (console/src) into console/dist, which wrangler serves as the Worker's
 * static assets at `/` (wrangler.toml `[assets]`). wrangler runs this before `wrangler dev`
 * (`npm start`) and `wrangler deploy` (`[build] command`), so users never build by hand;
 * `wrangler dev` runs it again when console/src changes.
 *
 * Several builds may run at once (each e2e test file builds the Worker while others serve
 * console/dist): the output is built in a temporary folder and each file is moved into
 * place with an atomic rename, so a reader never sees a missing or half-written file.
 */
import { build } from "esbuild";
import { copyFile, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname);
const OUT = join(ROOT, "dist");

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

const tmp = await mkdtemp(join(ROOT, ".dist-"));
try {
  await build({
    entryPoints: {
      main: join(ROOT, "src/main.tsx"),
      "layout-worker": join(ROOT, "src/graph/layout-worker.ts"),
      styles: join(ROOT, "src/styles.css"),
    },
    outdir: join(tmp, "assets"),
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "warning",
  });
  for (const file of ["index.html", "_headers"]) await copyFile(join(ROOT, file), join(tmp, file));
  const built = await filesUnder(tmp);
  for (const file of built) {
    await mkdir(dirname(join(OUT, file)), { recursive: true });
    await rename(join(tmp, file), join(OUT, file));
  }
  const current = new Set(built);
  for (const stale of (await filesUnder(OUT)).filter((f) => !current.has(f))) {
    await rm(join(OUT, stale), { force: true });
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}
