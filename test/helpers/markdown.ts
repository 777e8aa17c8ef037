/**
 * Just enough Markdown reading to check links: the anchors GitHub gives a file's headings and the
 * inline links it renders. Fenced code blocks and code spans are skipped, as GitHub renders
 * neither headings nor links inside them.
 */

/** The lines outside fenced code blocks (fence lines and their contents dropped), numbered from 1. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const lines: Array<{ text: string; line: number }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker[0]!.repeat(marker.length);
    else if (fence !== undefined && text.trim().startsWith(fence)) fence = undefined;
    else if (fence === undefined) lines.push({ text, line: index + 1 });
  });
  return lines;
}

/**
 * GitHub's anchor for a heading's text (github-slugger): lower case, punctuation and symbols
 * dropped, spaces to hyphens. Code spans and links count by their text.
 */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a file's ATX headings, repeats numbered `-1`, `-2`, … as GitHub numbers them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(markdown)) {
    const text = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (text === undefined) continue;
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** One inline link or image: its target as written, and the 1-based line it is on. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** The inline links and images of a file, outside code (reference-style links are not used here). */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const outsideCode = text.replace(/`[^`]*`/g, 'code');
    for (const m of outsideCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ target: m[1]!, line });
  }
  return links;
}
