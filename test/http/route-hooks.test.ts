// Hooks are on the way of the routes they apply to only (issue 28): the authorization server's
// (its /oauth rate limit, the host pinned to PUBLIC_URL, middie) are not on an API route's, and
// are on its own; the staff console's CSP is on /console's routes alone. Read from Fastify's route
// tree with each route's hooks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setUpTestApp } from '../helpers/app.ts';

const AUTHORIZATION_SERVER_HOOKS = ['limitOAuthRequests()', 'pinAuthorizationServerRequests()'];
const MIDDIE = 'runMiddie()';
const TREE_DRAWING = /^[│├└─\s]*/u;
const ROUTE = /^(\S+) \(([A-Z, ]+)\)/;

interface RouteHooks {
  path: string;
  methods: string;
  onRequest: string[];
  onSend: string[];
}

/** Each route's full path, methods and onRequest and onSend hooks, from printRoutes' tree (four columns a level). */
function routesWithHooks(tree: string): RouteHooks[] {
  const segments: string[] = [];
  const routes: RouteHooks[] = [];
  for (const line of tree.split('\n')) {
    const indent = TREE_DRAWING.exec(line)![0].length;
    const content = line.slice(indent);
    const route = ROUTE.exec(content);
    if (route) {
      const depth = Math.floor((indent - 4) / 4);
      segments.length = depth;
      segments[depth] = route[1]!;
      routes.push({ path: segments.join(''), methods: route[2]!, onRequest: [], onSend: [] });
    } else if (content.startsWith('• (onRequest) ')) {
      routes.at(-1)!.onRequest = JSON.parse(content.slice('• (onRequest) '.length)) as string[];
    } else if (content.startsWith('• (onSend) ')) {
      routes.at(-1)!.onSend = JSON.parse(content.slice('• (onSend) '.length)) as string[];
    }
  }
  return routes;
}

const t = setUpTestApp();

test("the authorization server's hooks are on its routes, and on no other route's way", () => {
  const routes = routesWithHooks(t.app.printRoutes({ includeHooks: true, commonPrefix: false }));
  // The provider's mount (/oauth/* and the RFC 8414 metadata) is the routes middie runs on: the
  // tree prints a wildcard without its prefix.
  const mount = routes.filter((r) => r.onRequest.includes(MIDDIE));
  assert.equal(mount.length, 2, `the mount's routes: ${mount.map((r) => r.path).join(', ')}`);
  const oauth = [...mount, ...routes.filter((r) => r.path.includes('/oauth/') || r.path.startsWith('/.well-known/oauth-'))];
  const api = routes.filter((r) => !oauth.includes(r));
  assert.ok(
    api.some((r) => r.path === '/orders' && r.methods.includes('GET')),
    'GET /orders is in the tree',
  );
  assert.ok(
    oauth.some((r) => r.path === '/oauth/jwks'),
    'the JWKS route is in the tree',
  );
  for (const route of api) {
    for (const hook of AUTHORIZATION_SERVER_HOOKS) assert.ok(!route.onRequest.includes(hook), `${route.methods} ${route.path}: ${hook}`);
  }
  for (const route of oauth) {
    for (const hook of AUTHORIZATION_SERVER_HOOKS) assert.ok(route.onRequest.includes(hook), `${route.methods} ${route.path}: ${hook}`);
  }
});

test("the staff console's hooks are on /console's routes, and on no API route's way", () => {
  const routes = routesWithHooks(t.app.printRoutes({ includeHooks: true, commonPrefix: false }));
  const consoleRoutes = routes.filter((r) => r.path.startsWith('/console'));
  assert.ok(consoleRoutes.length >= 3, `the console's routes: ${consoleRoutes.map((r) => r.path).join(', ')}`);
  for (const route of consoleRoutes) assert.ok(route.onSend.includes('sendConsoleCsp()'), `${route.methods} ${route.path}`);
  const others = routes.filter((r) => !consoleRoutes.includes(r));
  assert.ok(others.some((r) => r.path === '/orders' && r.onSend.length > 0));
  for (const route of others) {
    assert.ok(!route.onSend.includes('sendConsoleCsp()'), `${route.methods} ${route.path}`);
    assert.ok(!route.onRequest.includes('sendConsoleCsp()'), `${route.methods} ${route.path}`);
  }
});
