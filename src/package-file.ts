/** Files shipped beside package.json (config/default.yaml, openapi/), wherever the code was compiled to. */
import { existsSync } from 'node:fs';

/**
 * A file of the package, found by walking up to the package.json this module belongs to: the
 * code runs from src/ (tests), dist/ (production, the image's /app/dist) and dist-bench/src/ (the
 * benchmarks' build, which compiles src/ next to bench/), so a fixed relative path fits only some.
 */
export function packageFile(relative: string): URL {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir))) return new URL(relative, dir);
  }
  return new URL(`../${relative}`, import.meta.url);
}
