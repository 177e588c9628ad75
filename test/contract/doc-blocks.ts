// The fenced shell blocks of README.md and docs/*.md, and the rules that decide which of them a
// test runs: every shell block runs, unless an HTML comment right above it says why it cannot.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../cli/orderpay-process.ts';

/** Fence languages run as shell. A `console` transcript ($ prompts, output) cannot be pasted, so it is refused. */
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);
const TRANSCRIPT_LANGUAGES = new Set(['console', 'shell-session', 'shellsession']);

/** `<!-- not run: why -->` on the line before a fence (blank lines between are allowed). */
const NOT_RUN_MARKER = /^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$/;

/**
 * What a test cannot do, and so the only reasons a shell block may be left unrun: a marked block
 * must contain one of these (else the marker is stale), an unmarked one none of them.
 */
const UNRUNNABLE_COMMANDS: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /\bnpm (?:install|ci|i)\b/, what: 'installs packages' },
  { pattern: /\bnpm (?:run )?start\b|\borderpay (?:-- )?serve\b/, what: 'starts a server that runs until it is stopped' },
  { pattern: /\bnpm (?:run )?test\b/, what: 'runs the whole test suite' },
  { pattern: /\b(?:systemctl|docker|kubectl|sudo)\b/, what: 'changes the machine' },
];

/** Commands an unlabelled block must not start with: a shell block says so, so that it is run. */
const COMMAND_START = /^\s*(?:\$ |curl |npm |npx |node |orderpay (?:serve|migrate|seed|tokens|users|clients|keys)\b|export |[A-Z_]+=\S)/;

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The `## ` heading the block sits under ('' before the first). */
  section: string;
  language: string;
  code: string;
  /** The reason given by a not-run marker, if the block has one. */
  notRun: string | undefined;
}

/** README.md, then docs/*.md in name order: the Markdown a reader runs commands from. */
export function documentedFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** Every fenced block of one Markdown file, with its language, section and marker. */
export function readFencedBlocks(file: string): DocBlock[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.*)$/.exec(lines[i]!);
    if (heading) section = heading[1]!.trim();
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, language] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence!)) body.push(lines[j++]!);
    blocks.push({
      file,
      line: i + 1,
      section,
      language: language!.toLowerCase(),
      // Blocks inside list items are indented with the item; the commands are not.
      code: body.map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l)).join('\n'),
      notRun: markerAbove(lines, i),
    });
    i = j;
  }
  return blocks;
}

function markerAbove(lines: string[], fenceIndex: number): string | undefined {
  let k = fenceIndex - 1;
  while (k >= 0 && lines[k]!.trim() === '') k--;
  return k >= 0 ? NOT_RUN_MARKER.exec(lines[k]!)?.[1] : undefined;
}

export const isShellBlock = (block: DocBlock) => SHELL_LANGUAGES.has(block.language);

/** The commands of a block without its # comments (which may well mention `npm start`). */
const commandsOf = (block: DocBlock) =>
  block.code
    .split('\n')
    .map((line) => line.replace(/(?:^|\s)#.*$/, ''))
    .join('\n');

const unrunnableIn = (block: DocBlock) =>
  UNRUNNABLE_COMMANDS.filter(({ pattern }) => pattern.test(commandsOf(block))).map(({ what }) => what);

/** A shell block a test runs: unmarked, and free of what a test cannot do (else it is a marking problem). */
export const isRunBlock = (block: DocBlock) => isShellBlock(block) && block.notRun === undefined && unrunnableIn(block).length === 0;

/** Where a block is, as a failure message names it. */
export const blockName = (block: DocBlock) => `${block.file}:${block.line}${block.section ? ` (${block.section})` : ''}`;

/** What is wrong with how one block is fenced or marked; empty when nothing is. */
export function findMarkingProblems(block: DocBlock): string[] {
  const name = blockName(block);
  if (TRANSCRIPT_LANGUAGES.has(block.language)) {
    return [`${name}: a \`${block.language}\` transcript cannot be pasted; write \`sh\` with the output as # comments`];
  }
  if (block.language === '' && block.code.split('\n').some((l) => COMMAND_START.test(l))) {
    return [`${name}: holds commands but no language; fence it as \`sh\` so that it is run`];
  }
  if (!isShellBlock(block)) return block.notRun === undefined ? [] : [`${name}: a not-run marker on a block that is not shell`];
  const unrunnable = unrunnableIn(block);
  if (block.notRun !== undefined && unrunnable.length === 0) {
    return [`${name}: marked "not run: ${block.notRun}", but nothing in it keeps a test from running it; remove the marker`];
  }
  if (block.notRun === undefined && unrunnable.length > 0) {
    return [`${name}: ${unrunnable.join(', ')}; mark it <!-- not run: why --> or split that command out`];
  }
  if (block.notRun !== undefined && block.notRun === '') return [`${name}: the not-run marker gives no reason`];
  return [];
}

/**
 * What a run block must do so that a wrong doc fails: every curl fails on an HTTP error status
 * (-f, --fail), since curl alone exits 0 on a 404.
 */
export function findUncheckedCommands(block: DocBlock): string[] {
  const commands = commandsOf(block).replace(/\\\n/g, ' ').split('\n');
  return commands
    .filter((command) => /(?:^|[\s(|;&])curl\s/.test(command) && !/\s(?:-[a-zA-Z]*f[a-zA-Z]*|--fail)\b/.test(command))
    .map((command) => `${blockName(block)}: curl without -f (a 4xx would pass unnoticed): ${command.trim()}`);
}
