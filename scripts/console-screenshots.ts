// `npm run console-screenshots`: walks the staff console in Chromium again (test/e2e/console.test.ts,
// which saves a screenshot of each page in test-artifacts/console/) and copies the screenshots into
// docs/console/, where docs/console.md shows them. Commit what changed.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('..', import.meta.url);
const artifacts = fileURLToPath(new URL('test-artifacts/console/', root));
const docs = fileURLToPath(new URL('docs/console/', root));

// The walk serves console/dist: built first where a source is newer, so the pictures show the sources.
const built = spawnSync(process.execPath, [fileURLToPath(new URL('scripts/build-console.ts', root)), '--if-stale'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
rmSync(artifacts, { recursive: true, force: true });
// CI=true: without Chromium the walk fails rather than being skipped, so no old screenshot stays unnoticed.
const walk = spawnSync(process.execPath, ['--test', '--test-timeout=300000', fileURLToPath(new URL('test/e2e/console.test.ts', root))], {
  stdio: 'inherit',
  env: { ...process.env, CI: 'true' },
});
if (walk.status !== 0) {
  console.error('the console walk failed: docs/console/ is left as it was');
  process.exit(walk.status ?? 1);
}
mkdirSync(docs, { recursive: true });
const shots = readdirSync(artifacts).filter((name) => name.endsWith('.png'));
for (const name of shots) copyFileSync(artifacts + name, docs + name);
console.log(`${shots.length} screenshots copied into docs/console/: ${shots.join(', ')}`);
