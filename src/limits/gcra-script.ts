/**
 * The GCRA of gcra.ts as one Redis script, so every instance shares a key's quota and one round
 * trip both decides and records a request. It reads Redis' own clock (TIME), so instances whose
 * clocks differ still agree. KEYS[1] the key's TAT; ARGV[1] the emission interval (ms, may be
 * fractional), ARGV[2] the window (ms). Returns {allowed 0/1, remaining, reset ms, retry ms}.
 */
export const GCRA_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local start = math.max(tat, now)
local nextTat = start + interval
local allowAt = nextTat - window
if allowAt > now then
  return {0, 0, math.ceil(start - now), math.ceil(allowAt - now)}
end
-- Whole milliseconds, written with %d: Lua's default number format would round large values.
redis.call('SET', KEYS[1], string.format('%d', math.ceil(nextTat)), 'PX', math.max(1, math.ceil(nextTat - now)))
return {1, math.floor((window - (nextTat - now)) / interval), math.ceil(nextTat - now), 0}
`;
