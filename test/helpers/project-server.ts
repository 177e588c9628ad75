// A browser project without a bundler: a page whose import map (HTML Living Standard, "Import
// maps") sends each package's name to the module its package.json exports for `import`, and the
// project's files served as they are. A module importing anything the map does not name (a
// Node built-in, say) fails to load.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';

interface Manifest {
  main?: string;
  exports?: Record<string, string | Record<string, string>>;
}

/** The module a browser loads for `import 'name'`: the `import` condition of its "." export. */
function browserEntry(projectDir: string, name: string): string {
  const manifest = JSON.parse(readFileSync(path.join(projectDir, 'node_modules', name, 'package.json'), 'utf8')) as Manifest;
  const root = manifest.exports?.['.'];
  const entry = typeof root === 'string' ? root : (root?.import ?? root?.default ?? manifest.main);
  if (!entry) throw new Error(`${name} exports nothing for import`);
  return path.posix.join('/node_modules', name, entry);
}

/** Serves projectDir on port: `/` is a page mapping packages to their modules, `*.js` and `*.mjs` the files. */
export function startProjectServer(projectDir: string, port: number, packages: string[]): Promise<Server> {
  const importMap = { imports: Object.fromEntries(packages.map((name) => [name, browserEntry(projectDir, name)])) };
  const page = `<!doctype html><meta charset="utf-8"><title>A project</title>
<script type="importmap">${JSON.stringify(importMap)}</script>`;
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://project').pathname);
    if (pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page);
      return;
    }
    let body: Buffer | undefined;
    if (/\.m?js$/.test(pathname) && !pathname.includes('..')) {
      try {
        body = readFileSync(path.join(projectDir, pathname));
      } catch {}
    }
    response.writeHead(body ? 200 : 404, { 'content-type': body ? 'text/javascript; charset=utf-8' : 'text/plain' });
    response.end(body ?? 'not found');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

export const closeServer = (server: Server) =>
  new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
