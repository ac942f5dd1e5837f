import type { Readable, Writable } from 'node:stream';

/**
 * `source.pipe(destination)` with the clean-up of `stream.pipeline`: an error in the source destroys
 * the destination, and a destination closed before the source ended (a client that left) destroys
 * the source, which cancels the upstream read. `pipeline()` measured ~20 µs more CPU per call (it
 * sets up an AbortController and end-of-stream watchers), and a streamed request used it twice.
 */
export function pipeInto<Destination extends Writable>(source: Readable, destination: Destination): Destination {
  source.once('error', (error) => destination.destroy(error));
  destination.once('close', () => {
    if (!source.readableEnded) source.destroy();
  });
  return source.pipe(destination);
}
