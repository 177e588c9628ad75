// Builds the staff console (console/) into console/dist with Vite. `npm install` runs it (the root
// `prepare` script); `npm start` runs it with --if-stale first, which builds only when dist is
// missing or older than a source. Where the console's sources are not there (an installed
// package, which ships console/dist), there is nothing to build.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const consoleDir = join(root, 'console');
const builtPage = join(consoleDir, 'dist', 'index.html');
// The console's sources, and the typed client's (not its dist/, which every `npm run check`
// rebuilds with new times: the console would look stale after each, and be rebuilt under a server).
const sources = [
  join(consoleDir, 'src'),
  join(consoleDir, 'index.html'),
  join(consoleDir, 'vite.config.ts'),
  join(consoleDir, 'package.json'),
  ...['client.ts', 'pages.ts', 'problem.ts', 'schema.ts'].map((name) => join(root, 'clients', 'typescript', name)),
];

function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

function isStale(): boolean {
  if (!existsSync(builtPage)) return true;
  return Math.max(...sources.map(newestChange)) > statSync(builtPage).mtimeMs;
}

if (!existsSync(join(consoleDir, 'src'))) process.exit(0);
if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);

const { build } = await import('vite');
await build({ root: consoleDir, configFile: join(consoleDir, 'vite.config.ts'), logLevel: 'warn' });
console.error(`the staff console is built into ${join(consoleDir, 'dist')}`);
