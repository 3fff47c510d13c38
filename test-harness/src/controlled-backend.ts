import { performance } from 'node:perf_hooks';
import { ConclaveError } from '@conclave/core';
import { BACKEND_METHODS, ForwardingBackend, type BackendMethod, type ElectionBackend, type ForwardHooks } from '@conclave/core/spi';

/** One call made through a `ControlledBackend`, with when it was sent, answered and delivered. */
export interface ControlledCall {
  method: BackendMethod;
  args: unknown[];
  /** performance.now() when the caller made the call. */
  sentAt: number;
  /** Whether it was passed on to the real backend (false: hung or failed on this side). */
  reachedServer: boolean;
  /** When the real backend answered; undefined while it has not. */
  answeredAt?: number;
  /** When the caller got the answer (after any delay or hold); undefined while it has not. */
  deliveredAt?: number;
  /** The real backend's answer (a granted lease possibly capped), once it answered. */
  answer?: unknown;
  /** The answer as delivered to the caller; undefined while it has not been. */
  result?: unknown;
  error?: unknown;
}

/** Which calls a reply delay or hold applies to: all, or those of the named methods. */
export type CallFilter = readonly BackendMethod[] | ((call: ControlledCall) => boolean);

// The calls that go to the server and answer later: every operation but the synchronous
// watch/isWatching/watchLeader and close (which a test never controls).
const ASYNC_METHODS: ReadonlySet<BackendMethod> = new Set(
  BACKEND_METHODS.filter((m) => m !== 'watch' && m !== 'isWatching' && m !== 'watchLeader' && m !== 'close'),
);

const matches = (filter: CallFilter | undefined, call: ControlledCall) =>
  filter === undefined || (typeof filter === 'function' ? filter(call) : filter.includes(call.method));

/**
 * A real backend whose client side a test controls; the server stays real. It forwards the whole
 * SPI (through core's `ForwardingBackend`) and can:
 * - `hang()`: every new call hangs and never reaches the server, change hints are dropped and
 *   `isWatching` is false, as when the connection goes silent; `unhang()` rejects the calls held
 *   so far with `BACKEND_UNAVAILABLE` and lets new calls through;
 * - `failCalls()`: every new call is refused at once with `BACKEND_UNAVAILABLE`, unsent;
 * - `delayReplies(ms)`: calls reach the server at once, their answers reach the caller `ms` later
 *   (a number, or a function of the call: skewed arrival);
 * - `holdReplies()`: calls reach the server, their answers are kept until `releaseReplies()`;
 * - `capGrant(ms)`: a granted lease is reported as at most `ms` (the server's is longer, so this
 *   is a backend that grants less than asked, never an unsafe one).
 * Every call is logged in `calls`, with the monotonic instants it was sent, answered and delivered.
 */
export class ControlledBackend extends ForwardingBackend {
  readonly calls: ControlledCall[] = [];
  private hanging = false;
  private failing = false;
  private replyDelay: { filter?: CallFilter; ms: number | ((call: ControlledCall) => number) } | null = null;
  private replyHold: { filter?: CallFilter } | null = null;
  private grantCap: number | null = null;
  private hangAfterCall: CallFilter | null = null;
  private hungCalls: Array<(err: Error) => void> = [];
  private heldReplies: Array<() => void> = [];

  constructor(inner: ElectionBackend) {
    super(inner);
  }

  get isHanging(): boolean {
    return this.hanging;
  }

  hang(): void {
    this.hanging = true;
  }

  unhang(): void {
    this.hanging = false;
    const hung = this.hungCalls.splice(0);
    for (const reject of hung) reject(this.unavailable('call was held by a hung connection'));
  }

  /** While on, calls are refused at once with `BACKEND_UNAVAILABLE` and never sent. */
  failCalls(on = true): void {
    this.failing = on;
  }

  /** Answers reach the caller `ms` after the server gave them; `null` turns it off. */
  delayReplies(ms: number | ((call: ControlledCall) => number) | null, filter?: CallFilter): void {
    this.replyDelay = ms === null ? null : filter === undefined ? { ms } : { ms, filter };
  }

  /** Answers are kept (the server did act on the calls) until `releaseReplies()`. */
  holdReplies(filter?: CallFilter): void {
    this.replyHold = filter === undefined ? {} : { filter };
  }

  /** Delivers the answers kept so far, in order, and stops keeping new ones. */
  releaseReplies(): void {
    this.replyHold = null;
    for (const deliver of this.heldReplies.splice(0)) deliver();
  }

  /**
   * Hangs (see `hang()`) the moment the answer of the next call matching `filter` is delivered,
   * with no gap in which the caller could send another: a process frozen right after a reply.
   */
  hangAfter(filter: CallFilter): void {
    this.hangAfterCall = filter;
  }

  /** Granted leases are reported as at most `ms`; `null` turns it off. */
  capGrant(ms: number | null): void {
    this.grantCap = ms;
  }

  /** Calls of `method` whose answer was delivered, oldest first. */
  delivered(method?: BackendMethod): ControlledCall[] {
    return this.calls.filter((c) => c.deliveredAt !== undefined && (method === undefined || c.method === method));
  }

  protected override hooks(): Omit<ForwardHooks, 'all'> {
    return {
      watch: (next, election, candidateId, onChange) =>
        next(election, candidateId, (hint) => {
          if (!this.hanging) onChange(hint);
        }),
      isWatching: (next, election, candidateId) => !this.hanging && next(election, candidateId),
      watchLeader: (next, election, onChange) =>
        next(election, () => {
          if (!this.hanging) onChange();
        }),
      close: (next) => {
        this.unhang();
        this.releaseReplies();
        return next();
      },
    };
  }

  protected override forward(method: BackendMethod, args: unknown[], invoke: () => unknown): unknown {
    if (!ASYNC_METHODS.has(method)) return invoke();
    const call: ControlledCall = { method, args, sentAt: performance.now(), reachedServer: false };
    this.calls.push(call);
    if (this.failing) {
      const err = this.unavailable('call refused: no connection');
      call.error = err;
      call.deliveredAt = performance.now();
      return Promise.reject(err);
    }
    if (this.hanging) {
      return new Promise((_resolve, reject) => {
        this.hungCalls.push((err) => {
          call.error = err;
          call.deliveredAt = performance.now();
          reject(err);
        });
      });
    }
    call.reachedServer = true;
    const delay = this.replyDelay && matches(this.replyDelay.filter, call) ? this.replyDelay : null;
    const hold = this.replyHold && matches(this.replyHold.filter, call);
    return new Promise((resolve, reject) => {
      const settle = (ok: boolean, value: unknown) => {
        const deliver = () => {
          call.deliveredAt = performance.now();
          if (this.hangAfterCall && matches(this.hangAfterCall, call)) {
            this.hangAfterCall = null;
            this.hang();
          }
          if (ok) {
            call.result = value;
            resolve(value);
          } else {
            call.error = value;
            reject(value);
          }
        };
        const ms = delay ? (typeof delay.ms === 'function' ? delay.ms(call) : delay.ms) : 0;
        const afterDelay = hold && this.replyHold ? () => this.heldReplies.push(deliver) : deliver;
        if (ms > 0) setTimeout(afterDelay, ms);
        else afterDelay();
      };
      let answer: Promise<unknown>;
      try {
        answer = Promise.resolve(invoke());
      } catch (err) {
        answer = Promise.reject(err);
      }
      answer.then(
        (value) => {
          call.answeredAt = performance.now();
          call.answer = this.capped(value);
          settle(true, call.answer);
        },
        (err: unknown) => {
          call.answeredAt = performance.now();
          settle(false, err);
        },
      );
    });
  }

  private capped(value: unknown): unknown {
    if (this.grantCap === null || typeof value !== 'object' || value === null) return value;
    const v = value as { role?: string; held?: boolean; leaseMs?: number };
    if ((v.role === 'leader' || v.held === true) && typeof v.leaseMs === 'number' && v.leaseMs > this.grantCap) {
      return { ...v, leaseMs: this.grantCap };
    }
    return value;
  }

  private unavailable(message: string): ConclaveError {
    return new ConclaveError('BACKEND_UNAVAILABLE', message, { backend: this.kind });
  }
}

/** The name the harness used before replies could be delayed and held; same class. */
export { ControlledBackend as HangableBackend };
