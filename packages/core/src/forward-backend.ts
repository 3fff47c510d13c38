import type { BackendAdmin, CandidateQueue, ChangeFeed, ElectionBackend, LeaderFeed, LeaseStore, TokenFloor } from './backend';

/**
 * Every operation of the backend contract under one flat name: the lease store's methods, and
 * each part's methods named as a wrapper's hooks and a test's call log see them.
 */
export interface BackendOperations {
  campaign: LeaseStore['campaign'];
  renew: LeaseStore['renew'];
  release: LeaseStore['release'];
  getLeader: LeaseStore['getLeader'];
  close: LeaseStore['close'];
  forceLeader: BackendAdmin['forceLeader'];
  clearLeader: BackendAdmin['clearLeader'];
  electionExists: BackendAdmin['electionExists'];
  listCandidates: CandidateQueue['list'];
  watch: ChangeFeed['watch'];
  isWatching: NonNullable<ChangeFeed['isWatching']>;
  watchLeader: LeaderFeed['watch'];
  raiseTokenFloor: TokenFloor['raise'];
}

export type BackendMethod = keyof BackendOperations;

/** The signature of operation `K`. */
export type BackendFn<K extends BackendMethod> = BackendOperations[K];

/** The methods of the lease store, which every backend has. */
const STORE_METHODS = ['campaign', 'renew', 'release', 'getLeader', 'close'] as const;

/** Each optional part: its methods (member → operation) and its declarations (plain values). */
const PARTS = {
  admin: { methods: { forceLeader: 'forceLeader', clearLeader: 'clearLeader', electionExists: 'electionExists' }, values: [] },
  candidates: { methods: { list: 'listCandidates' }, values: [] },
  changes: { methods: { watch: 'watch', isWatching: 'isWatching' }, values: ['delivery', 'leaseEnds'] },
  leaderChanges: { methods: { watch: 'watchLeader' }, values: ['delivery'] },
  tokenFloor: { methods: { raise: 'raiseTokenFloor' }, values: ['followsClock'] },
} as const satisfies Record<string, { methods: Record<string, BackendMethod>; values: readonly string[] }>;

type PartName = keyof typeof PARTS;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyFn = (...args: any[]) => unknown;
// Both directions: PARTS names every optional part of the contract that has methods.
type MethodParts = {
  [K in keyof ElectionBackend]-?: NonNullable<ElectionBackend[K]> extends AnyFn ? never : NonNullable<ElectionBackend[K]> extends object ? K : never;
}[keyof ElectionBackend];
const everyPartListed: [Exclude<MethodParts, PartName | 'leaderMetadata'>] extends [never] ? true : false = true;
void everyPartListed;

/** Every operation, the store's first: wrappers forward exactly these, and tests enumerate them. */
export const BACKEND_METHODS: readonly BackendMethod[] = [
  ...STORE_METHODS,
  ...Object.values(PARTS).flatMap((part) => Object.values(part.methods) as BackendMethod[]),
];

/** The operations a backend may lack (those of its optional parts). */
export const OPTIONAL_BACKEND_METHODS: readonly BackendMethod[] = BACKEND_METHODS.filter(
  (m) => !(STORE_METHODS as readonly string[]).includes(m),
);

/**
 * Operation `method` of `backend`, bound to its part (or to the backend), or `undefined` when
 * the backend lacks its part or member. For tests and tools that name operations.
 */
export function operationOf<K extends BackendMethod>(backend: ElectionBackend, method: K): BackendFn<K> | undefined {
  if ((STORE_METHODS as readonly string[]).includes(method)) return (backend[method as (typeof STORE_METHODS)[number]] as AnyFn).bind(backend) as BackendFn<K>;
  for (const [name, layout] of Object.entries(PARTS) as Array<[PartName, (typeof PARTS)[PartName]]>) {
    const member = Object.entries(layout.methods).find(([, m]) => m === method)?.[0];
    if (member === undefined) continue;
    const part = backend[name] as Record<string, unknown> | undefined;
    const fn = part?.[member];
    return typeof fn === 'function' ? ((fn as AnyFn).bind(part) as BackendFn<K>) : undefined;
  }
  return undefined;
}

/**
 * How a wrapper changes calls:
 * - `all(method, args, invoke)` sees every call of every operation (`invoke()` makes the call on
 *   the inner backend) and returns what the caller gets.
 * - a hook named after an operation replaces it; its `next` is the call as `all` would make it.
 * Anything not hooked is passed on unchanged.
 */
export type ForwardHooks = {
  all?: (method: BackendMethod, args: unknown[], invoke: () => unknown) => unknown;
} & {
  [K in BackendMethod]?: (next: BackendFn<K>, ...args: Parameters<BackendFn<K>>) => ReturnType<BackendFn<K>>;
};

/**
 * The one forwarding mechanism of the project: defines on `target` (default: a new object)
 * `kind`, the lease store's methods and every optional part, each call passed on to `inner`
 * through `hooks`. A part is there exactly when `inner`'s is (read at each access, so a wrapper
 * of a wrapper whose parts change follows it), with `inner`'s declarations.
 */
export function forwardBackend<T extends object>(inner: ElectionBackend, hooks: ForwardHooks = {}, target?: T): T & ElectionBackend {
  const self = (target ?? {}) as T & ElectionBackend;
  const forwarded = (method: BackendMethod, fn: () => AnyFn | undefined, owner: () => object | undefined): AnyFn => {
    const hook = hooks[method] as ((next: AnyFn, ...args: unknown[]) => unknown) | undefined;
    const next = (...args: unknown[]): unknown => {
      const f = fn();
      if (typeof f !== 'function') throw new TypeError(`${inner.kind} backend has no ${method}()`);
      const invoke = () => f.apply(owner(), args);
      return hooks.all ? hooks.all(method, args, invoke) : invoke();
    };
    return hook ? (...args: unknown[]) => hook(next, ...args) : next;
  };
  const define = (key: string, get: () => unknown) => Object.defineProperty(self, key, { get, enumerable: true, configurable: true });

  define('kind', () => inner.kind);
  define('leaderMetadata', () => inner.leaderMetadata);
  define('staleLeaderMs', () => inner.staleLeaderMs);
  for (const method of STORE_METHODS) {
    const f = forwarded(method, () => inner[method] as AnyFn, () => inner);
    define(method, () => f);
  }
  for (const [name, layout] of Object.entries(PARTS) as Array<[PartName, (typeof PARTS)[PartName]]>) {
    const innerPart = () => inner[name] as Record<string, unknown> | undefined;
    const part: Record<string, unknown> = {};
    for (const [member, method] of Object.entries(layout.methods) as Array<[string, BackendMethod]>) {
      const f = forwarded(method, () => innerPart()?.[member] as AnyFn | undefined, innerPart);
      // An optional member (isWatching) is there exactly when the inner part has it.
      Object.defineProperty(part, member, { get: () => (typeof innerPart()?.[member] === 'function' ? f : undefined), enumerable: true });
    }
    for (const value of layout.values) Object.defineProperty(part, value, { get: () => innerPart()?.[value], enumerable: true });
    define(name, () => (innerPart() === undefined ? undefined : part));
  }
  return self;
}

/**
 * A base class for wrappers: forwards the whole contract to `inner` through `forwardBackend`. A
 * subclass changes calls by overriding `forward()` (every call) and `hooks()` (single
 * operations); both are called when a call is made, so they may use the subclass's fields.
 */
export class ForwardingBackend implements ElectionBackend {
  declare readonly kind: string;
  declare readonly campaign: ElectionBackend['campaign'];
  declare readonly renew: ElectionBackend['renew'];
  declare readonly release: ElectionBackend['release'];
  declare readonly getLeader: ElectionBackend['getLeader'];
  declare readonly close: ElectionBackend['close'];
  declare readonly admin: ElectionBackend['admin'];
  declare readonly candidates: ElectionBackend['candidates'];
  declare readonly changes: ElectionBackend['changes'];
  declare readonly leaderChanges: ElectionBackend['leaderChanges'];
  declare readonly tokenFloor: ElectionBackend['tokenFloor'];
  declare readonly leaderMetadata: ElectionBackend['leaderMetadata'];
  declare readonly staleLeaderMs: ElectionBackend['staleLeaderMs'];

  constructor(readonly inner: ElectionBackend) {
    forwardBackend(inner, { ...this.hooks(), all: (method, args, invoke) => this.forward(method, args, invoke) }, this);
  }

  /** `await using backend = …`: closes the backend (through `forward`) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Every call of every operation passes here; `invoke()` makes it on the inner backend. */
  protected forward(_method: BackendMethod, _args: unknown[], invoke: () => unknown): unknown {
    return invoke();
  }

  /** Per-operation hooks (see `ForwardHooks`); called once, from the constructor. */
  protected hooks(): Omit<ForwardHooks, 'all'> {
    return {};
  }
}
