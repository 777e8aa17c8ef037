/**
 * The one way a value reaches Redis: a write checked against the workspace's generation hash,
 * which the purge scripts move (purge/scripts.ts; the hash's fields `all`, `list` and `rev` are
 * shared by both files and must stay so), and indexed in the same script (index-lua.ts).
 */
import { INDEX_LUA } from './index-lua.js';

/**
 * The store-time check on Redis's side: KEYS[1] the generation hash, KEYS[2..] value keys;
 * ARGV[1], ARGV[2], ARGV[3] the `all`, `list` and `rev` tokens the fetch began under, ARGV[4]
 * now (epoch ms), ARGV[5] the index's head under `all`, then per key i its bytes (ARGV[3i]),
 * its TTL in ms (ARGV[3i+1], '0': none) and what reaches it (ARGV[3i+2]: `<resource key>\t<the
 * selectors, space-separated>`, or '' for an alias). Writes nothing and returns 0 when the hash
 * holds other tokens (a purge moved it since, or it was lost): a value fetched before a purge
 * never lands where a reader after it looks, whichever instance fetched it. The index learns a
 * value's pairs in the same script as the value is written, so an exact purge never misses a
 * value it could reach.
 */
export const CHECKED_SET_SCRIPT = `${INDEX_LUA}
local gen = redis.call('hmget', KEYS[1], 'all', 'list', 'rev', 'ixw', 'ixmax', 'ixlost')
if gen[1] ~= ARGV[1] or gen[2] ~= ARGV[2] or (gen[3] or '0') ~= ARGV[3] then return 0 end
local now = tonumber(ARGV[4])
local head = ARGV[5]
local state = indexState({gen[4], gen[5], gen[6]}, ARGV[1], head, now)
for i = 2, #KEYS do
  local ttl = ARGV[3 * i + 1]
  if ttl == '0' then redis.call('set', KEYS[i], ARGV[3 * i])
  else redis.call('set', KEYS[i], ARGV[3 * i], 'PX', ttl) end
  local entry = ARGV[3 * i + 2]
  if entry ~= '' then
    local tab = string.find(entry, '\\t', 1, true)
    local expiry = math.huge
    if ttl ~= '0' then expiry = now + tonumber(ttl) end
    indexValue(state, head, string.sub(entry, 1, tab - 1), string.sub(entry, tab + 1), expiry, now)
  end
end
saveIndex(state, ARGV[1], head, now)
return 1
`;
