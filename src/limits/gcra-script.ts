/**
 * The GCRA of gcra.ts as one Redis script, so every instance shares a key's quota and one round
 * trip both decides and records a request. It reads Redis' own clock (TIME), so instances whose
 * clocks differ still agree. The same exact arithmetic as gcra.ts: the TAT is stored as
 * "<microseconds> <part> <per>" (the instant us + part/per µs), every sum and comparison on
 * integers below 2^53, which Lua's numbers hold exactly; math.fmod is exact where a / b may
 * round. A value of the earlier format (whole milliseconds) is read as such.
 * KEYS[1] the key's TAT; ARGV[1] the window (µs), ARGV[2] the requests per window.
 * Returns {allowed 0/1, remaining, µs until the quota is whole, µs until one more is allowed}.
 */
export const GCRA_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local window = tonumber(ARGV[1])
local per = tonumber(ARGV[2])
local stepPart = math.fmod(window, per)
local stepUs = (window - stepPart) / per
local us, part = 0, 0
local raw = redis.call('GET', KEYS[1])
if raw then
  local sUs, sPart, sPer = string.match(raw, '^(%d+) (%d+) (%d+)$')
  if sUs then
    us, part = tonumber(sUs), tonumber(sPart)
    local was = tonumber(sPer)
    -- Counted under another quota (a reload): the fraction in this denominator, rounded up.
    if was ~= per then
      part = math.min(per, math.ceil(part * per / was))
      if part == per then us, part = us + 1, 0 end
    end
  elseif string.match(raw, '^%d+$') then
    us = tonumber(raw) * 1000
  end
end
if us < now or (us == now and part == 0) then us, part = now, 0 end
local nextUs = us + stepUs
local nextPart = part + stepPart
if nextPart >= per then nextUs, nextPart = nextUs + 1, nextPart - per end
local allowAt = nextUs - window
local function ceilUs(whole, frac) if frac > 0 then return whole + 1 end return whole end
if allowAt > now or (allowAt == now and nextPart > 0) then
  return {0, 0, ceilUs(us - now, part), ceilUs(allowAt - now, nextPart)}
end
local leftNum = per * (window - (nextUs - now)) - nextPart
local left = (leftNum - math.fmod(leftNum, window)) / window
local ttlMs = math.floor((nextUs - now) / 1000) + 1
-- Written with %d: Lua's default number format would round large values.
redis.call('SET', KEYS[1], string.format('%d %d %d', nextUs, nextPart, per), 'PX', ttlMs)
return {1, math.max(0, left), ceilUs(nextUs - now, nextPart), 0}
`;
