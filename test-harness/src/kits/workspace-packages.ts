import { join } from 'node:path';

/** What the harness, the bench and the repository's checks read of a workspace's package.json. */
export interface WorkspaceManifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  peerDependencies?: Record<string, string>;
  /**
   * `backend`: the kind of the provider the package exports (the `conclave` command finds it so);
   * `inProgress`: set on a package still being built: `npm test` leaves its tests out, the bench its kit.
   */
  conclave?: { backend?: string; inProgress?: string };
}

/**
 * The manifests of the workspaces of the repository at `root`, in their order: its package.json's
 * `workspaces`, a `packages/*` expanded by the repository's own `scripts/workspaces.cjs`, as Jest's
 * configuration and the test-environment script expand it.
 */
export function workspaceManifests(root: string): WorkspaceManifest[] {
  // Plain CommonJS of the repository, read before anything is built: required, not imported.
  const { workspacePackages } = require(join(root, 'scripts', 'workspaces.cjs')) as {
    workspacePackages(root: string): Array<{ dir: string; manifest: WorkspaceManifest }>;
  };
  return workspacePackages(root).map(({ manifest }) => manifest);
}

/** A backend package: one with a `testing` entry, its kit (`<name>/testing`). */
export function isBackendPackage(manifest: WorkspaceManifest): boolean {
  return manifest.exports?.['./testing'] !== undefined;
}
