/**
 * The Lua scripts that keep purge state in Redis consistent with the values stored under it.
 * A workspace's generation is a hash of two random tokens (`all`, `list`); the purge log is one
 * capped stream whose every entry names the entry before it (`p`), so a reader can tell a log
 * that still reaches back to its last entry from one that lost entries (trimmed, evicted, or
 * gone with a restart). Tokens are drawn by the caller (node:crypto), never counted, so a lost
 * hash can never be recreated at a value an instance still holds.
 */
import { randomInt } from 'node:crypto';

/** A fresh generation token: a random positive integer below 2^48 (safe in Lua's doubles and in JS). */
export function freshToken(): string {
  return String(randomInt(1, 2 ** 48 - 1));
}

/**
 * KEYS[1] the generation hash. ARGV[1], ARGV[2] fresh tokens. Returns {all, list}: the stored
 * ones, or the fresh ones when Redis holds none (never purged, evicted, or lost). Drawing fresh
 * ones on a missing hash is what makes eviction safe: values written under the lost tokens are
 * left unreachable instead of being read under a default.
 */
export const LOAD_SCRIPT = `
local gen = redis.call('hmget', KEYS[1], 'all', 'list')
if gen[1] and gen[2] then return gen end
redis.call('hset', KEYS[1], 'all', ARGV[1], 'list', ARGV[2])
return {ARGV[1], ARGV[2]}
`;

/**
 * Moves a generation. KEYS[1] the hash, KEYS[first..] recording values to delete; ARGV[1] the
 * part ('all' or 'list'), ARGV[2], ARGV[3] fresh tokens. A missing hash gets both tokens.
 */
function moveChunk(first: number): string {
  return `
if #KEYS >= ${first} then redis.call('del', unpack(KEYS, ${first})) end
local gen = redis.call('hmget', KEYS[1], 'all', 'list')
if ARGV[1] == 'all' or not gen[1] or not gen[2] then
  redis.call('hset', KEYS[1], 'all', ARGV[2], 'list', ARGV[3])
else
  redis.call('hset', KEYS[1], 'list', ARGV[3])
end
local moved = redis.call('hmget', KEYS[1], 'all', 'list')
`;
}

/** Appends to the log: KEYS[stream] the stream; ARGV[4] its cap, ARGV[5] the workspace, ARGV[6] the wake-up channel. */
function logChunk(stream: number): string {
  return `
local tip = redis.call('xrevrange', KEYS[${stream}], '+', '-', 'COUNT', 1)
local prev = '0-0'
if #tip > 0 then prev = tip[1][1] end
local id = redis.call('xadd', KEYS[${stream}], 'MAXLEN', '~', ARGV[4], '*', 'w', ARGV[5], 'p', prev)
redis.call('publish', ARGV[6], id)
`;
}

/**
 * Standalone and Sentinel: the move and its log entry in one script (KEYS[1] hash, KEYS[2] log,
 * KEYS[3..] values), so a generation never moves without the entry that tells every instance.
 */
export const PURGE_SCRIPT = `${moveChunk(3)}${logChunk(2)}
return {moved[1], moved[2], id}
`;

/**
 * Cluster: the hash lives in the workspace's slot and the log in its own, and one script cannot
 * span slots. The move runs first, then the log entry (PURGE_LOG_SCRIPT, same ARGV): an instance
 * reading the entry reloads the hash after the move, never before it.
 */
export const PURGE_MOVE_SCRIPT = `${moveChunk(2)}
return moved
`;

/** Cluster: the log entry of a purge (KEYS[1] the log), after PURGE_MOVE_SCRIPT. */
export const PURGE_LOG_SCRIPT = `${logChunk(1)}
return id
`;

/**
 * Where a reader starts: KEYS[1] the log, ARGV[1] its cap. Returns the id of its newest entry,
 * first adding an origin entry when the log is empty or gone, so that every later entry chains
 * to an id this reader saw, and a log lost and restarted is told from one that simply grew.
 */
export const LOG_TIP_SCRIPT = `
local tip = redis.call('xrevrange', KEYS[1], '+', '-', 'COUNT', 1)
if #tip > 0 then return tip[1][1] end
return redis.call('xadd', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'p', '0-0', 'o', '1')
`;
