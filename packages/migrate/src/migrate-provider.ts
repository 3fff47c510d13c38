import { ConclaveError, createBackend, redactUrl } from '@conclave/core';
import { describeValue, providerUrl, type BackendProvider, type ElectionBackend } from '@conclave/core/spi';
import { MigratingBackend } from './migrating-backend';
import { MIGRATION_PHASES, type MigrationPhase } from './migration-options';

/**
 * `migrate:<from-only|dual|to-only>?from=<url>&to=<url>` → a `MigratingBackend` over two backends,
 * the inner URLs percent-encoded. Those are built by the providers `createBackend` was given (its
 * context), so a migration can run between any two kinds registered beside this one.
 */
export const migrateProvider: BackendProvider = {
  kind: 'migrate',
  schemes: ['migrate'],
  urlForms: [{ form: 'migrate:<from-only|dual|to-only>?from=<url>&to=<url>', what: 'an election moving between backends' }],
  fromUrl(url, context) {
    const text = providerUrl(migrateProvider, url);
    if (!context) {
      throw new ConclaveError(
        'INVALID_OPTIONS',
        'a migrate: URL names two other backends: build it with createBackend(url, providers), which gives the providers to build them with',
      );
    }
    return createMigratingBackend(text, context.providers);
  },
};

/** `migrate:<phase>?from=<url>&to=<url>` → a MigratingBackend over two backends built from their URLs by `providers`. */
export function createMigratingBackend(url: string, providers: readonly BackendProvider[]): MigratingBackend {
  const match = /^migrate:([a-z-]+)\?(.*)$/i.exec(url);
  const phase = match?.[1] as MigrationPhase | undefined;
  if (!match || !phase || !MIGRATION_PHASES.includes(phase)) {
    throw new ConclaveError(
      'INVALID_URL',
      `cannot parse the migration URL ${describeValue(redactUrl(url))}: expected migrate:<${MIGRATION_PHASES.join('|')}>?from=<url>&to=<url>`,
    );
  }
  const params = new URLSearchParams(match[2]);
  const fromUrl = params.get('from');
  const toUrl = params.get('to');
  if (!fromUrl || !toUrl || [...params.keys()].some((k) => k !== 'from' && k !== 'to')) {
    throw new ConclaveError('INVALID_URL', 'a migration URL needs exactly the parameters from=<url> and to=<url>');
  }
  if (/^migrate:/i.test(fromUrl) || /^migrate:/i.test(toUrl)) {
    throw new ConclaveError('INVALID_URL', 'a migration cannot be nested in another migration');
  }
  const from = createBackend(fromUrl, providers);
  let to: ElectionBackend;
  try {
    to = createBackend(toUrl, providers);
  } catch (err) {
    void from.close();
    throw err;
  }
  try {
    return new MigratingBackend({ from, to, phase });
  } catch (err) {
    // A pair the migration refuses (INVALID_OPTIONS): the two backends are nobody's to close.
    void from.close().catch(() => undefined);
    void to.close().catch(() => undefined);
    throw err;
  }
}
