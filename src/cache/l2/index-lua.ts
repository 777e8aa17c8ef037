/**
 * Redis's index of holders, stated once in Lua for the two scripts that use it: the checked write
 * (checked-set-script.ts) adds a value's pairs in the same script as the value, and the exact
 * purge (purge/scripts.ts) reads the pairs of what it names, and nothing else.
 *
 * Under the workspace's current `all` token, `<head><selector>` is a sorted set of the resource
 * keys a selector reaches (entry/surrogates.ts#reachedBy: the writer hands the list over, the
 * script restates no rule), each scored by its value's expiry (epoch ms), trimmed by score as it
 * is written and read, and set to expire with its last member: it shrinks back as values expire.
 * `<head>_` (the witness) scores each selector by the latest expiry it was given, so a set gone
 * while the witness says it should hold live members was evicted: the index is then incomplete
 * until those members' values expire, and the generation hash says so (`ixlost`, an instant).
 * The hash also keeps `ixw`, the `all` token the index was written under, and `ixmax`, the
 * latest expiry of any value it indexed, so a witness evicted is told from one never written.
 * Names come from redis/key-layout.ts#purgeIndexHead; the hash is KEYS[1] of both scripts.
 */

/**
 * Lua: `indexState(gen, all, head, now)` → the index's state from the hash fields `gen`
 * ({ixw, ixmax, ixlost}, as HMGET read them): {max, lost}, with `lost` raised to `max` when the
 * witness is gone while values it named may live. `indexValue(state, head, key, selectors,
 * expiry, now)` adds one value's pairs (raising `lost` when a set it should find was evicted).
 * `saveIndex(state, all, head, now)` trims the witness and writes the state back.
 */
export const INDEX_LUA = `
local function indexState(gen, all, head, now)
  local state = {max = 0, lost = 0}
  if gen[1] ~= all then return state end
  state.max = tonumber(gen[2]) or 0
  state.lost = tonumber(gen[3]) or 0
  if state.max > now and redis.call('exists', head .. '_') == 0 then
    state.lost = math.max(state.lost, state.max)
  end
  return state
end
local function expireWith(set)
  local top = redis.call('zrange', set, -1, -1, 'WITHSCORES')[2]
  if not top then return end
  if tonumber(top) == math.huge then redis.call('persist', set)
  else redis.call('pexpireat', set, math.ceil(tonumber(top))) end
end
local function indexValue(state, head, key, selectors, expiry, now)
  local witness = head .. '_'
  for selector in string.gmatch(selectors, '%S+') do
    local set = head .. selector
    local was = tonumber(redis.call('zscore', witness, selector) or '-1')
    if was > now and redis.call('exists', set) == 0 then state.lost = math.max(state.lost, was) end
    redis.call('zadd', set, expiry, key)
    redis.call('zremrangebyscore', set, '-inf', '(' .. now)
    expireWith(set)
    if was < expiry then redis.call('zadd', witness, expiry, selector) end
  end
  if expiry > state.max then state.max = expiry end
end
local function saveIndex(state, all, head, now)
  local witness = head .. '_'
  redis.call('zremrangebyscore', witness, '-inf', '(' .. now)
  expireWith(witness)
  redis.call('hset', KEYS[1], 'ixw', all, 'ixmax', state.max, 'ixlost', state.lost)
end
`;
