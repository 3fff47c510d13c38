import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the harness, the bench and the repository's checks read of a workspace's package.json. */
export interface WorkspaceManifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  /** Set on a package still being built: `npm test` leaves its tests out, the bench its kit. */
  conclave?: { inProgress?: string };
}

/** The manifests of the workspaces of the repository at `root` (its package.json's `workspaces`), in their order. */
export function workspaceManifests(root: string): WorkspaceManifest[] {
  const { workspaces } = readJson<{ workspaces: string[] }>(join(root, 'package.json'));
  return workspaces.map((dir) => readJson<WorkspaceManifest>(join(root, dir, 'package.json')));
}

/** A backend package: one with a `testing` entry, its kit (`<name>/testing`). */
export function isBackendPackage(manifest: WorkspaceManifest): boolean {
  return manifest.exports?.['./testing'] !== undefined;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
