import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBackendKit, type BackendKit } from '@conclave/test-harness/tools';

/** The repository's root: this file runs from bench/dist (or bench/src under ts-node). */
const ROOT = join(__dirname, '..', '..');

interface WorkspaceManifest {
  name: string;
  exports?: Record<string, unknown>;
  conclave?: { inProgress?: string };
}

/**
 * The kit modules (`<name>/testing`) of the root package.json's workspaces, in their order: a
 * backend registered as a workspace is one the bench finds, with no list of its own to keep. A
 * package still being built (`"conclave": { "inProgress": … }`) is left out, as `npm test` leaves
 * out its tests.
 */
function workspaceKitModules(): string[] {
  const { workspaces } = readJson<{ workspaces: string[] }>(join(ROOT, 'package.json'));
  return workspaces.flatMap((dir) => {
    const manifest = readJson<WorkspaceManifest>(join(ROOT, dir, 'package.json'));
    return manifest.exports?.['./testing'] !== undefined && !manifest.conclave?.inProgress ? [`${manifest.name}/testing`] : [];
  });
}

/**
 * The backends the bench measures: each workspace kit that starts a bench server (a kit such as
 * migrate's, which runs on other backends' servers, starts none), in the workspaces' order, which
 * is the order of the results.
 */
export async function benchKits(): Promise<BackendKit[]> {
  const kits = await Promise.all(workspaceKitModules().map((module) => loadBackendKit(module)));
  return kits.filter((kit) => kit.startBenchServer !== undefined);
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
