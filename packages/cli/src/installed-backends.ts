import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A backend package, as its package.json declares it. */
export interface BackendPackage {
  /** The package's name, which loads it: `@conclave/redis`. */
  readonly name: string;
  /** The kind of the provider it exports (`BackendProvider.kind`): its `"conclave": { "backend": "redis" }`. */
  readonly kind: string;
  /** The backend packages among its peer dependencies: those a backend built over others (a migration) uses. */
  readonly builtOver: readonly string[];
  /**
   * Its drivers: the other peer dependencies, type packages left out (`mysql2`; `etcd3` and
   * `@grpc/grpc-js`). The command installs none of them: see `missingDrivers`.
   */
  readonly drivers: readonly string[];
  /** The folder it is installed in, from which its own `require` calls resolve. */
  readonly dir: string;
}

/** What is read of a package.json here. */
interface Manifest {
  name?: string;
  peerDependencies?: Record<string, string>;
  conclave?: { backend?: unknown; inProgress?: unknown };
}

/**
 * The backend packages installed where a module in `fromDir` resolves packages: every
 * `node_modules/@conclave/*` from `fromDir` up to the root, the nearest copy of a name first (as
 * `require` would find it). A package is a backend when its package.json says
 * `"conclave": { "backend": "<kind>" }`, unless it is still being built (`"inProgress"`). In name
 * order, the backends built over others (their peers) after the plain ones.
 *
 * Reads package.json files only: loading the packages is the caller's choice.
 */
export function installedBackendPackages(fromDir: string): BackendPackage[] {
  const manifests = new Map<string, { manifest: Manifest; dir: string }>();
  for (const scope of scopeFolders(fromDir)) {
    for (const entry of existsSync(scope) ? readdirSync(scope).sort() : []) {
      const file = join(scope, entry, 'package.json');
      if (!existsSync(file)) continue; // not a package (a stray folder, a dangling link)
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
      if (manifest.name && !manifests.has(manifest.name)) manifests.set(manifest.name, { manifest, dir: join(scope, entry) });
    }
  }
  const backends = [...manifests.values()].filter(
    (found): found is { manifest: Manifest & { name: string; conclave: { backend: string } }; dir: string } =>
      typeof found.manifest.conclave?.backend === 'string' && !found.manifest.conclave.inProgress,
  );
  const names = new Set(backends.map(({ manifest }) => manifest.name));
  const packages = backends.map(({ manifest: m, dir }): BackendPackage => {
    const peers = Object.keys(m.peerDependencies ?? {});
    return {
      name: m.name,
      kind: m.conclave.backend,
      builtOver: peers.filter((peer) => names.has(peer)),
      drivers: peers.filter((peer) => !peer.startsWith('@conclave/') && !peer.startsWith('@types/')),
      dir,
    };
  });
  // A backend over others is listed after the plain ones: its URLs hold theirs.
  const rank = (p: BackendPackage) => (p.builtOver.length > 0 ? 1 : 0);
  return packages.sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `<dir>/node_modules/@conclave` for `fromDir` and each folder above it, nearest first. */
function scopeFolders(fromDir: string): string[] {
  const folders: string[] = [];
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') folders.push(join(dir, 'node_modules', '@conclave'));
    if (dirname(dir) === dir) return folders;
  }
}
