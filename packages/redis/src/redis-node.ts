import { performance } from 'node:perf_hooks';
import type Redis from 'ioredis';
import { ConclaveError } from '@conclave/core';
import { TickBatcher, loadedOnFirstUse, withTimeout } from '@conclave/core/spi';
import { KeyspaceCheck, type KeyspaceStatus } from './redis-keyspace';
import { refusalOf } from './redis-refusals';
import type { KeyspaceEventsMode, NodeSource, ResolvedRedisOptions } from './redis-options';
import { MAX_BATCHED_CALLS, type LuaScript } from './redis-scripts';
import { ReplicaAcks, replicaAckTimeoutMs, type AckRequest } from './redis-replica-acks';

const KIND = 'redis';

/** ioredis, loaded when a backend first connects (see `loadedOnFirstUse`). */
const ioredis = loadedOnFirstUse(() => require('ioredis') as typeof import('ioredis'));

export interface ScriptCall {
  script: LuaScript;
  keys: string[];
  args: Array<string | number>;
  /** For error messages. */
  election?: string;
  /** Set on writes that give or keep leadership: they count once the master's replicas acknowledge them. */
  acknowledge?: AckRequest;
  /**
   * `script` for many calls in one command (see `batched` in redis-scripts.ts): the calls of one
   * batch that name the same one are sent together, each judged by its own reply.
   */
  many?: LuaScript;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Longest rate at which unacknowledged writes make a Sentinel client look for the master again, ms. */
const SENTINEL_ASK_EVERY_MS = 1000;

// Reply errors that mean "this server cannot serve now" rather than "the request is wrong".
const UNAVAILABLE_REPLIES = /^(LOADING|BUSY|MASTERDOWN|READONLY|CLUSTERDOWN|TRYAGAIN|NOREPLICAS|MISCONF)\b/;

/**
 * One Redis master: its client (owned or the user's), a batcher that sends every script call
 * made in one event-loop turn as one pipeline (one round trip, however many elections), and the
 * lazily created subscriber connection shared by every `watch` of the backend.
 */
export class RedisNode {
  readonly client: Redis;
  private readonly owned: boolean;
  private readonly batcher: TickBatcher<ScriptCall, Outcome>;
  private subscriber: Redis | null = null;
  private subscriberReadyOnce = false;
  /** channel → listeners; a listener gets the message, or null after a reconnect (messages may have been lost). */
  private readonly listeners = new Map<string, Set<(message: string | null) => void>>();
  /** Whether the server sends the keyspace events followers need (asked once per answer). */
  private readonly keyspace = new KeyspaceCheck({
    ready: () => this.ready(),
    command: (args) => this.command(args),
    // Our own errors already quote the driver's: keeping one would nest "(last error: …)".
    noteError: (err) => {
      if (!(err instanceof ConclaveError)) this.lastError = err;
    },
  });
  /** channel → settles once its SUBSCRIBE was confirmed (or failed); removed once settled. */
  private readonly subscriptions = new Map<string, Promise<void>>();
  /** Channels watched in this turn, SUBSCRIBEd together at its end (see `subscribeSoon`). */
  private subscribeBatch: SubscribeBatch | null = null;
  /** Channels unwatched in this turn, UNSUBSCRIBEd together at its end, with the connection they were on. */
  private readonly unsubscribing = new Map<string, Redis>();
  /** Channels whose SUBSCRIBE the server confirmed on the subscriber's current connection. */
  private readonly confirmed = new Set<string>();
  /** +1 whenever the subscriber's connection closes: confirmations of an older one do not count. */
  private subscriberEpoch = 0;
  /** One promise per connection state, shared by every waiter (no listener per call). */
  private subscriberClosed: Signal | null = null;
  private clientSettled: { promise: Promise<boolean>; resolve: (ready: boolean) => void } | null = null;
  private clientListening = false;
  private closed = false;
  private lastError: unknown = null;
  /**
   * The server's refusal of the last connection attempt (credentials, or an ACL that refuses the
   * ready check), from an 'error' event; cleared once a connection is ready. ioredis keeps
   * reconnecting after it, so without it a call would only see "not connected".
   */
  private refusal: Error | null = null;
  /** Set when the server refused the URL's database: every call fails with it. */
  private dbError: ConclaveError | null = null;
  /** How many replicas must acknowledge a leadership write on this connection. */
  private readonly replicas: ReplicaAcks;
  /** When an unacknowledged write last made us ask Sentinel for the master again (see `askSentinelAgain`). */
  private askedSentinelAt = -Infinity;

  constructor(
    source: NodeSource,
    private readonly options: ResolvedRedisOptions,
    readonly label: string,
  ) {
    if (source.owned) {
      // Connection starts at once so the first call rarely waits; errors are kept for messages,
      // never left unhandled (ioredis would print them).
      this.client = source.url === null ? new (ioredis().default)(options.redisOptions) : new (ioredis().default)(source.url, options.redisOptions);
      const fromUrl = Boolean(source.db);
      const db = source.db || options.redisOptions.db || 0;
      this.client.on('error', (err: unknown) => {
        this.lastError = err;
        this.noteRefusal(err);
        // ioredis reports a failed SELECT as an error event and carries on in database 0, where
        // this backend would silently share keys with whatever lives there.
        if (err instanceof Error && /\bDB index is out of range\b|\binvalid DB index\b/i.test(err.message)) {
          const where = fromUrl ? `the URL's "/${db}"` : `redisOptions.db ${db}`;
          this.dbError = new ConclaveError(fromUrl ? 'INVALID_URL' : 'INVALID_OPTIONS', `${this.label} has no database ${db} (${where}): ${err.message}`, {
            backend: KIND,
            cause: err,
          });
        }
      });
    } else {
      this.client = source.client;
    }
    this.replicas = new ReplicaAcks(options.minReplicas);
    this.client.on('ready', () => {
      this.refusal = null;
      // Sentinel may have led this connection to another master.
      this.replicas.reconnected();
    });
    this.owned = source.owned;
    this.batcher = new TickBatcher((calls) => this.flush(calls));
  }

  /** Runs one script; rejects with a ConclaveError. Calls made in one turn share a round trip. */
  async run(call: ScriptCall): Promise<unknown> {
    if (this.closed) throw this.closedError(call.election);
    let outcome: Outcome;
    try {
      outcome = await this.batcher.submit(call);
    } catch (err) {
      throw this.toError(err, call.election);
    }
    if (outcome.ok) return outcome.value;
    throw this.toError(outcome.error, call.election);
  }

  /**
   * Adds a listener for messages on `channel`. Returns the function that removes it. The
   * subscriber connection is made on the first call; after a reconnect every listener is called,
   * since messages sent meanwhile are lost (pub/sub does not queue).
   */
  watch(channel: string, listener: (message: string | null) => void): () => void {
    const sub = this.ensureSubscriber();
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      this.subscriptions.set(channel, this.subscribeSoon(sub, channel));
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(channel);
      if (!current || !current.delete(listener) || current.size > 0) return;
      this.listeners.delete(channel);
      this.subscriptions.delete(channel);
      this.confirmed.delete(channel);
      if (this.subscriber && !this.closed) this.unsubscribeSoon(this.subscriber, channel);
    };
  }

  /**
   * SUBSCRIBEs `channel` with every other channel watched in this turn, in one command: a process
   * that starts thousands of Electors watches thousands of channels at once, and a command each
   * costs a round of work per channel on both sides. Settles when the server confirmed them (or
   * the command failed); never rejects.
   */
  private subscribeSoon(sub: Redis, channel: string): Promise<void> {
    let batch = this.subscribeBatch;
    if (!batch || batch.sub !== sub) {
      const made: SubscribeBatch = { sub, channels: [], epoch: this.subscriberEpoch, sent: signal() };
      batch = this.subscribeBatch = made;
      queueMicrotask(() => this.sendSubscribes(made));
    }
    batch.channels.push(channel);
    const pending = batch.sent.promise;
    void pending.then(() => {
      if (this.subscriptions.get(channel) === pending) this.subscriptions.delete(channel);
    });
    return pending;
  }

  private sendSubscribes(batch: SubscribeBatch): void {
    if (this.subscribeBatch === batch) this.subscribeBatch = null;
    // UNSUBSCRIBEs asked for before go first: a channel unwatched and watched again in one turn ends subscribed.
    this.sendUnsubscribes();
    // Channels unwatched again before this turn ended are left out.
    const channels = [...new Set(batch.channels)].filter((c) => this.listeners.has(c));
    if (channels.length === 0 || this.closed) {
      batch.sent.resolve();
      return;
    }
    // A failed SUBSCRIBE is retried by autoResubscribe on reconnect; the core's poll covers us meanwhile.
    batch.sub.subscribe(...channels).then(
      () => {
        if (batch.epoch === this.subscriberEpoch) for (const c of channels) if (this.listeners.has(c)) this.confirmed.add(c);
        batch.sent.resolve();
      },
      (err: unknown) => {
        this.lastError = err;
        batch.sent.resolve();
      },
    );
  }

  /** UNSUBSCRIBEs `channel` with every other channel unwatched in this turn, in one command. */
  private unsubscribeSoon(sub: Redis, channel: string): void {
    if (this.unsubscribing.size === 0) queueMicrotask(() => this.sendUnsubscribes());
    this.unsubscribing.set(channel, sub);
  }

  private sendUnsubscribes(): void {
    if (this.unsubscribing.size === 0) return;
    const bySubscriber = new Map<Redis, string[]>();
    // A channel watched again since is in a SUBSCRIBE sent after this (see `sendSubscribes`).
    for (const [channel, sub] of this.unsubscribing) {
      const list = bySubscriber.get(sub) ?? [];
      list.push(channel);
      bySubscriber.set(sub, list);
    }
    this.unsubscribing.clear();
    if (this.closed) return;
    for (const [sub, channels] of bySubscriber) {
      sub.unsubscribe(...channels).catch((err: unknown) => {
        this.lastError = err;
      });
    }
  }

  /**
   * Settles when the SUBSCRIBE for `channel` has been confirmed by the server (or has failed);
   * at once when nobody watches it. Never rejects.
   */
  subscribed(channel: string): Promise<void> {
    const pending = this.subscriptions.get(channel);
    const sub = this.subscriber;
    if (!pending || !sub) return Promise.resolve();
    // A master we cannot reach will not confirm soon: do not wait for it (its messages are lost
    // anyway until the subscriber is back, which then wakes every watcher).
    if (sub.status !== 'ready' && sub.status !== 'connecting' && sub.status !== 'connect') return Promise.resolve();
    // One shared "connection closed" promise for every waiter: a listener per call would pile up
    // (MaxListenersExceededWarning with many elections).
    this.subscriberClosed ??= signal();
    return Promise.race([pending, this.subscriberClosed.promise]);
  }

  /** Whether `subscribed(channel)` would wait: a SUBSCRIBE of it is not answered yet. Synchronous. */
  subscribing(channel: string): boolean {
    return this.subscriptions.has(channel) && this.subscriber !== null;
  }

  /**
   * Whether messages on `channel` reach us now: the subscriber connection is ready and the server
   * confirmed the channel's SUBSCRIBE on this connection. Synchronous.
   */
  isSubscribed(channel: string): boolean {
    return !this.closed && this.subscriber?.status === 'ready' && this.confirmed.has(channel);
  }

  /** Whether this master sends the keyspace events a quiet follower needs (see `KeyspaceCheck.events`). Never rejects. */
  keyspaceEvents(mode: KeyspaceEventsMode): Promise<boolean> {
    return this.keyspace.events(mode);
  }

  /** What the last keyspace check found, for diagnostics and tests. */
  get keyspaceStatus(): KeyspaceStatus {
    return this.keyspace.status;
  }

  private async command(args: string[]): Promise<Array<[Error | null, unknown]>> {
    const pipeline = this.client.pipeline();
    pipeline.call(args[0]!, ...args.slice(1));
    const results = await withTimeout(pipeline.exec(), this.options.commandTimeoutMs, () =>
      this.unavailable(`no answer to ${args[0]!.toUpperCase()} within ${this.options.commandTimeoutMs} ms`),
    );
    if (!results || results.length === 0) throw this.unavailable('the pipeline was not sent');
    return results as Array<[Error | null, unknown]>;
  }

  /** For tests and diagnostics: the subscriber connection, if one was made. */
  get subscriberClient(): Redis | null {
    return this.subscriber;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    this.subscriptions.clear();
    this.confirmed.clear();
    this.subscriberClosed?.resolve();
    this.subscriberClosed = null;
    this.clientSettled?.resolve(false);
    this.clientSettled = null;
    // disconnect(), not quit(): quit waits for a server that may be gone. The subscriber is
    // always ours, even when the client was passed in (it is a duplicate).
    this.subscriber?.disconnect();
    this.subscriber = null;
    if (this.owned) this.client.disconnect();
  }

  private ensureSubscriber(): Redis {
    if (this.subscriber) return this.subscriber;
    const sub = this.client.duplicate({
      lazyConnect: false,
      enableOfflineQueue: true, // SUBSCRIBE before the first connect must wait, not fail
      maxRetriesPerRequest: null,
      autoResubscribe: true,
      keyPrefix: '', // channels are published from Lua without ioredis' prefix
    });
    // The subscriber logs in as the client does: its refusal is the client's too (a client passed
    // in has no 'error' listener of ours).
    sub.on('error', (err: unknown) => {
      this.lastError = err;
      this.noteRefusal(err);
    });
    sub.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    const lost = () => {
      this.subscriberEpoch++;
      this.confirmed.clear();
      const closed = this.subscriberClosed;
      this.subscriberClosed = null;
      closed?.resolve();
    };
    sub.on('close', lost);
    sub.on('end', lost);
    sub.on('ready', () => {
      if (this.subscriberReadyOnce) {
        // ioredis subscribes again (autoResubscribe) right after 'ready'. Our own SUBSCRIBE of
        // the same channels, queued behind it, is answered after it: its reply confirms them all.
        const epoch = this.subscriberEpoch;
        const channels = [...this.listeners.keys()];
        if (channels.length > 0) {
          setImmediate(() => {
            if (this.closed || epoch !== this.subscriberEpoch) return;
            sub.subscribe(...channels).then(
              () => {
                if (epoch !== this.subscriberEpoch) return;
                for (const channel of channels) if (this.listeners.has(channel)) this.confirmed.add(channel);
              },
              (err: unknown) => {
                this.lastError = err;
              },
            );
          });
        }
        for (const channel of this.listeners.keys()) this.dispatch(channel, null);
        // A server restarted from its configuration file has lost a CONFIG SET: set it again.
        if (this.options.keyspaceEvents === 'configure' && this.keyspace.status === 'on') {
          this.keyspace.forget();
          void this.keyspace.events('configure');
        }
      }
      this.subscriberReadyOnce = true;
    });
    this.subscriber = sub;
    return sub;
  }

  private dispatch(channel: string, message: string | null): void {
    const set = this.listeners.get(channel);
    if (!set) return;
    // One listener is the usual case (a message per renewal of every election watched): no copy.
    // Several are copied first, as one may unwatch another.
    if (set.size === 1) for (const listener of set) callListener(listener, message);
    else for (const listener of [...set]) callListener(listener, message);
  }

  private async flush(calls: ScriptCall[]): Promise<Outcome[]> {
    await this.ready(calls[0]?.election);
    if (calls.some((c) => c.acknowledge)) await this.lookForReplicas(calls[0]?.election);
    const replies = await this.exec(calls, false);
    // NOSCRIPT: the server forgot the scripts (restart, SCRIPT FLUSH). Nothing ran for those
    // calls, so sending them again with EVAL is safe.
    const missing = replies.map((r, i) => (!r.ok && isNoScript(r.error) ? i : -1)).filter((i) => i >= 0);
    if (missing.length > 0) {
      const again = await this.exec(
        missing.map((i) => calls[i]!),
        true,
      );
      missing.forEach((i, n) => {
        replies[i] = again[n]!;
      });
    }
    return replies;
  }

  private async exec(calls: ScriptCall[], withSource: boolean): Promise<Outcome[]> {
    const pipeline = this.client.pipeline();
    const commands = commandsOf(calls);
    for (const command of commands) addCommand(pipeline, command, withSource);
    // WAIT right after the scripts, in the same round trip: it covers every earlier write of this
    // connection, and blocks only this connection (it cannot run inside a script).
    const acked = calls.filter((c) => c.acknowledge);
    let required = acked.length > 0 ? this.replicas.required() : 0;
    let waitMs = required > 0 ? Math.min(...acked.map((c) => replicaAckTimeoutMs(c.acknowledge!.leaseMs, this.options.commandTimeoutMs))) : 0;
    if (required > 0) pipeline.call('WAIT', String(required), String(waitMs));
    // Replicas that joined since the last look raise the bar (at most once a second).
    const reread = acked.length > 0 && this.replicas.rereadDue(performance.now());
    if (reread) pipeline.call('INFO', 'replication');
    const results = await withTimeout(pipeline.exec(), this.options.commandTimeoutMs, () =>
      this.unavailable(`no answer within ${this.options.commandTimeoutMs} ms`, calls[0]?.election),
    );
    if (!results) throw this.unavailable('the pipeline was not sent', calls[0]?.election);
    if (reread) {
      const [err, info] = results[results.length - 1]!;
      if (!err) this.replicas.raise(info);
    }
    const outcomes = outcomesOf(calls.length, commands, results as Array<[Error | null, unknown]>);
    const needing = outcomes.some((o, i) => o.ok && calls[i]!.acknowledge?.needed(o.value));
    if (!needing) return outcomes;
    let waitErr: Error | null = null;
    let count = Infinity;
    if (required > 0) {
      const [err, reply] = results[commands.length]!;
      waitErr = err;
      count = err ? 0 : Number(reply);
    }
    const raised = this.replicas.required();
    if (raised > required) {
      // A replica joined since this batch was sent: these writes must reach it too.
      required = raised;
      waitMs = Math.min(...acked.map((c) => replicaAckTimeoutMs(c.acknowledge!.leaseMs, this.options.commandTimeoutMs)));
      count = await this.waitForReplicas(required, waitMs);
      waitErr = null;
    }
    if (count >= required) return outcomes;
    this.askSentinelAgain();
    return outcomes.map((outcome, i) => {
      const ack = calls[i]!.acknowledge;
      if (!outcome.ok || !ack || !ack.needed(outcome.value)) return outcome;
      const why = waitErr ? `WAIT failed: ${messageOf(waitErr) ?? String(waitErr)}` : `within ${waitMs} ms`;
      return {
        ok: false as const,
        error: new ConclaveError(
          'BACKEND_UNAVAILABLE',
          `${this.label}: ${count} of ${required} replicas acknowledged the ${ack.what} ${why}, so it does not count (${this.replicas.describe()})`,
          { backend: KIND, election: calls[i]!.election },
        ),
      };
    });
  }

  /**
   * `'auto'`, before the first batch with leadership writes on a connection: which master it
   * reached and how many replicas that master has (`INFO server`, `INFO replication`). Later looks
   * ride on the batches themselves (`exec`).
   */
  private async lookForReplicas(election?: string): Promise<void> {
    if (!this.replicas.identityDue()) return;
    const pipeline = this.client.pipeline();
    pipeline.call('INFO', 'server');
    pipeline.call('INFO', 'replication');
    const results = await withTimeout(pipeline.exec(), this.options.commandTimeoutMs, () =>
      this.unavailable(`no answer to INFO within ${this.options.commandTimeoutMs} ms`, election),
    );
    if (!results) throw this.unavailable('the pipeline was not sent', election);
    const [server, replication] = (results as Array<[Error | null, unknown]>).map(([err, value]) => (err ? null : value));
    this.replicas.identify(server, replication);
  }

  /**
   * Through Sentinel, a master whose replicas do not acknowledge may have been deposed (a
   * graceful failover leaves it writable until Sentinel turns it, seconds later; one cut off from
   * Sentinel, for good): reconnect, so that ioredis asks Sentinel for the master again, rather
   * than wait for the old master to drop us or for `+switch-master` (which a client cut off from
   * Sentinel never hears). At most once a second; a master that is still the master is reached
   * again, its bar kept (same run id).
   */
  private askSentinelAgain(): void {
    const sentinels = (this.client.options as { sentinels?: unknown[] | null }).sentinels;
    if (!sentinels?.length || this.closed) return;
    const now = performance.now();
    if (now - this.askedSentinelAt < SENTINEL_ASK_EVERY_MS) return;
    this.askedSentinelAt = now;
    this.client.disconnect(true);
    this.subscriber?.disconnect(true);
  }

  /** `WAIT` alone, for writes already sent on this connection: how many replicas acknowledged them (0 on an error). */
  private async waitForReplicas(required: number, waitMs: number): Promise<number> {
    const results = await this.command(['WAIT', String(required), String(waitMs)]).catch(() => null);
    const [err, count] = results?.[0] ?? [new Error('no reply'), 0];
    return err ? 0 : Number(count);
  }

  /**
   * Fails fast when the client is not connected: a call queued until a dead server comes back
   * would answer long after the lease it is about has ended. Only a connection attempt already
   * in progress (the first connect, or a reconnect under way) is waited for, at most
   * commandTimeoutMs.
   */
  private async ready(election?: string): Promise<void> {
    if (this.closed) throw this.closedError(election);
    const client = this.client;
    if (this.dbError) throw this.dbError;
    if (client.status === 'ready') return;
    // A lazyConnect client; or one of ours that ioredis gave up on ('end': its connector failed,
    // as resolving the master through Sentinel can during a failover under load): a backend that
    // went away must come back. Errors arrive as 'close'.
    if (client.status === 'wait' || (client.status === 'end' && this.owned)) client.connect().catch(() => undefined);
    if (client.status !== 'wait' && client.status !== 'connecting' && client.status !== 'connect') {
      throw this.unavailable(`not connected (${client.status})`, election);
    }
    // One shared promise per connection attempt for every waiting call (no listeners per call).
    const settled = this.nextClientState();
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      settled,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.options.commandTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === 'timeout') throw this.unavailable(`not connected after ${this.options.commandTimeoutMs} ms`, election);
    if (!outcome) throw this.unavailable('could not connect', election);
    if (this.dbError) throw this.dbError;
  }

  /** Resolves true at the client's next 'ready', false at its next 'close'/'end'; shared. */
  private nextClientState(): Promise<boolean> {
    if (!this.clientListening) {
      this.clientListening = true;
      const settle = (ready: boolean) => {
        const s = this.clientSettled;
        this.clientSettled = null;
        s?.resolve(ready);
      };
      this.client.on('ready', () => settle(true));
      this.client.on('close', () => settle(false));
      this.client.on('end', () => settle(false));
    }
    if (!this.clientSettled) {
      let resolve!: (ready: boolean) => void;
      const promise = new Promise<boolean>((r) => (resolve = r));
      this.clientSettled = { promise, resolve };
    }
    return this.clientSettled.promise;
  }

  private noteRefusal(err: unknown): void {
    if (err instanceof Error && refusalOf(err, this.label)) this.refusal = err;
  }

  private toError(err: unknown, election?: string): ConclaveError {
    if (err instanceof ConclaveError) return err;
    const refused = refusalOf(err, this.label, election);
    if (refused) return refused;
    const message = err instanceof Error ? err.message : String(err);
    const isReply = err instanceof Error && err.name === 'ReplyError';
    if (isReply && !UNAVAILABLE_REPLIES.test(message)) {
      return new ConclaveError('BACKEND_ERROR', `${this.label} answered: ${message}`, { backend: KIND, election, cause: err });
    }
    return new ConclaveError('BACKEND_UNAVAILABLE', `${this.label}: ${message}`, { backend: KIND, election, cause: err });
  }

  /** `BACKEND_UNAVAILABLE`, unless the server refused the connection for good (see `refusal`). */
  private unavailable(why: string, election?: string): ConclaveError {
    const refused = this.refusal && refusalOf(this.refusal, this.label, election);
    if (refused) return refused;
    const lastMessage = messageOf(this.lastError);
    const last = lastMessage === null ? '' : ` (last error: ${lastMessage})`;
    return new ConclaveError('BACKEND_UNAVAILABLE', `${this.label}: ${why}${last}`, {
      backend: KIND,
      election,
      cause: this.lastError ?? undefined,
    });
  }

  private closedError(election?: string): ConclaveError {
    return new ConclaveError('CLOSED', 'the Redis backend is closed', { backend: KIND, election });
  }
}

/** One command of a pipeline: its script, its calls, and where they are in the batch. */
type Command = { script: LuaScript; calls: ScriptCall[]; at: number[] };

/**
 * The calls of a batch as commands: each alone, except those naming the same `many` script (and
 * fitting its counts), which go together (at most MAX_BATCHED_CALLS a command), where the first of
 * them was. Calls of one election by one Elector never share a batch (its calls are one at a
 * time), so sending a call ahead of others of its batch changes no outcome.
 */
function commandsOf(calls: ScriptCall[]): Command[] {
  const commands: Command[] = [];
  const open = new Map<LuaScript, Command>();
  calls.forEach((call, i) => {
    const per = call.many?.perCall;
    // A call that does not fit its batched script (not one, or other counts) goes alone.
    if (!call.many || !per || per.keys !== call.keys.length || per.args !== call.args.length) {
      commands.push({ script: call.script, calls: [call], at: [i] });
      return;
    }
    let command = open.get(call.many);
    if (!command || command.calls.length >= MAX_BATCHED_CALLS) {
      command = { script: call.many, calls: [], at: [] };
      open.set(call.many, command);
      commands.push(command);
    }
    command.calls.push(call);
    command.at.push(i);
  });
  return commands;
}

/** Adds `command` to `pipeline`: a call alone with its own script, several with their `many` script. */
function addCommand(pipeline: ReturnType<Redis['pipeline']>, command: Command, withSource: boolean): void {
  const single = command.calls.length === 1;
  const script = single ? command.calls[0]!.script : command.script;
  const keys: string[] = [];
  const args: Array<string | number> = [];
  for (const call of command.calls) {
    for (const key of call.keys) keys.push(key);
    for (const arg of call.args) args.push(arg);
  }
  if (withSource) pipeline.eval(script.source, keys.length, ...keys, ...args);
  else pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
}

/**
 * One outcome per call from the commands' results: a command's error is each of its calls', and
 * a batched call's reply is its element of the command's reply ({-1, message}: its error).
 */
function outcomesOf(count: number, commands: Command[], results: Array<[Error | null, unknown]>): Outcome[] {
  const outcomes = new Array<Outcome>(count);
  commands.forEach((command, c) => {
    const [err, value] = results[c]!;
    if (command.calls.length === 1) {
      outcomes[command.at[0]!] = err ? { ok: false, error: err } : { ok: true, value };
      return;
    }
    const replies = Array.isArray(value) ? (value as unknown[]) : [];
    command.at.forEach((i, n) => {
      const reply = replies[n];
      if (err) outcomes[i] = { ok: false, error: err };
      else if (reply === undefined) outcomes[i] = { ok: false, error: new Error(`${command.script.name}: no reply for call ${n + 1} of ${command.at.length}`) };
      else if (Array.isArray(reply) && reply[0] === -1) outcomes[i] = { ok: false, error: replyError(String(reply[1])) };
      else outcomes[i] = { ok: true, value: reply };
    });
  });
  return outcomes;
}

/** An error the server answered, as ioredis reports one (a `ReplyError`). */
function replyError(message: string): Error {
  return new (ioredis().ReplyError)(message);
}

/** Channels to SUBSCRIBE in one command, and the promise that settles once it was answered. */
interface SubscribeBatch {
  sub: Redis;
  channels: string[];
  /** The subscriber's epoch when they were asked for: a confirmation from an older connection does not count. */
  epoch: number;
  sent: Signal;
}

interface Signal {
  promise: Promise<void>;
  resolve: () => void;
}

function signal(): Signal {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function callListener(listener: (message: string | null) => void, message: string | null): void {
  try {
    listener(message);
  } catch {
    // A listener is the core's hint handler, which does not throw; one that does must not stop
    // the others from hearing the message.
  }
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

/**
 * An error's message, also for an error made in another realm (Node's socket errors seen from a
 * `vm` context such as Jest's), for which `instanceof Error` is false.
 */
function messageOf(err: unknown): string | null {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : null;
}
