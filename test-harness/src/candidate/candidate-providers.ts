import { pathToFileURL } from 'node:url';
import { isBackendProvider, type BackendProvider } from '@conclave/core/spi';

/**
 * The backend providers a candidate builds its backend with, loaded by module name in the child
 * (`CandidateConfig.providers`). Loaded at run time rather than imported, so that the harness
 * depends on core alone and a backend's tests do not pull in every other backend.
 */
export async function loadProviders(modules: readonly string[]): Promise<BackendProvider[]> {
  const providers = new Set<BackendProvider>();
  for (const name of modules) {
    const exported = await loadModule(name);
    const found = providersIn(exported);
    if (found.length === 0) throw new Error(`backend provider module ${name} exports no backend provider`);
    for (const provider of found) providers.add(provider);
  }
  return [...providers];
}

/** Every export that is a provider, or an array of providers (a registration module's list). */
function providersIn(exported: unknown): BackendProvider[] {
  if (typeof exported !== 'object' || exported === null) return [];
  const found: BackendProvider[] = [];
  for (const value of Object.values(exported)) {
    if (isBackendProvider(value)) found.push(value);
    else if (Array.isArray(value) && value.length > 0 && value.every(isBackendProvider)) found.push(...value);
  }
  return found;
}

async function loadModule(name: string): Promise<unknown> {
  // From the working directory first (a project using the harness), then beside the harness.
  let resolved: string;
  try {
    resolved = require.resolve(name, { paths: [process.cwd(), __dirname] });
  } catch (err) {
    throw new Error(`cannot find backend provider module ${name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  try {
    return require(resolved) as unknown;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_REQUIRE_ESM') throw err;
    return (await import(pathToFileURL(resolved).href)) as unknown;
  }
}
