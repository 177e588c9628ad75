// The routes registered so far, by path pattern: which methods a path supports, to answer 405
// with Allow (RFC 9110 §15.5.6) instead of 404 for a known path.

export interface RouteTable {
  add(url: string, methods: string | string[]): void;
  methodsFor(path: string): string[];
}

export function createRouteTable(): RouteTable {
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  const byUrl = new Map<string, Set<string>>();
  return {
    add(url, methods) {
      let set = byUrl.get(url);
      if (!set) {
        set = new Set();
        byUrl.set(url, set);
        const source = url
          .split('/')
          .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        routes.push({ pattern: new RegExp(`^${source}$`), methods: set });
      }
      for (const m of Array.isArray(methods) ? methods : [methods]) set.add(m);
    },
    methodsFor(path) {
      const methods = new Set<string>();
      for (const route of routes) if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
      return [...methods].sort();
    },
  };
}
