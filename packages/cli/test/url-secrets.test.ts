import { inspect } from 'node:util';
import { isConclaveError, redactUrl } from '@conclave/core';
import { redactText, type ElectionBackend } from '@conclave/core/spi';
import { Prng, seedFromEnv } from '@conclave/test-harness';
import { createBackend } from '../src/backend-url';
import { assertBuilt, runConclave } from './cli-process';
import { leaks, secretUrl, type SecretUrl } from './url-shapes';

/**
 * No message shows a password, whatever the URL's shape: every scheme, several hosts, chroots,
 * nested migration URLs, passwords holding `@ : / % # ? & = +`, raw or encoded or badly encoded.
 * The URLs are random from a printed seed (CONCLAVE_SEED replays one).
 */

const seed = seedFromEnv('CONCLAVE_SEED', 20_260_611);
const SAMPLES = 600;

function refusedBeforeIo(url: string): boolean {
  try {
    void createBackend(url).close();
    return false;
  } catch {
    return true;
  }
}

function describeSecret(secret: SecretUrl): string {
  return `seed ${seed}, ${secret.shape}: ${secret.url} (password runs ${secret.fragments.join(' ')})`;
}

describe(`URL passwords never reach a message (seed ${seed})`, () => {
  test('redactUrl and redactText hide every run of every password, for every shape', () => {
    const rng = new Prng(seed);
    for (let i = 0; i < SAMPLES; i++) {
      const secret = secretUrl(rng);
      const shown = [redactUrl(secret.url), redactText(`failed: "${secret.url}" then`)].join('\n');
      expect({ leaked: leaks(shown, secret), shown, url: describeSecret(secret) }).toEqual(
        expect.objectContaining({ leaked: [] }),
      );
    }
  });

  test('building a backend from any such URL throws errors whose message, details and causes hide the password', async () => {
    const rng = new Prng(seed + 1);
    const built: ElectionBackend[] = [];
    let thrown = 0;
    try {
      for (let i = 0; i < SAMPLES; i++) {
        const secret = secretUrl(rng);
        try {
          built.push(createBackend(secret.url));
        } catch (err) {
          thrown++;
          expect(isConclaveError(err)).toBe(true);
          // The message, every detail and the whole cause chain, as a logger would print them.
          const shown = `${String(err)}\n${inspect(err, { depth: 10 })}\n${JSON.stringify(err)}`;
          expect({ leaked: leaks(shown, secret), shown, url: describeSecret(secret) }).toEqual(
            expect.objectContaining({ leaked: [] }),
          );
        }
      }
    } finally {
      await Promise.all(built.map((b) => b.close().catch(() => undefined)));
    }
    // Most random shapes are invalid somewhere: the error paths are what this covers.
    expect(thrown).toBeGreaterThan(SAMPLES / 2);
  });
});

describe('URL passwords never reach the conclave command\'s output', () => {
  beforeAll(assertBuilt);

  // A handful of the fixed shapes that used to leak, plus random ones, through the built CLI with
  // debug logs: from --backend, --backend-file's contents and CONCLAVE_BACKEND alike.
  // [URL, exit code: 2 refused before any I/O, 1 no server there]
  const known: Array<[string, number, string[]]> = [
    ['zookeeper://admin:Hunterqxz@', 2, ['Hunterqxz']],
    ['redis://:Hunterqxz@', 2, ['Hunterqxz']],
    ['mysql://root:p@Hunterqxz@127.0.0.1:1/test', 1, ['Hunterqxz']],
    [`migrate:dual?from=${encodeURIComponent('mysql://root:Hunterqxz@127.0.0.1:1/test')}&to=memory%3B`, 2, ['Hunterqxz']],
  ];

  test.each(known)('%s: exit %d, and neither stdout nor stderr shows the password', async (url, exitCode, fragments) => {
    const r = await runConclave(['status', '--backend', url, '--election', 'secrets', '--log-level', 'debug']);
    expect(r.code).toBe(exitCode);
    expect(leaks(r.stdout + r.stderr, { url, shape: 'fixed', fragments })).toEqual([]);
  });

  test('random invalid URLs through the CLI (environment variable): exit 2, stdout and stderr never show the password', async () => {
    const rng = new Prng(seed + 2);
    for (let i = 0; i < 2; i++) {
      let secret = secretUrl(rng);
      // Only URLs refused before any I/O: a valid one would wait for a server that is not there.
      while (refusedBeforeIo(secret.url) === false) secret = secretUrl(rng);
      const r = await runConclave(['status', '--election', 'secrets', '--log-level', 'debug'], 30_000, { CONCLAVE_BACKEND: secret.url });
      expect(r.code).toBe(2);
      expect({ leaked: leaks(r.stdout + r.stderr, secret), url: describeSecret(secret) }).toEqual(
        expect.objectContaining({ leaked: [] }),
      );
    }
  });
});
