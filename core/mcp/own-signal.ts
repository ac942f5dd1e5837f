/** Statuses whose `Response` may not carry a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch that gives each request an abort signal of its own, linked to the caller's and unlinked
 * once the answer's body has ended. The SDK's transports hand every request their one long-lived
 * signal, and undici's `Request` keeps an abort listener on the signal it is given until it is
 * garbage-collected: on a busy connection that list grew between collections, and each request's
 * addition scanned it (about 5 % of a tool call's CPU in `bench/mcp.ts`'s profile).
 */
export function withOwnSignal(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const shared = init?.signal;
    if (shared === undefined || shared === null) return base(input, init);
    const own = new AbortController();
    const abort = () => own.abort(shared.reason);
    if (shared.aborted) abort();
    else shared.addEventListener('abort', abort, { once: true });
    const unlink = () => shared.removeEventListener('abort', abort);
    let response: Response;
    try {
      response = await base(input, { ...init, signal: own.signal });
    } catch (error) {
      unlink();
      throw error;
    }
    const body = response.body;
    if (body === null || NULL_BODY.has(response.status)) {
      unlink();
      return response;
    }
    // The body stays abortable while it is read (an event stream may last long); the link goes when it ends.
    const reader = body.getReader();
    const relayed = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            unlink();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          unlink();
          controller.error(error);
        }
      },
      cancel(reason) {
        unlink();
        return reader.cancel(reason);
      },
    });
    return new Response(relayed, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
