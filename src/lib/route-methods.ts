interface RouteDefinition {
  method: string;
  path: string;
}

/** `/a/b/` -> `/a/b` (a prefixed `get('/')` route is registered with the slash; the router ignores one either way). */
export const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/**
 * The methods the app has routes for at a path the router found no route for, so such a request is
 * answered 405 with `Allow` rather than 404. Exact paths by map, parameterised ones by pattern; one
 * trailing slash is ignored as the router does. It only ever chooses between two refusals: access,
 * limits and logging follow the route the router matched (lib/access.ts), never this.
 */
export function routeMethods(routes: readonly RouteDefinition[]): (path: string) => string[] {
  const exact = new Map<string, Set<string>>();
  const patterns: { method: string; pattern: RegExp }[] = [];
  for (const route of routes) {
    const path = withoutTrailingSlash(route.path);
    if (path.includes(':') || path.includes('*')) {
      const source = path
        .split('/')
        .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      patterns.push({ method: route.method, pattern: new RegExp(`^${source}$`) });
    } else {
      let methods = exact.get(path);
      if (methods === undefined) exact.set(path, (methods = new Set()));
      methods.add(route.method);
    }
  }
  return (rawPath) => {
    const path = withoutTrailingSlash(rawPath);
    const methods = new Set(exact.get(path));
    for (const { method, pattern } of patterns) if (pattern.test(path)) methods.add(method);
    // Elysia answers HEAD wherever it answers GET.
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
