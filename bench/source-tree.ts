/** The source tree a bench measures: this checkout, or a git revision extracted from it. */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** bench/ */
export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
/** The repository's root. */
export const ROOT = dirname(BENCH_DIR);

/**
 * The working tree, or with `ref` (BENCH_REF) that git revision, extracted into `tmp` (sharing
 * this checkout's node_modules). Useful to compare revisions, or to measure the last commit
 * while the working tree is mid-edit.
 */
export function sourceTree(tmp: string, ref: string | undefined): string {
  if (!ref) return ROOT;
  const dir = join(tmp, "src-tree");
  mkdirSync(dir);
  const archive = execFileSync("git", ["archive", "--format=tar", ref], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** The commit a ref names, or null. */
export function gitCommit(ref: string): string | null {
  try {
    return execFileSync("git", ["rev-parse", ref], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}
