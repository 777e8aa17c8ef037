/**
 * The Lua scripts behind purge receipts (purge/liveness.ts, purge/receipts.ts). KEYS[1] is the
 * sorted set of live instances, scored by the Redis time (ms) their liveness expires; KEYS[2] the
 * hash of the last purge-log entry each applied. Times come from Redis's own clock, so instances
 * on hosts whose clocks differ still agree on who is live.
 */

/** Redis's clock in milliseconds, as a Lua local `now`. */
const NOW = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * An instance renews its liveness and, when ARGV[3] is not empty, records the last purge-log entry
 * it applied; with ARGV[6] '1' (it applied new entries) it announces that on ARGV[5] as
 * `<instance> <entry>` (receipts.ts#acknowledgementOf reads it). ARGV[1] the
 * instance id, ARGV[2] its expiry (ms), ARGV[4] how long an expired instance is still reported
 * before it is forgotten (ms). Returns Redis's clock (ms).
 */
export const RENEW_SCRIPT = `${NOW}
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if ARGV[3] ~= '' then
  redis.call('hset', KEYS[2], ARGV[1], ARGV[3])
  if ARGV[6] == '1' then redis.call('publish', ARGV[5], ARGV[1] .. ' ' .. ARGV[3]) end
end
local gone = redis.call('zrangebyscore', KEYS[1], '-inf', now - tonumber(ARGV[4]), 'LIMIT', 0, 100)
if #gone > 0 then
  redis.call('zrem', KEYS[1], unpack(gone))
  redis.call('hdel', KEYS[2], unpack(gone))
end
return now
`;

/**
 * What a receipt needs: {live ids, the entry each applied ('' for none), expired ids still
 * reported}. ARGV[1] how long an expired instance is reported (ms).
 */
export const STATUS_SCRIPT = `${NOW}
local live = redis.call('zrangebyscore', KEYS[1], now, '+inf')
local applied = {}
if #live > 0 then
  applied = redis.call('hmget', KEYS[2], unpack(live))
  for i = 1, #live do applied[i] = applied[i] or '' end
end
local expired = redis.call('zrangebyscore', KEYS[1], now - tonumber(ARGV[1]), '(' .. now)
return {live, applied, expired}
`;
