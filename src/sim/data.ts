/**
 * Deterministic recordings for the simulator: the same workspace, count, seed and peers always
 * give the same Recording objects, in the spec's field order, newest first.
 *
 * Shared recordings (tenant-leak bait): for every other workspace `peer` in `options.peers`,
 * the pair {workspace, peer} shares SHARED_PER_PAIR recordings. Their `id` and `public_link_id`
 * come from a PRNG seeded with hashSeed(`shared|<a>|<b>|<seed>`) where a < b are the two names
 * sorted, so both workspaces compute the same values (see sharedRecordingIds). Every other field
 * is drawn from the workspace's own PRNG, and public_url / transcoded_url embed the workspace, so
 * a body served under the wrong workspace is always detectable.
 */
import type { Recording, Tag } from '../recording.js';
import { Prng, hashSeed } from './prng.js';

/** How many recordings each pair of workspaces has in common (fewer when `count` is smaller). */
export const SHARED_PER_PAIR = 3;

/** Host of the unsigned transcoded_url kept in the data; the server signs per scheme when it answers. */
export const UNSIGNED_MEDIA_HOST = 'open.recordings-cdn.test';

/** Alphabet of public link codes ([A-Za-z0-9_-]). */
const LINK_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
/** Newest possible created_at; data never depends on the wall clock. */
const ANCHOR_MS = Date.UTC(2026, 2, 31, 12, 0, 0);
const SPAN_MS = 400 * 24 * 3600 * 1000;

const TITLE_WORDS = [
  'Quarterly',
  'Sprint',
  'Onboarding',
  'Bug',
  'Design',
  'Customer',
  'Roadmap',
  'Release',
  'Demo',
  'Incident',
];
const TITLE_NOUNS = [
  'review',
  'walkthrough',
  'sync',
  'repro',
  'handoff',
  'kickoff',
  'retro',
  'notes',
  'preview',
  'update',
];
const SUMMARIES = [
  'Walks through the new checkout flow and the open questions about tax handling.',
  'Reproduces the login loop on Safari and shows the console errors.',
  'Explains the migration plan for the billing tables, step by step.',
  'Demo of the dashboard filters, with feedback from the support team.',
  'Short update on hiring, budget and the next planning cycle.',
  'Shows how to configure single sign-on for a new customer — including “edge cases”.',
];
const FIRST_NAMES = [
  'Ada',
  'Grace',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Dennis',
  'Radia',
  'Tim',
  'Frances',
  'José',
  'Zoë',
];
const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Perlman',
  'Berners-Lee',
  'Allen',
  'Núñez',
  "O'Brien",
];
const TAG_NAMES = [
  'bug',
  'design',
  'sales',
  'onboarding',
  'internal',
  'customer',
  'urgent',
  'archive',
];
const TAG_STYLES = ['red', 'blue', 'green', 'yellow', 'purple', 'gray'];
const FOLDER_NAMES = [
  'Engineering',
  'Sales calls',
  'Support',
  'Product demos',
  'All hands',
  'Personal',
];

/** The id and public link code of one recording two workspaces have in common. */
export interface SharedId {
  id: string;
  public_link_id: string;
}

/** The ids shared by workspaces `a` and `b` under `seed` (order of `a` and `b` does not matter). */
export function sharedRecordingIds(
  a: string,
  b: string,
  seed: number,
  perPair = SHARED_PER_PAIR,
): SharedId[] {
  const [first, second] = a < b ? [a, b] : [b, a];
  const prng = new Prng(hashSeed(`shared|${first}|${second}|${seed}`));
  const out: SharedId[] = [];
  for (let i = 0; i < perPair; i++)
    out.push({ id: prng.uuid(), public_link_id: prng.chars(LINK_ALPHABET, prng.int(10, 16)) });
  return out;
}

/** Generates `count` recordings for `workspace`, newest first; `peers` adds the shared ones. */
export function generateWorkspaceData(
  workspace: string,
  options: { count: number; seed: number; peers?: readonly string[] },
): Recording[] {
  const prng = new Prng(hashSeed(`${workspace}|${options.seed}`));
  const tags = tagPool(prng);
  const folders = FOLDER_NAMES.map((name) => ({
    name,
    id: `fld_${prng.chars(LINK_ALPHABET.slice(0, 62), 12)}`,
  }));
  const createdTimes = Array.from(
    { length: options.count },
    () => ANCHOR_MS - Math.floor(prng.next() * SPAN_MS),
  );
  createdTimes.sort((x, y) => y - x);
  const recordings = createdTimes.map((created) =>
    makeRecording(prng, workspace, created, tags, folders),
  );
  placeShared(recordings, workspace, options);
  return recordings;
}

/** Overwrites id and link code of a few recordings with the pair-derived shared values. */
function placeShared(
  recordings: Recording[],
  workspace: string,
  options: { seed: number; peers?: readonly string[] },
): void {
  const peers = [...new Set(options.peers ?? [])].filter((p) => p !== workspace).sort();
  const perPair = Math.min(
    SHARED_PER_PAIR,
    Math.floor(recordings.length / Math.max(1, peers.length + 1)),
  );
  const taken = new Set<number>();
  for (const peer of peers) {
    const slots = new Prng(hashSeed(`slots|${workspace}|${peer}|${options.seed}`));
    for (const shared of sharedRecordingIds(workspace, peer, options.seed, perPair)) {
      let index = slots.int(0, recordings.length - 1);
      while (taken.has(index)) index = (index + 1) % recordings.length;
      taken.add(index);
      const target = recordings[index];
      if (target === undefined) continue;
      target.id = shared.id;
      target.public_link_id = shared.public_link_id;
      target.public_url = shareUrl(workspace, shared.public_link_id);
      target.transcoded_url = target.is_uploaded ? unsignedMediaUrl(workspace, shared.id) : null;
      target.thumbnail_url =
        target.thumbnail_url === null ? null : thumbnailUrl(workspace, shared.id);
    }
  }
}

/** One recording with every field in the spec's order. */
function makeRecording(
  prng: Prng,
  workspace: string,
  created: number,
  tags: readonly Tag[],
  folders: ReadonlyArray<{ name: string; id: string }>,
): Recording {
  const id = prng.uuid();
  const isUploaded = prng.chance(0.92);
  const linkId = prng.chance(0.85) ? prng.chars(LINK_ALPHABET, prng.int(10, 16)) : null;
  const uploaded = isUploaded ? created + prng.int(2_000, 15 * 60_000) : null;
  const updated =
    Math.max(created, uploaded ?? created) +
    (prng.chance(0.5) ? prng.int(0, 30 * 24 * 3600_000) : 0);
  const folder = prng.chance(0.7) ? prng.pick(folders) : null;
  return {
    id,
    title: prng.chance(0.8) ? `${prng.pick(TITLE_WORDS)} ${prng.pick(TITLE_NOUNS)}` : null,
    default_title: `Recording ${new Date(created).toISOString().slice(0, 16).replace('T', ' ')}`,
    duration: duration(prng),
    view_count: prng.chance(0.1) ? 0 : Math.floor(prng.next() ** 3 * 5000),
    is_uploaded: isUploaded,
    requested: prng.chance(0.15),
    summary: prng.chance(0.7) ? prng.pick(SUMMARIES) : null,
    public_link_id: linkId,
    public_url: linkId === null ? null : shareUrl(workspace, linkId),
    transcoded_url: isUploaded ? unsignedMediaUrl(workspace, id) : null,
    thumbnail_url: isUploaded && prng.chance(0.95) ? thumbnailUrl(workspace, id) : null,
    user_name: `${prng.pick(FIRST_NAMES)} ${prng.pick(LAST_NAMES)}`,
    tags: pickTags(prng, tags),
    folder_name: folder?.name ?? null,
    folder_id: folder?.id ?? null,
    created_at: new Date(created).toISOString(),
    updated_at: new Date(updated).toISOString(),
    uploaded_at: uploaded === null ? null : new Date(uploaded).toISOString(),
  };
}

/** Seconds: null sometimes, else whole or fractional (millisecond precision). */
function duration(prng: Prng): number | null {
  if (prng.chance(0.08)) return null;
  const seconds = prng.int(3, 3600);
  return prng.chance(0.5) ? seconds : Math.round((seconds + prng.next()) * 1000) / 1000;
}

function tagPool(prng: Prng): Tag[] {
  return TAG_NAMES.map((name) => ({
    id: `tag_${prng.chars(LINK_ALPHABET.slice(0, 62), 10)}`,
    name,
    style: prng.pick(TAG_STYLES),
  }));
}

function pickTags(prng: Prng, pool: readonly Tag[]): Tag[] {
  const wanted = prng.int(0, 3);
  const chosen = new Set<Tag>();
  while (chosen.size < wanted) chosen.add(prng.pick(pool));
  return [...chosen].map((tag) => ({ ...tag }));
}

function shareUrl(workspace: string, code: string): string {
  return `https://${workspace}.recordings.example/share/${code}`;
}

function thumbnailUrl(workspace: string, id: string): string {
  return `https://${workspace}.recordings.example/thumbnails/${id}.jpg`;
}

/** The media path every scheme signs: /v/<workspace>/<id>.mp4. */
export function mediaPath(workspace: string, id: string): string {
  return `/v/${workspace}/${id}.mp4`;
}

function unsignedMediaUrl(workspace: string, id: string): string {
  return `https://${UNSIGNED_MEDIA_HOST}${mediaPath(workspace, id)}`;
}
