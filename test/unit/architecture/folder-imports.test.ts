// No import cycle between the folders of src/: each folder (auth/, cache/, purge/, redis/, ...) may
// lean on others only one way, so each can be read, tested and replaced without the rest. A file
// at the top of src/ counts as a folder of its own. Imports are read as text (`from '...'` and
// `import('...')`), which is all the project writes; type-only imports count too: a cycle of
// types ties the folders as firmly.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The folder of src/ a file belongs to: its first path segment (a top-level file is its own). */
function folderOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!;
}

const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*)'(\.{1,2}\/[^']+)'/g;

/** Folder → the folders it imports from (itself excluded), and one file that does, per edge. */
function folderGraph(files: readonly string[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const target = path.resolve(path.dirname(file), match[1]!);
      if (!target.startsWith(SRC)) continue;
      const to = folderOf(target.replace(/\.js$/, '.ts'));
      if (to !== from && !edges.has(to)) edges.set(to, path.relative(SRC, file));
    }
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each once, as the folders along it. */
function cycles(graph: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const found = new Map<string, string[]>();
  const done = new Set<string>();
  const walk = (node: string, trail: string[]): void => {
    const at = trail.indexOf(node);
    if (at >= 0) {
      const cycle = trail.slice(at);
      // One name per cycle whatever folder the walk entered it by.
      const start = cycle.indexOf([...cycle].sort()[0]!);
      const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
      found.set(canonical.join(' → '), canonical);
      return;
    }
    if (done.has(node)) return;
    for (const next of graph.get(node)?.keys() ?? []) walk(next, [...trail, node]);
    done.add(node);
  };
  for (const node of [...graph.keys()].sort()) walk(node, []);
  return [...found.values()];
}

void t.test('the folders of src/ import each other without a cycle', (t) => {
  const graph = folderGraph(sourceFiles(SRC));
  t.ok(graph.size > 10, 'the graph covers the folders of src/');
  const describe = (cycle: string[]): string =>
    cycle
      .map((folder, i) => {
        const next = cycle[(i + 1) % cycle.length]!;
        return `${folder} → ${next} (${graph.get(folder)!.get(next)})`;
      })
      .join('\n  ');
  const found = cycles(graph);
  t.same(
    found.map(describe),
    [],
    `import cycles between src/ folders:\n  ${found.map(describe).join('\n\n  ')}`,
  );
  t.end();
});

void t.test('the cycle finder sees a cycle, and only one where there is one', (t) => {
  const graph = new Map([
    ['a', new Map([['b', 'a/x.ts']])],
    ['b', new Map([['c', 'b/y.ts']])],
    ['c', new Map([['a', 'c/z.ts']])],
    ['d', new Map([['a', 'd/w.ts']])],
  ]);
  t.same(cycles(graph), [['a', 'b', 'c']]);
  graph.get('c')!.delete('a');
  t.same(cycles(graph), []);
  t.end();
});
