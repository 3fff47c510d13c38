/** Ends one of the client's gRPC streams and cancels its call; a stream already closed is left as it is. */
export function endStream(stream: { end(): unknown; cancel?: () => void }): void {
  try {
    stream.end();
    stream.cancel?.();
  } catch {
    // already closed
  }
}
