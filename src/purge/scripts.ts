/**
 * The Lua scripts that keep purge state in Redis consistent with the values stored under it.
 * A workspace's generation is a hash of two random tokens (`all`, `list`); the purge log is one
 * capped stream whose every entry names the entry before it (`p`), so a reader can tell a log
 * that still reaches back to its last entry from one that lost entries (trimmed, evicted, or
 * gone with a restart). Tokens are drawn by the caller (node:crypto), never counted, so a lost
 * hash can never be recreated at a value an instance still holds.
 */
import { randomInt } from 'node:crypto';
import { LIST_KEY_PREFIX } from '../cache/entry/keys.js';
import { luaLayout } from '../cache/entry/layout.js';
import { INDEX_LUA } from '../cache/l2/index-lua.js';

/** A fresh generation token: a random positive integer below 2^48 (safe in Lua's doubles and in JS). */
export function freshToken(): string {
  return String(randomInt(1, 2 ** 48 - 1));
}

/**
 * The index hash of earlier releases beside the generation (KEYS[index], redis/key-layout.ts#
 * purgeIndexKey): begun afresh, holding only its `_` (the `all` token), whenever `all` is drawn,
 * so that instances of an earlier release still running keep indexing the values they write
 * there. An exact purge that finds more than `_` in it knows such instances wrote values its own
 * index (cache/l2/index-lua.ts) does not name, and widens (`older-instances`).
 */
function resetIndex(index: number, all: string): string {
  return `
redis.call('del', KEYS[${index}])
redis.call('hset', KEYS[${index}], '_', ${all})
`;
}

/**
 * KEYS[1] the generation hash, KEYS[2] its index. ARGV[1], ARGV[2] fresh tokens. Returns
 * {all, list, rev}: the stored ones, or the fresh ones when Redis holds none (never purged,
 * evicted, or lost). Drawing fresh ones on a missing hash is what makes eviction safe: values
 * written under the lost tokens are left unreachable instead of being read under a default.
 * `rev` is absent ('0') until an exact purge draws one.
 */
export const LOAD_SCRIPT = `
local gen = redis.call('hmget', KEYS[1], 'all', 'list', 'rev')
if gen[1] and gen[2] then return {gen[1], gen[2], gen[3] or '0'} end
redis.call('hset', KEYS[1], 'all', ARGV[1], 'list', ARGV[2])
${resetIndex(2, 'ARGV[1]')}
return {ARGV[1], ARGV[2], '0'}
`;

/**
 * Moves a generation. KEYS[1] the hash, KEYS[index] its index, KEYS[first..] recording values to
 * delete; ARGV[1] the part ('all' or 'list'), ARGV[2], ARGV[3] fresh tokens. A missing hash gets
 * both tokens, and a new `all` a new index.
 */
function moveChunk(index: number, first: number): string {
  return `
if #KEYS >= ${first} then redis.call('del', unpack(KEYS, ${first})) end
local gen = redis.call('hmget', KEYS[1], 'all', 'list')
if ARGV[1] == 'all' or not gen[1] or not gen[2] then
  redis.call('hset', KEYS[1], 'all', ARGV[2], 'list', ARGV[3])
  ${resetIndex(index, 'ARGV[2]')}
else
  redis.call('hset', KEYS[1], 'list', ARGV[3])
end
local moved = redis.call('hmget', KEYS[1], 'all', 'list', 'rev')
moved[3] = moved[3] or '0'
`;
}

/**
 * Appends to the log: KEYS[stream] the stream; ARGV[4] its cap, ARGV[5] the workspace, ARGV[6]
 * the wake-up channel; `extra` more fields of the entry (an exact purge's), as Lua expressions.
 */
function logChunk(stream: number, extra = ''): string {
  return `
local tip = redis.call('xrevrange', KEYS[${stream}], '+', '-', 'COUNT', 1)
local prev = '0-0'
if #tip > 0 then prev = tip[1][1] end
local id = redis.call('xadd', KEYS[${stream}], 'MAXLEN', '~', ARGV[4], '*', 'w', ARGV[5], 'p', prev${extra})
redis.call('publish', ARGV[6], id)
`;
}

/**
 * Standalone and Sentinel: the move and its log entry in one script (KEYS[1] hash, KEYS[2] log,
 * KEYS[3] index, KEYS[4..] values), so a generation never moves without the entry that tells
 * every instance.
 */
export const PURGE_SCRIPT = `${moveChunk(3, 4)}${logChunk(2)}
return {moved[1], moved[2], moved[3], id}
`;

/**
 * Cluster: the hash lives in the workspace's slot and the log in its own, and one script cannot
 * span slots. The move runs first (KEYS[1] hash, KEYS[2] index, KEYS[3..] values), then the log
 * entry (PURGE_LOG_SCRIPT, same ARGV): an instance reading the entry reloads the hash after the
 * move, never before it.
 */
export const PURGE_MOVE_SCRIPT = `${moveChunk(2, 3)}
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

/**
 * An exact purge's work in the workspace's slot: KEYS[1] the hash, KEYS[2] the index of earlier
 * releases. ARGV[1] '1' for soft, ARGV[2] the new `rev`, ARGV[3] now (epoch ms), ARGV[7],
 * ARGV[8] the `all` and `list` tokens the caller built ARGV[9] (the head of recording values'
 * names), ARGV[10] (of list pages') and ARGV[16] (of the index) from, ARGV[11] the selectors,
 * ARGV[12] keys named besides (both space-separated), ARGV[13] the part to move when the purge
 * widens (no selectors: never), ARGV[14], ARGV[15] fresh tokens for it, ARGV[17] the most
 * entries the selectors may reach. Returns {'retry'} when the tokens moved meanwhile (the names
 * are then another generation's), {'moved', all, list, rev, reason} after it widened, or
 * {'exact', all, list, rev, matched}.
 *
 * It reads only the index's sets of the selectors it names (never the whole index), so its cost
 * follows what it reaches, not the workspace's size. Hard: the values are deleted, and their
 * keys leave the sets read. Soft: each entry is marked stale in place (layout.ts#luaLayout), so
 * it is served stale, never fresh; aliases are left pointing at it; a value of a layout this
 * script cannot read is deleted (more, never less). Either way `rev` moves, so a value fetched
 * before and written after is refused.
 */
const EXACT_CHUNK = `
local gen = redis.call('hmget', KEYS[1], 'all', 'list', 'ixw', 'ixmax', 'ixlost')
if gen[1] ~= ARGV[7] or gen[2] ~= ARGV[8] then return {'retry'} end
${luaLayout()}
${INDEX_LUA}
local now = tonumber(ARGV[3])
local function drop(name)
  if ARGV[1] ~= '1' then redis.call('del', name) return end
  local v = redis.call('get', name)
  if not v then return end
  local layout = layoutOf(v)
  if layout == 'entry' then markStale(name, v, now)
  elseif layout == nil then redis.call('del', name) end
end
local function nameOf(key)
  if string.sub(key, 1, ${LIST_KEY_PREFIX.length}) == '${LIST_KEY_PREFIX}' then return ARGV[10] .. key end
  return ARGV[9] .. key
end
local function widen(reason)
  if ARGV[13] == 'all' or reason == 'older-instances' then
    redis.call('hset', KEYS[1], 'all', ARGV[14], 'list', ARGV[15])
    ${resetIndex(2, 'ARGV[14]')}
  else
    redis.call('hset', KEYS[1], 'list', ARGV[15])
  end
  local moved = redis.call('hmget', KEYS[1], 'all', 'list', 'rev')
  return {'moved', moved[1], moved[2], moved[3] or '0', reason}
end
for key in string.gmatch(ARGV[12], '%S+') do drop(nameOf(key)) end
local matched = 0
if ARGV[11] ~= '' then
  if redis.call('hlen', KEYS[2]) > 1 then return widen('older-instances') end
  local head = ARGV[16]
  local state = indexState({gen[3], gen[4], gen[5]}, gen[1], head, now)
  if state.lost > now then
    redis.call('hset', KEYS[1], 'ixlost', state.lost)
    return widen('index-lost')
  end
  local limit = tonumber(ARGV[17])
  local found = {}
  local sets = {}
  for selector in string.gmatch(ARGV[11], '%S+') do
    local set = head .. selector
    local live = tonumber(redis.call('zscore', head .. '_', selector) or '-1')
    if live > now then
      if redis.call('exists', set) == 0 then
        redis.call('hset', KEYS[1], 'ixlost', live)
        return widen('index-lost')
      end
      redis.call('zremrangebyscore', set, '-inf', '(' .. now)
      if redis.call('zcard', set) > limit then return widen('too-many-entries') end
      for _, key in ipairs(redis.call('zrange', set, 0, -1)) do
        if not found[key] then
          found[key] = true
          matched = matched + 1
        end
      end
      if matched > limit then return widen('too-many-entries') end
      sets[#sets + 1] = set
    end
  end
  local keys = {}
  for key in pairs(found) do
    drop(nameOf(key))
    keys[#keys + 1] = key
  end
  if ARGV[1] ~= '1' then
    -- In slices: unpack is bounded by Lua's stack.
    for first = 1, #keys, 1000 do
      local slice = {unpack(keys, first, math.min(first + 999, #keys))}
      for _, set in ipairs(sets) do redis.call('zrem', set, unpack(slice)) end
    end
    -- A set emptied here is gone: the witness must not take it for one evicted.
    for selector in string.gmatch(ARGV[11], '%S+') do
      if redis.call('exists', head .. selector) == 0 then redis.call('zrem', head .. '_', selector) end
    end
  end
end
redis.call('hset', KEYS[1], 'rev', ARGV[2])
`;

/**
 * The fields an exact purge's log entry adds: its rev, selectors, named keys and mode, and the
 * `all` and `list` tokens its names were built from (an instance on other tokens forgets).
 */
const EXACT_LOG_FIELDS =
  ", 'v', ARGV[2], 'x', ARGV[11], 'k', ARGV[12], 's', ARGV[1], 'a', ARGV[7], 'l', ARGV[8]";

/**
 * Standalone and Sentinel: an exact purge and its log entry in one script (KEYS[1] hash, KEYS[2]
 * index, KEYS[3] log). After a fallback move the entry is a plain one: every instance forgets.
 */
export const EXACT_PURGE_SCRIPT = `
local result = (function()
${EXACT_CHUNK}
return {'exact', gen[1], gen[2], ARGV[2], matched}
end)()
if result[1] == 'retry' then return result end
if result[1] == 'moved' then
${logChunk(3)}
  return result
end
${logChunk(3, EXACT_LOG_FIELDS)}
return result
`;

/** Cluster: an exact purge's work in the workspace's slot (KEYS[1] hash, KEYS[2] index); then its log entry. */
export const EXACT_MOVE_SCRIPT = `${EXACT_CHUNK}
return {'exact', gen[1], gen[2], ARGV[2], matched}
`;

/** Cluster: the log entry of an exact purge (KEYS[1] the log, the ARGV of EXACT_MOVE_SCRIPT). */
export const EXACT_LOG_SCRIPT = `${logChunk(1, EXACT_LOG_FIELDS)}
return id
`;
