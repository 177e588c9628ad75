// Number formats and tables shared by the console output and docs/benchmarks.md.

export const int = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => n.toFixed(2);
/** Requests per second: whole above 100, with decimals below (a deep page by number may take seconds). */
export const rate = (n: number) => (n >= 100 ? int(n) : n.toPrecision(2));
export const pct = (share: number) => `${(share * 100).toFixed(0)}%`;
/** Megabytes of 10⁶ bytes, as the memory target is stated. */
export const mb = (bytes: number) => (bytes / 1e6).toFixed(0);
export const mark = (met: boolean) => (met ? 'pass' : 'MISS');

/** Plain-text columns for the console: the first left-aligned, the others right-aligned. */
export function alignColumns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}

const markdownRow = (cells: string[]) => `| ${cells.join(' | ')} |`;

export function markdownTable(header: string[], rows: string[][]): string {
  return [markdownRow(header), markdownRow(header.map(() => '---')), ...rows.map(markdownRow)].join('\n');
}
