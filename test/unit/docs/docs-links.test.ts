/**
 * The README and docs/ hold together: every relative link and #anchor resolves (GitHub's heading
 * anchors), every link from config/ and deploy/ into this repository on GitHub (alert runbooks,
 * the dashboard) names a file and heading that exist, and docs/configuration.md documents every
 * key of config/default.yaml.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { headingAnchors, markdownLinks, slug } from '../../helpers/markdown.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const REPO_BLOB = 'https://github.com/recordings-gateway/recordings-gateway/blob/main/';
const DOC_PAGES = [
  'configuration',
  'api',
  'metrics',
  'runbook',
  'operations',
  'redis',
  'purge',
  'performance',
  'reliability',
  'development',
];
const markdownFiles = ['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)]
  .filter((f) => f.endsWith('.md'))
  .sort();

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    anchors = headingAnchors(readFileSync(join(root, file), 'utf8'));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** Why a repository path with an optional anchor does not resolve, or undefined when it does. */
function problem(file: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(root, file))) return `no file ${file}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(join(root, file)).isDirectory() || !file.endsWith('.md'))
    return `anchor #${anchor} on ${file}, which has no headings`;
  return anchorsOf(file).has(anchor) ? undefined : `no heading #${anchor} in ${file}`;
}

void t.test('heading anchors follow GitHub', (t) => {
  t.equal(slug('Every core: `server.workers`'), 'every-core-serverworkers');
  t.equal(slug('`cache.ttl.recording`'), 'cachettlrecording');
  t.equal(slug('transcoded_url freshness'), 'transcoded_url-freshness');
  t.equal(
    slug('The soak run (`npm run soak`, not part of `npm test`)'),
    'the-soak-run-npm-run-soak-not-part-of-npm-test',
  );
  t.same([...headingAnchors('# A\n```\n# not a heading\n```\n## A\n### A')], ['a', 'a-1', 'a-2']);
  t.end();
});

void t.test('every relative link and anchor in README.md and docs/ resolves', (t) => {
  t.ok(markdownFiles.length > DOC_PAGES.length, `${markdownFiles.length} files`);
  for (const file of markdownFiles) {
    for (const { target, line } of markdownLinks(readFileSync(join(root, file), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = path === '' ? file : relative(root, join(root, dirname(file), path));
      const why = problem(resolved, anchor === undefined ? undefined : decodeURIComponent(anchor));
      t.equal(why, undefined, `${file}:${line} → ${target}`);
    }
  }
  t.end();
});

void t.test('the README is a front door: at most 25 KB, linking every docs page', (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  t.ok(Buffer.byteLength(readme) <= 25_000, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const linked = new Set(markdownLinks(readme).map((link) => link.target.split('#')[0]));
  for (const page of DOC_PAGES) t.ok(linked.has(`docs/${page}.md`), `README links docs/${page}.md`);
  t.end();
});

/** Text files under a folder, recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ya?ml|json|mjs|md)$/.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

void t.test('links from config/ and deploy/ into the repository resolve', (t) => {
  let count = 0;
  for (const file of [...filesUnder('config'), ...filesUnder('deploy')]) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(new RegExp(`${REPO_BLOB}([^\\s'"#)]+)(?:#([^\\s'")]+))?`, 'g'))) {
      count++;
      t.equal(problem(m[1]!, m[2]), undefined, `${file} → ${m[0]}`);
    }
  }
  t.ok(count >= 12, `${count} links (the alerts' runbooks and the dashboard's)`);
  t.end();
});

/** Every leaf key path of a parsed YAML mapping (`cache.ttl.recording`); an empty mapping is a leaf. */
function keyPaths(node: unknown, prefix = ''): string[] {
  if (
    typeof node !== 'object' ||
    node === null ||
    Array.isArray(node) ||
    Object.keys(node).length === 0
  )
    return [prefix];
  return Object.entries(node).flatMap(([key, value]) =>
    keyPaths(value, prefix === '' ? key : `${prefix}.${key}`),
  );
}

void t.test('docs/configuration.md documents every key of config/default.yaml', (t) => {
  const paths = keyPaths(parse(readFileSync(join(root, 'config/default.yaml'), 'utf8')));
  const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
  const headings = anchorsOf('docs/configuration.md');
  t.ok(paths.length >= 70, `${paths.length} keys`);
  for (const path of paths) {
    t.ok(doc.includes(`\`${path}\``), `${path} is named`);
    t.ok(headings.has(slug(`\`${path}\``)), `${path} has its own heading`);
  }
  t.end();
});
