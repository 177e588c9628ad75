// Whether what a command printed is what a doc's output block shows. A shown output is what a reader
// sees, not a transcript to replay: ids and times differ from run to run, and the docs elide with
// `…`. So JSON is compared as values, with an id (`id`, `…Id`) matching any id of its kind and an
// RFC 3339 time any such time; text line by line. In both, `…` stands for anything: a member or
// an element left out, a value, or part of a string or line.

const ELLIPSIS = '…';
/** What `…` becomes in shown JSON: a member (`…` where a key would be), an element, or a value. */
const REST = '\u0000rest';
const ANY = '\u0000any';
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;
const ID_KEY = /^(?:id|\w+Id)$/;

export interface ShownOutput {
  /** `json`, or anything else for text. */
  language: string;
  code: string;
}

/** How much of the printed text a shown output covers; `incomplete` until all of it has been printed. */
export type OutputComparison = { kind: 'incomplete' } | { kind: 'matched'; length: number } | { kind: 'differs'; problems: string[] };

/**
 * Compares the start of `printed` with a shown output: as many JSON values as it shows, or as many
 * lines. `incomplete` says that more printed text could still make it match.
 */
export function compareOutput(shown: ShownOutput, printed: string): OutputComparison {
  return shown.language === 'json' ? compareJson(shown.code, printed) : compareLines(shown.code, printed);
}

/** compareOutput for all a command printed: every bit of it must be shown. */
export function compareWholeOutput(shown: ShownOutput, printed: string): string[] {
  // A last line without its newline (curl -w '%{http_code}') is a line all the same.
  const text = printed.endsWith('\n') ? printed : `${printed}\n`;
  const comparison = compareOutput(shown, text);
  if (comparison.kind === 'differs') return comparison.problems;
  if (comparison.kind === 'incomplete') return ['it printed less than is shown'];
  const rest = text.slice(comparison.length).trim();
  return rest === '' ? [] : [`it printed more than is shown: ${rest.slice(0, 200)}`];
}

function compareLines(shown: string, printed: string): OutputComparison {
  const expected = shown.replace(/\n+$/, '').split('\n');
  const lines: string[] = [];
  // Blank lines before the output (the newline after a JSON value shown before it) are not shown.
  let at = /^\s*/.exec(printed)![0].lastIndexOf('\n') + 1;
  while (lines.length < expected.length) {
    const end = printed.indexOf('\n', at);
    if (end === -1) return { kind: 'incomplete' };
    lines.push(printed.slice(at, end).replace(/\s+$/, ''));
    at = end + 1;
  }
  const problems = expected.flatMap((line, i) =>
    matchesPattern(line.replace(/\s+$/, ''), lines[i]!)
      ? []
      : [`line ${i + 1}: shown ${JSON.stringify(line)}, printed ${JSON.stringify(lines[i])}`],
  );
  return problems.length === 0 ? { kind: 'matched', length: at } : { kind: 'differs', problems };
}

function compareJson(shown: string, printed: string): OutputComparison {
  const expected = readJsonValues(markEllipses(shown), Number.POSITIVE_INFINITY);
  if (expected === undefined) throw new Error(`a shown JSON output does not parse:\n${shown}`);
  const actual = readJsonValues(printed, expected.values.length);
  if (actual === undefined || actual.values.length < expected.values.length) return { kind: 'incomplete' };
  const problems = expected.values.flatMap((value, i) =>
    compareValue(value, actual.values[i], expected.values.length > 1 ? `[${i}]` : '', undefined),
  );
  return problems.length === 0
    ? { kind: 'matched', length: actual.end + /^\s*/.exec(printed.slice(actual.end))![0].length }
    : { kind: 'differs', problems };
}

function matchesPattern(pattern: string, text: string): boolean {
  const parts = pattern.split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's').test(text);
}

function compareValue(shown: unknown, actual: unknown, at: string, key: string | undefined): string[] {
  const where = at === '' ? 'the output' : at;
  if (shown === ANY) return [];
  if (typeof shown === 'string' && shown.includes(ELLIPSIS)) {
    return typeof actual === 'string' && matchesPattern(shown, actual)
      ? []
      : [`${where}: shown ${JSON.stringify(shown)}, printed ${JSON.stringify(actual)}`];
  }
  if (key !== undefined && ID_KEY.test(key) && (typeof shown === 'number' || typeof shown === 'string')) {
    return sameKindOfId(shown, actual) ? [] : [`${where}: shown the id ${JSON.stringify(shown)}, printed ${JSON.stringify(actual)}`];
  }
  if (typeof shown === 'string' && RFC3339_UTC.test(shown)) {
    return typeof actual === 'string' && RFC3339_UTC.test(actual) ? [] : [`${where}: shown a time, printed ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(shown)) return compareArray(shown, actual, at);
  if (typeof shown === 'object' && shown !== null) return compareObject(shown as Record<string, unknown>, actual, at);
  return Object.is(shown, actual) ? [] : [`${where}: shown ${JSON.stringify(shown)}, printed ${JSON.stringify(actual)}`];
}

/** Two ids of one kind: both integers, or both strings with the same prefix (`evt_`). */
function sameKindOfId(shown: number | string, actual: unknown): boolean {
  if (typeof shown === 'number') return Number.isInteger(actual);
  return typeof actual === 'string' && actual.startsWith(shown.slice(0, shown.indexOf('_') + 1));
}

function compareArray(shown: unknown[], actual: unknown, at: string): string[] {
  if (!Array.isArray(actual)) return [`${at || 'the output'}: shown an array, printed ${JSON.stringify(actual)}`];
  const open = shown.at(-1) === REST;
  const elements = open ? shown.slice(0, -1) : shown;
  if (open ? actual.length < elements.length : actual.length !== elements.length) {
    return [`${at || 'the output'}: shown ${elements.length}${open ? ' or more' : ''} elements, printed ${actual.length}`];
  }
  return elements.flatMap((element, i) => compareValue(element, actual[i], `${at}/${i}`, undefined));
}

function compareObject(shown: Record<string, unknown>, actual: unknown, at: string): string[] {
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
    return [`${at || 'the output'}: shown an object, printed ${JSON.stringify(actual)}`];
  }
  const printed = actual as Record<string, unknown>;
  const keys = Object.keys(shown).filter((key) => key !== REST);
  const problems = keys.flatMap((key) =>
    key in printed ? compareValue(shown[key], printed[key], `${at}/${key}`, key) : [`${at}/${key}: shown, not printed`],
  );
  if (!(REST in shown))
    problems.push(
      ...Object.keys(printed)
        .filter((key) => !(key in shown))
        .map((key) => `${at}/${key}: printed, not shown`),
    );
  return problems;
}

/**
 * Shown JSON with its ellipses made parseable: `…` where a member would be is a REST member, where
 * an element would be a REST element, where a value would be ANY. Ellipses in strings stay.
 */
function markEllipses(text: string): string {
  let out = '';
  const open: string[] = [];
  let inString = false;
  let previous = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === '\\') out += text[++i] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === ELLIPSIS) {
      const inObject = open.at(-1) === '{';
      out += previous === ':' ? JSON.stringify(ANY) : inObject ? `${JSON.stringify(REST)}: 0` : JSON.stringify(REST);
      previous = '"';
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') open.push(char);
    else if (char === '}' || char === ']') open.pop();
    if (!/\s/.test(char)) previous = char;
    out += char;
  }
  return out;
}

/**
 * Up to `count` JSON values at the start of text, separated by white space (as commands print them,
 * one after another), and where the last one ends; undefined while the last one is unfinished.
 */
function readJsonValues(text: string, count: number): { values: unknown[]; end: number } | undefined {
  const values: unknown[] = [];
  let at = 0;
  while (values.length < count) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    if (at === text.length) break;
    const end = endOfJsonValue(text, at);
    if (end === undefined) return undefined;
    try {
      values.push(JSON.parse(text.slice(at, end)));
    } catch {
      // Not JSON at all: whatever it is, it is not the value shown.
      values.push(text.slice(at, end));
    }
    at = end;
  }
  return { values, end: at };
}

/** Where the JSON value starting at `start` ends: its closing bracket or quote, or the end of a bare word. */
function endOfJsonValue(text: string, start: number): number | undefined {
  const first = text[start]!;
  if (first !== '{' && first !== '[' && first !== '"') {
    const end = text.slice(start).search(/[\s,\]}]/);
    return end === -1 ? text.length : start + end;
  }
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      if (!inString && depth === 0) return i + 1;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}
