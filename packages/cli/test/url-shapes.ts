import type { Prng } from '@conclave/test-harness';

/**
 * Backend URLs of every scheme and shape, each holding a password, for tests that check that no
 * message shows it. A password is random letter runs joined by the characters URLs treat
 * specially; each run is long and random enough that finding one in a message means a leak,
 * whole or in part.
 */
export interface SecretUrl {
  url: string;
  /** What the URL is, for a failure message. */
  shape: string;
  /** The password's letter runs: none may appear in any message. */
  fragments: string[];
}

const SPECIALS = ['@', ':', '/', '%', '#', '?', '&', '=', '+', '%ZZ', '%4', '%25'];
const LETTERS = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz';

interface Password {
  raw: string;
  fragments: string[];
}

function password(rng: Prng): Password {
  const fragments: string[] = [];
  let raw = '';
  const runs = rng.int(1, 4);
  for (let i = 0; i < runs; i++) {
    if (i > 0 || rng.chance(0.3)) raw += rng.pick(SPECIALS);
    let run = '';
    for (let j = 0; j < 7; j++) run += rng.pick([...LETTERS]);
    fragments.push(run);
    raw += run;
  }
  if (rng.chance(0.3)) raw += rng.pick(SPECIALS);
  return { raw, fragments };
}

/** How the password is written: encoded as it should be, raw, or with a broken escape. */
function written(rng: Prng, pw: Password): string {
  switch (rng.int(0, 3)) {
    case 0:
      return encodeURIComponent(pw.raw);
    case 1:
      return pw.raw;
    case 2:
      return encodeURIComponent(pw.raw).replace(/%(..)/, '%Z$1');
    default:
      return `${encodeURIComponent(pw.raw)}%`;
  }
}

const USERS = ['', 'root', 'app', 'admin', 'x.y-z_1'];

function hosts(rng: Prng, max: number): string {
  const list = ['127.0.0.1:1', 'localhost:1', '[::1]:1', 'db.invalid:2', '127.0.0.1', 'h:99999', 'h:x'];
  const n = rng.int(1, max);
  return Array.from({ length: n }, () => rng.pick(list)).join(',');
}

function query(rng: Prng, known: string[], pw: Password): string {
  const params: string[] = [];
  if (rng.chance(0.3)) params.push(`${rng.pick(known)}=${rng.pick(['true', '1', '5000', 'x', '/conclave'])}`);
  if (rng.chance(0.2)) params.push(`${rng.pick(['password', 'pass', 'secret', 'token', 'auth', 'apiKey'])}=${written(rng, pw)}`);
  if (rng.chance(0.1)) params.push('frobnicate=1');
  return params.length > 0 ? `?${params.join('&')}` : '';
}

function plain(rng: Prng, pw: Password): { url: string; shape: string } {
  const user = rng.pick(USERS);
  // `user:pw@`, `:pw@`, or a bare `pw@` (how some clients take a password alone; a colon in it
  // would make its first part a user name, which is shown).
  const bare = { raw: pw.raw.replace(/:/g, '!'), fragments: pw.fragments };
  const userinfo = rng.chance(0.15) ? `${written(rng, bare)}@` : `${user}:${written(rng, pw)}@`;
  switch (rng.int(0, 3)) {
    case 0: {
      const scheme = rng.pick(['mysql', 'mariadb']);
      const db = rng.pick(['/test', '/test', '', '/a/b', '/db%ZZ']);
      return { url: `${scheme}://${userinfo}${hosts(rng, 1)}${db}${query(rng, ['table', 'connectionLimit', 'ssl', 'sslCa', 'sslRejectUnauthorized'], pw)}`, shape: 'mysql' };
    }
    case 1: {
      const scheme = rng.pick(['redis', 'rediss']);
      const db = rng.pick(['', '/0', '/3', '/99', '/x', '/-1']);
      return { url: `${scheme}://${userinfo}${hosts(rng, 1)}${db}${query(rng, ['tokenClockFloor'], pw)}`, shape: scheme };
    }
    case 2: {
      const db = rng.pick(['', '/0', '/x']);
      return { url: `redis://${userinfo}${hosts(rng, 3)}${db}${query(rng, ['tokenClockFloor'], pw)}`, shape: 'redis quorum' };
    }
    default: {
      const chroot = rng.pick(['', '/', '/app', '/app/x', '/bad//path', '/zookeeper']);
      // A missing host after the user info is one of the shapes that used to leak.
      const servers = rng.chance(0.15) ? '' : hosts(rng, 3).replace(/:1\b/g, ':2181');
      return {
        url: `zookeeper://${userinfo}${servers}${chroot}${query(rng, ['sessionTimeoutMs', 'requestTimeoutMs', 'root'], pw)}`,
        shape: 'zookeeper',
      };
    }
  }
}

/** One URL of a random shape, `migrate:` ones holding two inner URLs (each with a password). */
export function secretUrl(rng: Prng): SecretUrl {
  if (rng.chance(0.25)) {
    const a = password(rng);
    const b = password(rng);
    const from = plain(rng, a).url;
    const to = plain(rng, b).url;
    // Inner URLs as they should be written (encoded), raw, or encoded twice.
    const enc = (u: string) => rng.pick([encodeURIComponent(u), u, encodeURIComponent(encodeURIComponent(u))]);
    const phase = rng.pick(['from-only', 'dual', 'to-only', 'sideways']);
    return { url: `migrate:${phase}?from=${enc(from)}&to=${enc(to)}`, shape: 'migrate', fragments: [...a.fragments, ...b.fragments] };
  }
  const pw = password(rng);
  const { url, shape } = plain(rng, pw);
  return { url, shape, fragments: pw.fragments };
}

/** The fragments of `secret` found in `text` (empty when none leaked). */
export function leaks(text: string, secret: SecretUrl): string[] {
  return secret.fragments.filter((f) => text.includes(f));
}
