/**
 * The reservation of gcra.ts as one Redis script, so every instance shares a key's quota and one
 * round trip both decides and records a request (or reserves a lease of several slots,
 * quota-lease.ts). It reads Redis' own clock (TIME), so instances whose clocks differ still
 * agree. The same exact arithmetic as gcra.ts: the TAT is stored as "<µs> <part> <per>" (the
 * instant µs + part/per), every sum and comparison on integers below 2^53, which Lua's numbers
 * hold exactly; math.fmod is exact where a / b may round. A value of the earlier format (whole
 * milliseconds) is read as such.
 * KEYS[1] the key's TAT; ARGV[1] the window (µs), ARGV[2] the requests per window, ARGV[3..4]
 * what is wanted (gcra.ts Want: demand, lease). Returns {granted (0 refused),
 * remaining, µs until the quota is whole, µs until one more is allowed (refused only), now
 * (µs), start µs, start part}.
 */
import { FAR } from './gcra.js';

export const GCRA_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local window = tonumber(ARGV[1])
local per = tonumber(ARGV[2])
local demand = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local function divide(a, b)
  local rem = math.fmod(a, b)
  return (a - rem) / b, rem
end
local function ceilUs(whole, frac) if frac > 0 then return whole + 1 end return whole end
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
local stepUs, stepPart = divide(window, per)
local available = divide(per * (now + window - us) - part, window)
if available < 1 then
  local allowUs, allowPart = us + stepUs - window, part + stepPart
  if allowPart >= per then allowUs, allowPart = allowUs + 1, allowPart - per end
  return {0, 0, ceilUs(us - now, part), ceilUs(allowUs - now, allowPart), now, us, part}
end
local wanted = demand
if lease > 0 and available >= ${FAR} * (demand + lease) then wanted = demand + lease end
-- gcra.ts maxGrant: granted × stepPart below 2^52.
local maxGrant = math.floor(4503599627370496 / math.max(1, stepPart))
-- A renewal (no demand) not far from the limit: nothing reserved, nothing refused.
if wanted == 0 then return {0, available, 0, 0, now, us, part} end
local granted = math.max(1, math.min(wanted, maxGrant, math.floor(available / 2)))
local carried, endPart = divide(part + granted * stepPart, per)
local endUs = us + granted * stepUs + carried
local ttlMs = math.floor((endUs - now) / 1000) + 1
-- Written with %d: Lua's default number format would round large values.
redis.call('SET', KEYS[1], string.format('%d %d %d', endUs, endPart, per), 'PX', ttlMs)
return {granted, available - granted, ceilUs(endUs - now, endPart), 0, now, us, part}
`;
