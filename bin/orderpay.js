#!/usr/bin/env node
// The orderpay command: runs src/cli.ts with a Node.js that can strip TypeScript types (>= 22.18).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
if (major > 22 || (major === 22 && minor >= 18)) {
  const { runCli } = await import(cli);
  const code = await runCli(process.argv.slice(2));
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
} else {
  // Older Node: scripts/node.sh provides Node 24 (installed once from the npm registry) and execs
  // it, so the child is the server itself. A supervisor signals this process only: pass SIGTERM
  // and SIGINT on (a repeat is harmless, src/main.ts), and end as the child ends.
  const script = fileURLToPath(new URL('../scripts/node.sh', import.meta.url));
  const child = spawn('sh', [script, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
  // A shell's convention for a child killed by a signal: 128 + its number.
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}
