/**
 * One round trip for an L2 read that may lead to an upstream fetch: the value, and, when asked,
 * the key's fetch lock (cache.distributedLock). Reading and locking apart cost a second round trip
 * on every miss, which is why the lock used to be off by default.
 *
 * KEYS[1] the value, KEYS[2] its lock (both under the workspace's hash tag: one Cluster slot).
 * ARGV[1] the lock token ('' asks for no lock), ARGV[2] its TTL in ms, ARGV[3] '1' to take the
 * lock whatever the read found (a refresh: the value there is the one it renews), '0' only when
 * nothing is stored (a miss: a stored value is served, or refreshed under its own rules).
 * Answers {value or false, 1 taken | 0 held by another | -1 not asked}.
 */
export const READ_SCRIPT = `local value = redis.call('get', KEYS[1])
if ARGV[1] == '' or (value and ARGV[3] == '0') then
  return {value, -1}
end
if redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then
  return {value, 1}
end
return {value, 0}`;
