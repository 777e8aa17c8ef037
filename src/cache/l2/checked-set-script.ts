/**
 * The one way a value reaches Redis: a write checked against the workspace's generation hash,
 * which the purge scripts move (purge/scripts.ts; the hash's fields `all` and `list` are shared
 * by both files, and must stay so).
 */

/**
 * The store-time check on Redis's side: KEYS[1] the generation hash, KEYS[2..] value keys;
 * ARGV[1], ARGV[2] the `all` and `list` tokens the fetch began under, then per key its bytes
 * and its TTL in ms ('0': none). Writes nothing and returns 0 when the hash holds other tokens
 * (a purge moved it since, or it was lost): a value fetched before a purge never lands where a
 * reader after it looks, whichever instance fetched it.
 */
export const CHECKED_SET_SCRIPT = `
local gen = redis.call('hmget', KEYS[1], 'all', 'list')
if gen[1] ~= ARGV[1] or gen[2] ~= ARGV[2] then return 0 end
for i = 2, #KEYS do
  local ttl = ARGV[2 * i]
  if ttl == '0' then redis.call('set', KEYS[i], ARGV[2 * i - 1])
  else redis.call('set', KEYS[i], ARGV[2 * i - 1], 'PX', ttl) end
end
return 1
`;
