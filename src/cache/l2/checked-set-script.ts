/**
 * The one way a value reaches Redis: a write checked against the workspace's generation hash,
 * which the purge scripts move (purge/scripts.ts; the hash's fields `all`, `list` and `rev`, and
 * the index's layout, are shared by both files and must stay so).
 */

/**
 * The store-time check on Redis's side: KEYS[1] the generation hash, KEYS[2] its index of
 * holders, KEYS[3..] value keys; ARGV[1], ARGV[2], ARGV[3] the `all`, `list` and `rev` tokens
 * the fetch began under, ARGV[4] the index's bound (fields), then per key i its bytes
 * (ARGV[3i-4]), its TTL in ms (ARGV[3i-3], '0': none) and what it answers to (ARGV[3i-2]:
 * `<resource key>\t<surrogates, space-separated>`, or '' for an alias). Writes nothing and
 * returns 0 when the hash holds other tokens (a purge moved it since, or it was lost): a value
 * fetched before a purge never lands where a reader after it looks, whichever instance fetched
 * it. The index learns a value's pairs in the same script as the value is written, so an exact
 * purge never misses a value it could reach; past its bound it gives up (`!`) instead.
 */
export const CHECKED_SET_SCRIPT = `
local gen = redis.call('hmget', KEYS[1], 'all', 'list', 'rev')
if gen[1] ~= ARGV[1] or gen[2] ~= ARGV[2] or (gen[3] or '0') ~= ARGV[3] then return 0 end
local mark = redis.call('hmget', KEYS[2], '_', '!')
local indexed = mark[1] == ARGV[1] and not mark[2]
for i = 3, #KEYS do
  local ttl = ARGV[3 * i - 3]
  if ttl == '0' then redis.call('set', KEYS[i], ARGV[3 * i - 4])
  else redis.call('set', KEYS[i], ARGV[3 * i - 4], 'PX', ttl) end
  local entry = ARGV[3 * i - 2]
  if indexed and entry ~= '' then
    local tab = string.find(entry, '\\t', 1, true)
    local key = string.sub(entry, 1, tab - 1)
    local now = string.sub(entry, tab + 1)
    local was = redis.call('hget', KEYS[2], '=' .. key)
    if was ~= now then
      if was then
        for surrogate in string.gmatch(was, '%S+') do redis.call('hdel', KEYS[2], surrogate .. ' ' .. key) end
      end
      for surrogate in string.gmatch(now, '%S+') do redis.call('hset', KEYS[2], surrogate .. ' ' .. key, '1') end
      redis.call('hset', KEYS[2], '=' .. key, now)
      if redis.call('hlen', KEYS[2]) > tonumber(ARGV[4]) then
        redis.call('del', KEYS[2])
        redis.call('hset', KEYS[2], '_', ARGV[1], '!', '1')
        indexed = false
      end
    end
  end
end
return 1
`;
