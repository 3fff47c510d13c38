import { createHash } from 'node:crypto';

/** A Lua script and its SHA1, sent with EVALSHA (EVAL only after NOSCRIPT). */
export interface LuaScript {
  name: string;
  source: string;
  sha: string;
  /** A `batched` script: the keys and arguments each call must have. */
  perCall?: { keys: number; args: number };
}

function script(name: string, body: string): LuaScript {
  return scriptOf(name, PRELUDE + body);
}

function scriptOf(name: string, source: string): LuaScript {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

/** Most calls one `batched` script runs at once, so that one command does not hold the server for long. */
export const MAX_BATCHED_CALLS = 100;

/**
 * The script of `body` for many calls at once, each with `keysPerCall` keys and `argsPerCall`
 * arguments: KEYS and ARGV are the calls' one after another. Each call runs `body` as the script
 * alone would (the same keys and arguments, the same server time), in order; its reply is the
 * body's, or {-1, message} when it raised an error, which fails that call alone (as its own
 * EVALSHA would have). One command instead of one per call: a process renewing thousands of
 * leases a second spends much of its time on the commands themselves. The keys span elections,
 * so hash slots: fine on one master (conclave does not run on Redis Cluster).
 */
function batched(name: string, body: string, keysPerCall: number, argsPerCall: number): LuaScript {
  const made = scriptOf(
    name,
    `${PRELUDE}
local function one(KEYS, ARGV)
${body}
end
local nk, na = ${keysPerCall}, ${argsPerCall}
local out = {}
for i = 0, #KEYS / nk - 1 do
  local k, a = {}, {}
  for j = 1, nk do k[j] = KEYS[i * nk + j] end
  for j = 1, na do a[j] = ARGV[i * na + j] end
  local ok, r = pcall(one, k, a)
  if ok then
    out[i + 1] = r
  else
    -- A server error (redis.call raised it) is a table with err; a Lua error is a string.
    out[i + 1] = {-1, type(r) == 'table' and tostring(r.err) or tostring(r)}
  end
end
return out
`,
  );
  return { ...made, perCall: { keys: keysPerCall, args: argsPerCall } };
}

// TIME is the server's clock, the only clock a lease is measured on. Before Redis 5, a script
// must switch to effect replication before writing after a non-deterministic command; from 5 on
// that is the default and the call is a no-op (it is deprecated in 7, not removed).
// Tokens travel as decimal strings: Lua numbers are doubles and would print large ones as 1e+12.
const PRELUDE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function num(s) return tonumber(s) or 0 end
local function str(n) return string.format('%.0f', n) end
local function next_token(term, floor)
  local n = term + 1
  if floor == '1' and now > n then n = now end
  return n
end
-- Leader metadata kept in the lease hash: value (published by the holder; ARGV '' = none, else
-- '=' then the value), since (the term's start) and renewed (last take, join or renewal), server ms;
-- and lease, the length (ms) of the holder's last take, join or renewal, which followers read to
-- know when a renewal they are told of ends (keyspace notifications carry no TTL).
local function set_value(key, arg)
  if not arg or arg == '' then redis.call('HDEL', key, 'value') else redis.call('HSET', key, 'value', string.sub(arg, 2)) end
end
local function fence_wait(key, lease)
  local info = redis.pcall('INFO', 'server')
  local run, up = nil, nil
  if type(info) == 'string' then
    run = string.match(info, 'run_id:(%w+)')
    up = tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  end
  run = run or 'unknown'
  local since = now
  -- INFO's uptime is the server's clock in whole seconds minus its start in whole seconds: it
  -- reads 1 as soon as a second boundary has passed, even 10 ms after the start. So the start is
  -- taken as the latest instant that uptime allows (the fence errs long, never short).
  if up then since = math.min(now, (math.floor(now / 1000) - up + 1) * 1000) end
  local mark = redis.call('GET', key)
  local r, s = nil, nil
  if mark then r, s = string.match(mark, '^(%w+):(%d+)$') end
  if not r then
    redis.call('SET', key, run .. ':' .. str(since))
  elseif r ~= run then
    since = now
    redis.call('SET', key, run .. ':' .. str(now))
  else
    -- Same process: the first look's start is the tightest bound (a later look's uptime allows
    -- a start as late as the next whole second, and a promoted replica's uptime predates its
    -- promotion).
    since = tonumber(s)
  end
  return since + lease - now
end
`;

// The restart fence (Redlock's "delayed restart", done by the library rather than asked of
// operators). A master restarted without persistence or from an older snapshot, or a replica
// promoted in its place, may have lost leases that candidates still count on: granting a new term
// there at once could make a second leader while the first one's lease runs. So a new term is
// granted only once a whole lease (the asker's) has passed since this master began to hold its
// present state: its start (from INFO's whole-second uptime, taken as late as it allows, so the
// fence errs long), or the moment it was
// first seen under another run id than the one recorded in the prefix's epoch key (a promoted
// replica carries its old master's key). Every lease granted before the loss has ended by then.
// Renewals and hand-overs of live leases are not delayed, and a server up for longer than a lease
// costs nothing. Without the right to run INFO, the fence starts when the epoch key is first
// found missing. A FLUSHALL on a running server is not detected: don't flush a live election.

/**
 * Acquire-or-join (a watchdog lock's `tryLock`, made atomic and fenced).
 * KEYS: lease, term, candidates, epoch. ARGV: id (instance id), leaseMs, candidateTtlMs
 * (0 = not tracked), assign ('1': one master, the token is chosen here; '0': quorum prepare,
 * token '0' until COMMIT), clockFloor ('1'/'0'), candidate (the instance's bare candidate id: a
 * lease forced to it is adopted, same term, once committed), elected (channel told of a new term
 * for observers; '' = none; only when assign is '1'), value ('' = none, else '=' value).
 * Returns {1, token, term, now} already ours (lease extended) | {2, token, term, now} taken now |
 * {0, holder, token, pttl, lease length or false} held by another | {3, waitMs, term, now} free,
 * but this master is inside its restart fence for waitMs more.
 */
export const CAMPAIGN = script(
  'campaign',
  `
local id, lease, cttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if cttl > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  redis.call('ZADD', KEYS[3], now + cttl, id)
  redis.call('PEXPIRE', KEYS[3], cttl)
end
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
local term = num(redis.call('GET', KEYS[2]))
if cur[1] then
  -- A lease forced to our bare candidate id is adopted once its term is committed (token not
  -- '0'): adopting a quorum force's prepared lease would make its COMMIT miss this master.
  if cur[1] == id or (cur[1] == ARGV[6] and cur[2] ~= '0') then
    if cur[1] ~= id then redis.call('HSET', KEYS[1], 'holder', id) end
    redis.call('HSET', KEYS[1], 'renewed', str(now), 'lease', str(lease))
    set_value(KEYS[1], ARGV[8])
    redis.call('PEXPIRE', KEYS[1], lease)
    return {1, cur[2] or '0', str(term), str(now)}
  end
  return {0, cur[1], cur[2] or '0', redis.call('PTTL', KEYS[1]), redis.call('HGET', KEYS[1], 'lease')}
end
local wait = fence_wait(KEYS[4], lease)
if wait > 0 then return {3, str(wait), str(term), str(now)} end
local token = '0'
if ARGV[4] == '1' then
  token = str(next_token(term, ARGV[5]))
  redis.call('SET', KEYS[2], token)
end
redis.call('HSET', KEYS[1], 'holder', id, 'token', token, 'since', str(now), 'renewed', str(now), 'lease', str(lease))
set_value(KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[1], lease)
if ARGV[4] == '1' and ARGV[7] and ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[7], 'elected') end
return {2, token, str(term), str(now)}
`,
);

/**
 * Quorum phase 2: gives the prepared lease its token and raises the term counter to it (max
 * semantics, so a later majority read sees at least this token).
 * KEYS: lease, term. ARGV: id, token, elected (channel told of the new term for observers; '' =
 * none). Returns 1, or 0 if the lease is no longer ours.
 */
export const COMMIT = script(
  'commit',
  `
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'token', ARGV[2])
if num(ARGV[2]) > num(redis.call('GET', KEYS[2])) then redis.call('SET', KEYS[2], ARGV[2]) end
if ARGV[3] and ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], 'elected') end
return 1
`,
);

/**
 * Watchdog renewal: compare (holder and token) and PEXPIRE, so a stale holder cannot extend a
 * lease that was taken over, cleared or forced.
 * KEYS: lease, term, candidates. ARGV: id, token, leaseMs, candidateTtlMs, repair ('1' in quorum).
 * With repair, a master that lost the lease (restart) or never saw our token (late prepare) gets
 * it back, unless its term counter shows a newer term; such a master does not count as "held".
 * Returns {1} held | {2} repaired | {0, holder or false, holder's token or false}.
 */
const RENEW_BODY = `
local id, token, lease, cttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
local code = 0
if cur[1] == id and cur[2] == token then
  code = 1
elseif ARGV[5] == '1' and (not cur[1] or (cur[1] == id and cur[2] == '0'))
    and num(redis.call('GET', KEYS[2])) <= num(token) then
  redis.call('HSET', KEYS[1], 'holder', id, 'token', token)
  redis.call('SET', KEYS[2], token)
  code = 2
end
if code == 0 then return {0, cur[1], cur[2]} end
redis.call('HSET', KEYS[1], 'renewed', str(now), 'lease', str(lease))
if code == 2 and not redis.call('HGET', KEYS[1], 'since') then redis.call('HSET', KEYS[1], 'since', str(now)) end
redis.call('PEXPIRE', KEYS[1], lease)
if cttl > 0 then
  redis.call('ZADD', KEYS[3], now + cttl, id)
  redis.call('PEXPIRE', KEYS[3], cttl)
end
return {code}
`;
export const RENEW = script('renew', RENEW_BODY);
/** RENEW for many leases in one command (see `batched`): one reply per lease, in order. */
export const RENEW_MANY = batched('renew-many', RENEW_BODY, 3, 5);

/**
 * Compare-and-delete (a lock's `unlock`, guarded by holder), then a wake-up
 * message for followers.
 * KEYS: lease, candidates. ARGV: id, token ('' = any term of this holder), publish ('1'/'0'),
 * channel, withdraw ('1': also leave the candidate set). Returns 1 if a lease was deleted.
 */
export const RELEASE = script(
  'release',
  `
local id, token = ARGV[1], ARGV[2]
if ARGV[5] == '1' then redis.call('ZREM', KEYS[2], id) end
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
if cur[1] ~= id or (token ~= '' and cur[2] ~= token and cur[2] ~= '0') then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[3] == '1' then redis.call('PUBLISH', ARGV[4], 'released') end
return 1
`,
);

// Admin revocation (clearLeader, forceLeader). A revoked lease becomes a tombstone: the same
// hash with holder ' <grace>' (a space then ms; no candidate or instance id starts with a space)
// and the revoked term's token, expiring `grace` ms after the revoked lease would have. Its
// holder's renewals are refused (holder mismatch), campaigns find a lease held by another and
// stay followers, and nothing but INSTALL, once the revoked lease has ended, replaces it.

/**
 * Admin, revocation: the live lease becomes a tombstone living `grace` past its end; a tombstone
 * already there (another admin's) is made to live `grace` past its revoked lease's end if it
 * would not. With `keep`, a lease held by that candidate (bare or any instance) is left alone.
 * KEYS: lease. ARGV: grace, keep ('' = none), publish, channel.
 * Returns {0} free | {1, token} held by `keep` | {2, ms until the revoked lease ends, token}.
 */
export const REVOKE = script(
  'revoke',
  `
local grace, keep = tonumber(ARGV[1]), ARGV[2]
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token')
if not cur[1] then return {0} end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then pttl = 0 end
if string.sub(cur[1], 1, 1) == ' ' then
  local old = num(string.sub(cur[1], 2))
  local ends = pttl - old
  if old < grace and ends + grace > 0 then
    redis.call('HSET', KEYS[1], 'holder', ' ' .. str(grace))
    redis.call('PEXPIRE', KEYS[1], ends + grace)
  end
  return {2, str(ends), cur[2] or '0'}
end
if keep ~= '' and (cur[1] == keep or string.sub(cur[1], 1, #keep + 1) == keep .. ' ') then
  return {1, cur[2] or '0'}
end
redis.call('HSET', KEYS[1], 'holder', ' ' .. str(grace))
if pttl + grace > 0 then redis.call('PEXPIRE', KEYS[1], pttl + grace) else redis.call('DEL', KEYS[1]) end
if ARGV[3] == '1' then redis.call('PUBLISH', ARGV[4], 'revoked') end
return {2, str(pttl), cur[2] or '0'}
`,
);

/**
 * Admin force, second step: the candidate leads in a new term, only if the lease is free or a
 * tombstone whose revoked lease has ended.
 * KEYS: lease, term. ARGV: id, leaseMs, assign ('1' one master / '0' quorum prepare), clockFloor,
 * publish, channel. Returns {1, token, term, now} | {0} when a lease still stands.
 */
export const INSTALL = script(
  'install',
  `
local cur = redis.call('HGET', KEYS[1], 'holder')
if cur then
  if string.sub(cur, 1, 1) ~= ' ' then return {0} end
  if redis.call('PTTL', KEYS[1]) - num(string.sub(cur, 2)) > 0 then return {0} end
end
local token = '0'
local term = num(redis.call('GET', KEYS[2]))
if ARGV[3] == '1' then
  token = str(next_token(term, ARGV[4]))
  redis.call('SET', KEYS[2], token)
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'token', token, 'since', str(now), 'renewed', str(now), 'lease', ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
if ARGV[3] == '1' and ARGV[5] == '1' then redis.call('PUBLISH', ARGV[6], 'forced') end
return {1, token, str(term), str(now)}
`,
);

/**
 * KEYS: lease. Returns {holder, token, pttl, now, value, since, renewed} (the last three false
 * when not kept) or {} when nobody holds a live lease.
 */
export const LEADER = script(
  'leader',
  `
local cur = redis.call('HMGET', KEYS[1], 'holder', 'token', 'value', 'since', 'renewed')
if not cur[1] then return {} end
return {cur[1], cur[2] or '0', redis.call('PTTL', KEYS[1]), str(now), cur[3], cur[4], cur[5]}
`,
);

/**
 * KEYS: lease, candidates. Prunes candidates not seen for their TTL, then returns
 * {holder or '', id1, seen1, id2, seen2, …} ordered by when each counts as gone.
 */
export const CANDIDATES = script(
  'candidates',
  `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local holder = redis.call('HGET', KEYS[1], 'holder') or ''
local out = {holder}
local all = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #all do out[#out + 1] = all[i] end
return out
`,
);

/** KEYS: term. 1 when the election's term counter exists (it has had a term or a raised floor), else 0. */
export const EXISTS = script(
  'exists',
  `
return redis.call('EXISTS', KEYS[1])
`,
);

/** Quorum mode: the wake-up message sent after a force, once its term is committed. ARGV: channel, message. */
export const NOTIFY = script(
  'notify',
  `
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
`,
);

/** Raises the term counter to at least ARGV[1] (max semantics). KEYS: term. */
export const FLOOR = script(
  'floor',
  `
if num(ARGV[1]) > num(redis.call('GET', KEYS[1])) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`,
);
