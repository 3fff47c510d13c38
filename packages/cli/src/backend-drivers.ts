import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ConclaveError } from '@conclave/core';
import type { BackendProvider } from '@conclave/core/spi';
import type { BackendPackage } from './installed-backends';

/**
 * The drivers of `pkg` (`BackendPackage.drivers`) that its own `require` calls would not find.
 * The command depends on no driver: each is an optional peer, installed by whoever uses its
 * backend, so a missing one must be named before a backend is built rather than fail deep in a
 * connection. Looks for the driver's package.json in each `node_modules` from the package's real
 * folder up, as Node resolves a package name (NODE_PATH aside); loads nothing.
 */
export function missingDrivers(pkg: BackendPackage): string[] {
  const from = realpathSync(pkg.dir);
  return pkg.drivers.filter((driver) => !installedFrom(from, driver));
}

function installedFrom(dir: string, name: string): boolean {
  for (let at = dir; ; at = dirname(at)) {
    if (basename(at) !== 'node_modules' && existsSync(join(at, 'node_modules', name, 'package.json'))) return true;
    if (dirname(at) === at) return false;
  }
}

/** The one line that says what to install: `npm install mysql2`. */
export function installLine(missing: readonly string[]): string {
  return `npm install ${missing.join(' ')}`;
}

/**
 * Stands for a backend whose drivers are not installed: it serves the backend's schemes (those of
 * its provider when the package loaded without them; its kind otherwise, as for ZooKeeper, whose
 * package loads its driver at once) and lists its URL forms in the help, and it refuses every
 * URL with `DRIVER_MISSING`, naming the packages to install, before any I/O.
 */
export function driverMissingProvider(pkg: BackendPackage, missing: readonly string[], loaded: BackendProvider | undefined): BackendProvider {
  const needs = `needs ${missing.join(' and ')}: ${installLine(missing)}`;
  return {
    kind: pkg.kind,
    schemes: loaded?.schemes ?? [pkg.kind],
    urlForms: (loaded?.urlForms ?? [{ form: `${pkg.kind}://…`, what: `the ${pkg.name} backend` }]).map(({ form, what }) => ({ form, what: `${what} (${needs})` })),
    fromUrl(): never {
      throw new ConclaveError(
        'DRIVER_MISSING',
        `the ${pkg.kind} backend needs ${missing.join(' and ')}, not installed beside ${pkg.name}: ${installLine(missing)}`,
        { backend: pkg.kind },
      );
    },
  };
}
