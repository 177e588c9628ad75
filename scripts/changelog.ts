// Prints the changelog's list of version changes (docs/changelog.md, between its markers), one
// block per version, generated from src/http/versions/changes.ts.
import { changelogBlocks } from '../test/contract/changelog.ts';

for (const [version, lines] of changelogBlocks()) console.log(`<!-- changes v${version} -->\n${lines.join('\n')}\n<!-- /changes -->\n`);
