/**
 * `compute` for a request, kept for the last request it was asked about. The request gate, the rate
 * limit and the route ask for the same request's value again within one synchronous run, and a
 * request's URL and peer never change; a WeakMap entry per request cost ~0.1 µs, more than the
 * values this keeps. A request asking after another one's turn just computes its value again.
 */
export function lastRequestMemo<T>(compute: (request: Request) => T): (request: Request) => T {
  let lastOf: Request | null = null;
  let last!: T;
  return (request) => {
    if (request !== lastOf) {
      last = compute(request);
      lastOf = request;
    }
    return last;
  };
}
