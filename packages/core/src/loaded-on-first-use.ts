/**
 * A driver module loaded when a backend first needs it, not when its package is loaded. The
 * `conclave` command loads every backend package and uses one backend (its help and usage errors
 * use none), and a driver costs up to a quarter of a second of CPU to load (etcd3, with gRPC).
 * `load` is the backend's own `require` call, so the module resolves from the backend's folder.
 */
export function loadedOnFirstUse<T>(load: () => T): () => T {
  let module: { value: T } | undefined;
  return () => (module ??= { value: load() }).value;
}
