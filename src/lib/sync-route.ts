/**
 * A route handler that Elysia composes without a promise. Elysia guesses from a handler's source
 * whether it may be async (any `return f(`, `=> f(`, `async` or `await` in it) and, if so, answers
 * the route through a promise; it also prepares whatever the handler's parameter might read
 * (cookies, headers, query) when it cannot see which fields are used. This wrapper's source shows
 * neither, so hot routes (the public GETs) stay synchronous; test/hot-paths.test.ts checks them.
 * A handler may still answer with a promise (when it must wait for storage): Elysia answers it once
 * it settles, but a rejection escapes the app's error hook, so such a promise must not reject
 * (lib/hot-route.ts answeringLateErrors).
 */
export function syncRoute<Params>(handle: (request: Request, params: Params) => Response | Promise<Response>) {
  return function route({ request, params }: { request: Request; params: Params }): Response | Promise<Response> {
    // Two steps on purpose: Bun's transpiler folds `const r = f(); return r;` into `return f(...)`.
    let response: Response | Promise<Response> | null = null;
    response = handle(request, params);
    return response;
  };
}
