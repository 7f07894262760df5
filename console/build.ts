/**
 * Builds the console (console/src) into console/dist, which wrangler serves as the Worker's
 * static assets at `/` (wrangler.toml `[assets]`). wrangler runs this before `wrangler dev`
 * (`npm start`) and `wrangler deploy` (`[build] command`), so users never build by hand.
 * `--watch` rebuilds on change (wrangler dev also re-runs it when console/src changes).
 */
import { build, context, type BuildOptions } from "esbuild";
import { cp, mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname);
const OUT = join(ROOT, "dist");

const options: BuildOptions = {
  entryPoints: {
    main: join(ROOT, "src/main.tsx"),
    "layout-worker": join(ROOT, "src/graph/layout-worker.ts"),
    styles: join(ROOT, "src/styles.css"),
  },
  outdir: join(OUT, "assets"),
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
};

await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
await cp(join(ROOT, "index.html"), join(OUT, "index.html"));
if (process.argv.includes("--watch")) {
  await (await context(options)).watch();
} else {
  await build(options);
}
