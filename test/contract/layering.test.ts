// The layering rules (.dependency-cruiser.cjs) against two small trees under test/fixtures/: one
// breaking a rule per import it should not have, one clean. dependency-cruiser runs as `npm run check`
// runs it, from the tree's root so that the rules' `^src/...` paths apply.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CONFIG = fileURLToPath(new URL('../../.dependency-cruiser.cjs', import.meta.url));
const DEPCRUISE = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url));

interface Run {
  code: number | null;
  output: string;
}

function depcruise(fixture: string): Promise<Run> {
  const cwd = fileURLToPath(new URL(`../fixtures/${fixture}/`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--progress', 'none'], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The `rule: from → to` lines of dependency-cruiser's text report. */
function violations(output: string): string[] {
  return [...output.matchAll(/^\s*error (\S+): (\S+) → (\S+)$/gm)].map(([, rule, from, to]) => `${rule}: ${from} → ${to}`).sort();
}

describe('layering rules', { concurrency: true }, () => {
  test('a tree breaking the layers fails, naming each rule with the import that breaks it, and nothing else', async () => {
    const { code, output } = await depcruise('layering');
    assert.notEqual(code, 0, output);
    assert.deepEqual(
      violations(output),
      [
        'config-only-core: src/config.ts → src/http/collection.ts',
        'core-only-core: src/core/errors.ts → src/db/db.ts',
        'db-only-core-and-config: src/db/paging.ts → src/http/collection.ts',
        'domain-logic-not-to-http: src/orders/orders.service.ts → src/http/problem.ts',
        'domain-not-to-other-domain: src/payments/payments.service.ts → src/orders/orders.store.ts',
        'flows-not-to-edge: src/flows/pay.ts → src/orders/orders.routes.ts',
        'idempotency-only-core-db: src/idempotency/keyed-work.ts → src/http/problem.ts',
        'rules-are-pure: src/orders/orders.rules.ts → src/db/db.ts',
      ],
      output,
    );
  });

  test('a domain importing only its own files, core/ and db/ passes', async () => {
    const { code, output } = await depcruise('layering-clean');
    assert.equal(code, 0, output);
    assert.match(output, /no dependency violations found \(6 modules, 7 dependencies cruised\)/);
  });
});
