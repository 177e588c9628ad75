// docs/changelog.md lists exactly the version changes of src/http/versions/, like docs/errors.md
// the error catalogue: a change without its line, or a line without its change, fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { changelogBlocks } from './changelog.ts';

const changelog = readFileSync(new URL('../../docs/changelog.md', import.meta.url), 'utf8');

test('docs/changelog.md lists every version change, per version, as the modules describe them', () => {
  const documented = new Map<number, string[]>();
  for (const match of changelog.matchAll(/<!-- changes v(\d+) -->\n([\s\S]*?)<!-- \/changes -->/g)) {
    documented.set(Number(match[1]), match[2]!.trim().split('\n'));
  }
  assert.deepEqual(documented, changelogBlocks(), 'regenerate the lists with `npm run changelog`');
});

test('every version after the first has a section, the latest marked so', () => {
  for (const version of changelogBlocks().keys()) assert.match(changelog, new RegExp(`^## v${version}\\b`, 'm'));
  assert.match(changelog, new RegExp(`^## v${LATEST_API_VERSION} \\(latest\\)`, 'm'));
});
