import type { BackendCapabilities, ElectionBackend, LeaderMetadataCapabilities } from './backend';
import { leaderMetadataOf } from './backend';
import { ConclaveError } from './errors';

/**
 * Anything that declares capabilities: a backend, a backend class with a static `capabilities`,
 * a conformance factory. Reading needs only the declaration, so it works before any server is up.
 */
export interface DeclaresCapabilities {
  readonly capabilities: BackendCapabilities;
}

/** How changes reach a watcher (`push`, `leaderPush`). */
export type PushLevel = BackendCapabilities['push'];

/** Every capability as read by `capabilityOf`: absent ones are given their documented default. */
export interface CapabilityValues {
  listCandidates: boolean;
  electionExists: boolean;
  push: PushLevel;
  leaderPush: PushLevel;
  tokenFloor: boolean;
  tokenClock: boolean;
  leaseEndPush: boolean;
  leaderMetadata: LeaderMetadataCapabilities;
}

export type Capability = keyof CapabilityValues;

/**
 * The optional method each capability declares: a backend has it exactly when it declares the
 * capability (see `assertCapabilitiesConsistent`). The other capabilities have no method.
 */
export const CAPABILITY_METHODS = Object.freeze({
  listCandidates: 'listCandidates',
  electionExists: 'electionExists',
  tokenFloor: 'raiseTokenFloor',
  push: 'watch',
  leaderPush: 'watchLeader',
} as const);

export type MethodCapability = keyof typeof CAPABILITY_METHODS;

/**
 * The value `source` declares for `capability`, absent meaning its default. The one way to read
 * a capability: the declaration, never the presence of a method.
 */
export function capabilityOf<C extends Capability>(source: DeclaresCapabilities, capability: C): CapabilityValues[C] {
  const declared = source.capabilities;
  const values: { [K in Capability]: () => CapabilityValues[K] } = {
    listCandidates: () => declared.listCandidates === true,
    electionExists: () => declared.electionExists === true,
    push: () => declared.push ?? 'none',
    leaderPush: () => declared.leaderPush ?? 'none',
    tokenFloor: () => declared.tokenFloor === true,
    tokenClock: () => declared.tokenClock === true,
    leaseEndPush: () => declared.leaseEndPush === true,
    leaderMetadata: () => leaderMetadataOf(declared),
  };
  return values[capability]();
}

/**
 * Whether `source` declares `capability`: true, or a push level other than `'none'`. When it
 * does, the capability's method (`CAPABILITY_METHODS`) is there to call.
 */
export function supports(source: DeclaresCapabilities, capability: Exclude<Capability, 'leaderMetadata'>): boolean {
  const value = capabilityOf(source, capability);
  return value !== false && value !== 'none';
}

/**
 * Throws `INVALID_OPTIONS` when a capability and its method disagree: a declared capability
 * without its method, a method whose capability is not declared, or `isWatching` or
 * `leaseEndPush` without `push`.
 * Called where a backend is taken in (the Elector, the wrappers) and by the conformance suite, so
 * that reading the declaration alone is always safe.
 */
export function assertCapabilitiesConsistent(backend: ElectionBackend): void {
  if (typeof backend.capabilities !== 'object' || backend.capabilities === null) {
    throw new ConclaveError('INVALID_OPTIONS', 'backend declares no capabilities object', { backend: String(backend.kind) });
  }
  const problems: string[] = [];
  for (const [capability, method] of Object.entries(CAPABILITY_METHODS) as Array<[MethodCapability, string]>) {
    const declared = supports(backend, capability);
    const present = typeof (backend as unknown as Record<string, unknown>)[method] === 'function';
    if (declared && !present) problems.push(`declares ${describe(backend, capability)} but has no ${method}()`);
    if (!declared && present) problems.push(`has ${method}() but declares ${describe(backend, capability)}`);
  }
  if (supports(backend, 'leaseEndPush') && !supports(backend, 'push')) {
    problems.push(`declares capabilities.leaseEndPush without ${describe(backend, 'push')}`);
  }
  if (typeof backend.isWatching === 'function' && !supports(backend, 'push')) {
    problems.push(`has isWatching() but declares ${describe(backend, 'push')}`);
  }
  if (problems.length > 0) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `backend capabilities disagree with its methods: ${problems.join('; ')} ` +
        '(capabilities is the declaration; an optional method must exist exactly when it is declared)',
      { backend: String(backend.kind) },
    );
  }
}

function describe(backend: ElectionBackend, capability: MethodCapability): string {
  return `capabilities.${capability}: ${JSON.stringify(backend.capabilities[capability] ?? null)}`;
}
