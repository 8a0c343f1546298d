// fetch for the SDK's Streamable HTTP client transport, which hands every request the one AbortSignal it keeps for
// the session (to abort everything at close). Each request then adds an abort listener to that signal, removed only
// when the request is garbage-collected: under load thousands pile up (a MaxListenersExceededWarning on every few
// hundred calls, and a list every abort walks). Here each request gets a signal of its own, aborted with the
// session's, whose listener on the session's signal is removed once the response is read to its end.
import { setMaxListeners } from 'node:events';

/** Calls `release` once, when the body has been read to its end, failed, or was cancelled. */
function releasingBody(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        release();
        controller.error(err);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason);
    },
  });
}

/** `fetch` with a signal of its own per request, linked to the one the caller passes (see above). */
export function linkedFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const outer = init?.signal;
    if (outer === undefined || outer === null) return base(input, init);
    const inner = new AbortController();
    // One listener per request in flight at most: none outlives its response.
    setMaxListeners(0, outer);
    const abort = (): void => inner.abort(outer.reason);
    if (outer.aborted) inner.abort(outer.reason);
    else outer.addEventListener('abort', abort, { once: true });
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      outer.removeEventListener('abort', abort);
    };
    let res: Response;
    try {
      res = await base(input, { ...init, signal: inner.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (res.body === null) {
      release();
      return res;
    }
    return new Response(releasingBody(res.body, release), {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
