import type { ElectionBackend } from './backend';
import { assertCapabilitiesConsistent } from './capabilities';

/**
 * Every method of the backend SPI, required and optional, in one list. Wrappers forward exactly
 * these (through `forwardBackend`), and the forwarding test enumerates them; the type check below
 * fails to compile when `ElectionBackend` gains a method this list does not name.
 */
export const BACKEND_METHODS = [
  'campaign',
  'renew',
  'release',
  'getLeader',
  'forceLeader',
  'clearLeader',
  'listCandidates',
  'electionExists',
  'raiseTokenFloor',
  'watch',
  'isWatching',
  'watchLeader',
  'staleLeaderMs',
  'close',
] as const;

export type BackendMethod = (typeof BACKEND_METHODS)[number];

/** The methods a backend may leave out; a wrapper has them exactly when its inner backend has. */
export const OPTIONAL_BACKEND_METHODS: readonly BackendMethod[] = [
  'listCandidates',
  'electionExists',
  'raiseTokenFloor',
  'watch',
  'isWatching',
  'watchLeader',
  'staleLeaderMs',
];

type MethodKeys = {
  [K in keyof ElectionBackend]-?: NonNullable<ElectionBackend[K]> extends (...args: never[]) => unknown ? K : never;
}[keyof ElectionBackend];
// Both directions: the list names every SPI method and nothing else.
const everyMethodListed: [Exclude<MethodKeys, BackendMethod>] extends [never] ? true : false = true;
const nothingElseListed: [Exclude<BackendMethod, MethodKeys>] extends [never] ? true : false = true;
void everyMethodListed;
void nothingElseListed;

/** The signature of SPI method `K`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BackendFn<K extends BackendMethod> = NonNullable<ElectionBackend[K]> extends infer F extends (...args: any[]) => any ? F : never;

/**
 * How a wrapper changes calls:
 * - `all(method, args, invoke)` sees every call of every method (`invoke()` makes the call on the
 *   inner backend) and returns what the caller gets.
 * - a hook named after a method replaces that method; its `next` is the call as `all` would make it.
 * Anything not hooked is passed on unchanged.
 */
export type ForwardHooks = {
  all?: (method: BackendMethod, args: unknown[], invoke: () => unknown) => unknown;
} & {
  [K in BackendMethod]?: (next: BackendFn<K>, ...args: Parameters<BackendFn<K>>) => ReturnType<BackendFn<K>>;
};

/**
 * The one forwarding mechanism of the project: defines on `target` (default: a new object)
 * `kind`, `capabilities` and every SPI method of `BACKEND_METHODS`, each passed on to `inner`
 * through `hooks`. Optional methods are getters that are `undefined` exactly when `inner`'s are,
 * so a wrapper never claims a method its backend lacks, nor drops one it has. Throws
 * `INVALID_OPTIONS` when `inner`'s capabilities and methods disagree (`assertCapabilitiesConsistent`).
 */
export function forwardBackend<T extends object>(inner: ElectionBackend, hooks: ForwardHooks = {}, target?: T): T & ElectionBackend {
  // A wrapper passes the declaration on as it is: it must be true of the methods passed on.
  assertCapabilitiesConsistent(inner);
  const self = (target ?? {}) as T & ElectionBackend;
  const all = hooks.all;
  Object.defineProperty(self, 'kind', { get: () => inner.kind, enumerable: true, configurable: true });
  Object.defineProperty(self, 'capabilities', { get: () => inner.capabilities, enumerable: true, configurable: true });
  for (const method of BACKEND_METHODS) {
    const hook = hooks[method] as ((next: (...args: unknown[]) => unknown, ...args: unknown[]) => unknown) | undefined;
    const next = (...args: unknown[]): unknown => {
      const fn = inner[method] as ((...a: unknown[]) => unknown) | undefined;
      if (typeof fn !== 'function') throw new TypeError(`${inner.kind} backend has no ${method}()`);
      const invoke = () => fn.apply(inner, args);
      return all ? all(method, args, invoke) : invoke();
    };
    const forwarded = hook ? (...args: unknown[]) => hook(next, ...args) : next;
    Object.defineProperty(self, method, {
      get: () => (typeof inner[method] === 'function' ? forwarded : undefined),
      enumerable: true,
      configurable: true,
    });
  }
  return self;
}

/**
 * A base class for wrappers: forwards the whole SPI to `inner` through `forwardBackend`. A
 * subclass changes calls by overriding `forward()` (every call) and `hooks()` (single methods);
 * both are called when a call is made, so they may use the subclass's fields.
 */
export class ForwardingBackend implements ElectionBackend {
  declare readonly kind: string;
  declare readonly capabilities: ElectionBackend['capabilities'];
  declare readonly campaign: ElectionBackend['campaign'];
  declare readonly renew: ElectionBackend['renew'];
  declare readonly release: ElectionBackend['release'];
  declare readonly getLeader: ElectionBackend['getLeader'];
  declare readonly forceLeader: ElectionBackend['forceLeader'];
  declare readonly clearLeader: ElectionBackend['clearLeader'];
  declare readonly listCandidates: ElectionBackend['listCandidates'];
  declare readonly electionExists: ElectionBackend['electionExists'];
  declare readonly raiseTokenFloor: ElectionBackend['raiseTokenFloor'];
  declare readonly watch: ElectionBackend['watch'];
  declare readonly isWatching: ElectionBackend['isWatching'];
  declare readonly watchLeader: ElectionBackend['watchLeader'];
  declare readonly staleLeaderMs: ElectionBackend['staleLeaderMs'];
  declare readonly close: ElectionBackend['close'];

  constructor(readonly inner: ElectionBackend) {
    forwardBackend(inner, { ...this.hooks(), all: (method, args, invoke) => this.forward(method, args, invoke) }, this);
  }

  /** `await using backend = …`: closes the backend (through `forward`) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Every call of every method passes here; `invoke()` makes it on the inner backend. */
  protected forward(_method: BackendMethod, _args: unknown[], invoke: () => unknown): unknown {
    return invoke();
  }

  /** Per-method hooks (see `ForwardHooks`); called once, from the constructor. */
  protected hooks(): Omit<ForwardHooks, 'all'> {
    return {};
  }
}
