import { pathToFileURL } from 'node:url';
import { isBackendKit, type BackendKit } from './backend-kit';

/**
 * The module a kit name stands for: a bare kind (`redis`) is the testing entry of the package of
 * that name (`@conclave/redis/testing`); anything with a `/` or an `@` is a module name or path.
 */
export function kitModuleName(nameOrModule: string): string {
  return /[/@]/.test(nameOrModule) ? nameOrModule : `@conclave/${nameOrModule}/testing`;
}

/**
 * Loads a backend's kit by name at run time (see `kitModuleName`), as a candidate loads its
 * providers (candidate-providers.ts), so that the harness depends on core alone: from the working
 * directory first (a project using the harness), then beside the harness. The kit is the export
 * that passes `isBackendKit`; where a module exports several, the one whose kind is the name.
 */
export async function loadBackendKit(nameOrModule: string): Promise<BackendKit> {
  const name = kitModuleName(nameOrModule);
  const exported = await loadModule(name);
  const kits = typeof exported === 'object' && exported !== null ? Object.values(exported).filter(isBackendKit) : [];
  const unique = [...new Set(kits)];
  const kit = unique.length === 1 ? unique[0] : unique.find((k) => k.kind === nameOrModule);
  if (!kit) {
    throw new Error(
      unique.length === 0
        ? `backend kit module ${name} exports no backend kit`
        : `backend kit module ${name} exports ${unique.length} kits (${unique.map((k) => k.kind).join(', ')}): name one by its kind`,
    );
  }
  return kit;
}

/** A kit given, or loaded by name. */
export async function resolveBackendKit(kit: BackendKit | string): Promise<BackendKit> {
  return typeof kit === 'string' ? loadBackendKit(kit) : kit;
}

/** The kind a kit or kit name stands for, known before loading it (for test names and labels). */
export function kitLabel(kit: BackendKit | string): string {
  if (typeof kit !== 'string') return kit.kind;
  const m = /^@conclave\/([^/]+)\/testing$/.exec(kit);
  return m ? m[1]! : kit;
}

async function loadModule(name: string): Promise<unknown> {
  let resolved: string;
  try {
    resolved = require.resolve(name, { paths: [process.cwd(), __dirname] });
  } catch (err) {
    throw new Error(`cannot find backend kit module ${name}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  try {
    return require(resolved) as unknown;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_REQUIRE_ESM') throw err;
    return (await import(pathToFileURL(resolved).href)) as unknown;
  }
}
