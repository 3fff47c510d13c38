/**
 * Resolves or rejects like `promise`, or rejects with `onTimeout()` after `ms`. The original
 * promise is left to settle on its own; its late rejection is swallowed here so it never becomes
 * an unhandled rejection (callers ignore late answers by design).
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
