import { memoryProvider } from '@conclave/core';
import { isBackendProvider, type BackendProvider } from '@conclave/core/spi';
import { driverMissingProvider, missingDrivers } from './backend-drivers';
import { installedBackendPackages, type BackendPackage } from './installed-backends';

/**
 * The backends the `conclave` command knows, in the order its help and an unknown scheme's
 * message list them: core's in-memory backend, then every backend package installed beside this
 * one (`installedBackendPackages`). Nothing here names a backend: a package registers by
 * declaring `"conclave": { "backend": "<kind>" }` in its package.json and exporting the provider
 * of that kind. Each package is loaded now, its driver only when a backend first connects (see
 * `loadedOnFirstUse` in core), so that the help and a usage error stay quick. A backend whose
 * driver is not installed is still listed, and refuses its URLs naming what to install.
 */
export const BACKEND_PROVIDERS: readonly BackendProvider[] = [memoryProvider, ...installedBackendPackages(__dirname).map(providerOf)];

/** The provider of `pkg`, or one that names its missing drivers (see `driverMissingProvider`). */
function providerOf(pkg: BackendPackage): BackendProvider {
  const missing = missingDrivers(pkg);
  if (missing.length === 0) return loadProvider(pkg);
  let loaded: BackendProvider | undefined;
  try {
    loaded = loadProvider(pkg);
  } catch {
    // A package that loads its driver at once: known by its kind until the driver is installed.
  }
  return driverMissingProvider(pkg, missing, loaded);
}

/** The provider of the kind `pkg` declares, from its main entry; throws naming the package when there is none. */
function loadProvider(pkg: BackendPackage): BackendProvider {
  let exported: unknown;
  try {
    // By name, as an import would: resolved from this folder, that is the copy the scan found first.
    exported = require(pkg.name) as unknown;
  } catch (err) {
    throw new Error(`cannot load the backend package ${pkg.name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, { cause: err });
  }
  const provider = Object.values(exported as object).find((value) => isBackendProvider(value) && value.kind === pkg.kind);
  if (!provider) {
    throw new Error(`${pkg.name} declares the backend "${pkg.kind}" in its package.json but exports no provider of that kind`);
  }
  return provider as BackendProvider;
}
