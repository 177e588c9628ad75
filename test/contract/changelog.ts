// The lists of docs/changelog.md as the version-change modules say them: one line per change.
import { VERSION_CHANGES } from '../../src/http/versions/changes.ts';

const names = (record: Readonly<Record<string, unknown>>) => Object.keys(record).join(', ') || 'none';

/** Version → its changes' lines, newest version first. */
export function changelogBlocks(): Map<number, string[]> {
  const blocks = new Map<number, string[]>();
  for (const change of [...VERSION_CHANGES].sort((a, b) => b.version - a.version)) {
    const lines = blocks.get(change.version) ?? [];
    lines.push(`- ${change.description} Resources: ${names(change.resources)}. Requests: ${names(change.requests)}.`);
    blocks.set(change.version, lines);
  }
  return blocks;
}
