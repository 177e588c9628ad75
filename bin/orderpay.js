#!/usr/bin/env node
// The orderpay command: runs src/cli.ts with a Node.js that can strip TypeScript types (>= 22.18).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
if (major > 22 || (major === 22 && minor >= 18)) {
  const { runCli } = await import(cli);
  const code = await runCli(process.argv.slice(2));
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
} else {
  // Older Node: scripts/node.sh provides Node 24 (installed once from the npm registry).
  const script = fileURLToPath(new URL('../scripts/node.sh', import.meta.url));
  const result = spawnSync('sh', [script, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exitCode = result.status ?? 1;
}
