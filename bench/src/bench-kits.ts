import { join } from 'node:path';
import { isBackendPackage, loadBackendKit, workspaceManifests, type BackendKit } from '@conclave/test-harness/tools';

/** The repository's root, two levels above this file (bench/dist or bench/src). */
const ROOT = join(__dirname, '..', '..');

/**
 * The backends the bench measures: the kit of each backend package among the root
 * package.json's workspaces that starts a bench server (a kit such as migrate's, which runs on
 * other backends' servers, starts none), in the workspaces' order (packages/* by name), which is
 * the order of the results. A backend that is a workspace is one the bench finds, with no list of
 * its own to keep; a package still being built (`"conclave": { "inProgress": … }`) is left out,
 * as `npm test` leaves out its tests.
 */
export async function benchKits(): Promise<BackendKit[]> {
  const modules = workspaceManifests(ROOT)
    .filter((manifest) => isBackendPackage(manifest) && !manifest.conclave?.inProgress)
    .map((manifest) => `${manifest.name}/testing`);
  const kits = await Promise.all(modules.map((module) => loadBackendKit(module)));
  return kits.filter((kit) => kit.startBenchServer !== undefined);
}
