// The fenced blocks of README.md and docs/*.md, and the rules that decide what a test does with
// each: every shell block runs, unless an HTML comment right above it says why it cannot. Other
// comments there give a block a part in a walkthrough: what a block before it prints (checked), a
// file the reader saves (written, then run by a later block), or a command that runs until stopped
// in a terminal of its own (a webhook receiver).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEMO_REDIRECT_URI } from '../../src/seed.ts';
import { ROOT } from '../cli/orderpay-process.ts';

/** Fence languages run as shell. A `console` transcript ($ prompts, output) cannot be pasted, so it is refused. */
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell']);
const TRANSCRIPT_LANGUAGES = new Set(['console', 'shell-session', 'shellsession']);

/** An HTML comment on the line before a fence (blank lines between are allowed). */
const COMMENT = /^\s*<!--\s*(.*?)\s*-->\s*$/;
/** `not run: why`: a shell block a test cannot run. */
const NOT_RUN_MARKER = /^not run:\s*(.*)$/;
/** `output`, `output of <terminal>`, `output, eventually`: what the last block run there printed. */
const OUTPUT_MARKER = /^output(?: of ([\w-]+))?(, eventually)?$/;
/** `file: <name>`: a file the reader saves in the terminal's directory. */
const FILE_MARKER = /^file: ([\w.-]+)$/;
/** `in its own terminal: <name>`: a command that runs until stopped, beside the other blocks. */
const TERMINAL_MARKER = /^in its own terminal: ([\w-]+)$/;

/**
 * The guides: walkthroughs whose every block runs or is checked, against a server started as they
 * say (test/contract/docs-guides.test.ts; docs-shell.test.ts runs the other documents).
 */
export const GUIDES: readonly string[] = ['docs/fapi.md', 'docs/migrating-to-v2.md', 'docs/migrating-to-v3.md', 'docs/webhooks.md'];

/**
 * The local addresses the docs name, each where its server listens by default, so that copy-paste
 * works on a machine: orderpay's (`npm start`) and the webhook guide's receiver. A test maps them to
 * its own ports. The demo client's redirect URI is named but never listened on.
 */
export const DOCS_SERVER_URL = 'http://127.0.0.1:3000';
export const DOCS_RECEIVER_URL = 'http://127.0.0.1:4000';
const LOCAL_ADDRESS = /\b(?:localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0):\d+/g;
const KNOWN_ADDRESSES = new Set([DOCS_SERVER_URL, DOCS_RECEIVER_URL, DEMO_REDIRECT_URI].map((url) => new URL(url).host));

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
  /** An output block: what the last block run in the main terminal (or the one named) printed. */
  output: { terminal: string | undefined; eventually: boolean } | undefined;
  /** A file block: the name the reader saves it under. */
  fileName: string | undefined;
  /** A block run in a terminal of its own, by that terminal's name. */
  terminal: string | undefined;
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
    const marker = commentAbove(lines, i) ?? '';
    const output = OUTPUT_MARKER.exec(marker);
    blocks.push({
      file,
      line: i + 1,
      section,
      language: language!.toLowerCase(),
      // Blocks inside list items are indented with the item; the commands are not.
      code: body.map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l)).join('\n'),
      notRun: NOT_RUN_MARKER.exec(marker)?.[1],
      output: output ? { terminal: output[1], eventually: output[2] !== undefined } : undefined,
      fileName: FILE_MARKER.exec(marker)?.[1],
      terminal: TERMINAL_MARKER.exec(marker)?.[1],
    });
    i = j;
  }
  return blocks;
}

function commentAbove(lines: string[], fenceIndex: number): string | undefined {
  let k = fenceIndex - 1;
  while (k >= 0 && lines[k]!.trim() === '') k--;
  return k >= 0 ? COMMENT.exec(lines[k]!)?.[1] : undefined;
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

/** A shell block a test runs: not marked unrunnable, and free of what a test cannot do (else it is a marking problem). */
export const isRunBlock = (block: DocBlock) => isShellBlock(block) && block.notRun === undefined && unrunnableIn(block).length === 0;

/** A block that shows, and so checks, what another printed; or a file that a later block runs. */
const isCheckedBlock = (block: DocBlock) => block.output !== undefined || block.fileName !== undefined;

/** Where a block is, as a failure message names it. */
export const blockName = (block: DocBlock) => `${block.file}:${block.line}${block.section ? ` (${block.section})` : ''}`;

/** What is wrong with how one block is fenced or marked; empty when nothing is. */
export function findMarkingProblems(block: DocBlock): string[] {
  const name = blockName(block);
  if (TRANSCRIPT_LANGUAGES.has(block.language)) {
    return [`${name}: a \`${block.language}\` transcript cannot be pasted; write \`sh\` and show the output in a block of its own`];
  }
  if (block.language === '' && block.code.split('\n').some((l) => COMMAND_START.test(l))) {
    return [`${name}: holds commands but no language; fence it as \`sh\` so that it is run`];
  }
  if (isCheckedBlock(block)) {
    return isShellBlock(block) ? [`${name}: a shell block is run; an output or a file is fenced in its own language (json, text, js)`] : [];
  }
  if (!isShellBlock(block)) {
    if (block.notRun !== undefined) return [`${name}: a not-run marker on a block that is not shell`];
    return block.terminal === undefined ? [] : [`${name}: only a shell block runs in a terminal of its own`];
  }
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
 * What is wrong with the order of one document's blocks: an output shown where nothing was run to
 * print it, or twice for one block; a run again (`eventually`) of a block that writes; a file no
 * later block uses.
 */
export function findSequenceProblems(blocks: DocBlock[]): string[] {
  const problems: string[] = [];
  const started = new Set<string>();
  let lastRun: DocBlock | undefined;
  let shown = false;
  blocks.forEach((block, index) => {
    const name = blockName(block);
    if (block.terminal !== undefined && isRunBlock(block)) started.add(block.terminal);
    else if (isRunBlock(block)) [lastRun, shown] = [block, false];
    if (block.fileName !== undefined && !blocks.slice(index + 1).some((b) => isRunBlock(b) && b.code.includes(block.fileName!))) {
      problems.push(`${name}: the file ${block.fileName} is run by no block after it`);
    }
    if (block.output === undefined) return;
    if (block.output.terminal !== undefined) {
      if (!started.has(block.output.terminal)) problems.push(`${name}: no block before it runs in the terminal ${block.output.terminal}`);
      return;
    }
    if (lastRun === undefined) problems.push(`${name}: an output, but no block before it is run`);
    else if (shown) problems.push(`${name}: a second output of ${blockName(lastRun)}`);
    else if (block.output.eventually && findWrites(lastRun).length > 0) {
      problems.push(
        `${name}: runs ${blockName(lastRun)} again until it prints this, but that block writes: ${findWrites(lastRun).join('; ')}`,
      );
    }
    shown = true;
  });
  return problems;
}

/** The curl commands of a block that change something (a method other than GET, or a body). */
function findWrites(block: DocBlock): string[] {
  return commandLines(block).filter(
    (command) => /(?:^|[\s(|;&])curl\s/.test(command) && /\s(?:-X|--request|-d|--data[\w-]*|--json|-F|--form|-T)\b/.test(command),
  );
}

/** What in a guide is neither run, nor shown output, nor a file a block runs: a block nothing checks. */
export function findUncheckedBlocks(blocks: DocBlock[]): string[] {
  return blocks
    .filter((block) => !isShellBlock(block) && !isCheckedBlock(block))
    .map(
      (block) =>
        `${blockName(block)}: a \`${block.language || 'plain'}\` block neither run nor checked; make it a command, or the output or file of one`,
    );
}

/** Local addresses in a run or file block other than the ones the docs use. */
export function findUnknownAddresses(block: DocBlock): string[] {
  if (!isRunBlock(block) && block.fileName === undefined) return [];
  return [...block.code.matchAll(LOCAL_ADDRESS)]
    .filter(([address]) => !KNOWN_ADDRESSES.has(address))
    .map(([address]) => `${blockName(block)}: names ${address}; the docs' servers are ${DOCS_SERVER_URL} and ${DOCS_RECEIVER_URL}`);
}

/** The files a document's blocks leave in the terminal's directory: files saved, and files written with `>`. */
export function findWrittenFiles(blocks: DocBlock[]): string[] {
  const saved = blocks.flatMap((block) => (block.fileName === undefined ? [] : [block.fileName]));
  const redirected = blocks
    .filter(isRunBlock)
    .flatMap((block) => [...commandsOf(block).matchAll(/(?:^|\s)>\s*([\w.-]+)(?=\s|$)/gm)].map((m) => m[1]!));
  return [...new Set([...saved, ...redirected])];
}

/**
 * The variables a not-run block sets on the command that starts orderpay (`NAME=value npm start`):
 * the configuration a test starts its server with.
 */
export function findServerVariables(block: DocBlock): Record<string, string> {
  const variables: Record<string, string> = {};
  if (block.notRun === undefined) return variables;
  for (const command of commandLines(block)) {
    const assignments = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)+)(?:npm (?:run )?start|orderpay serve)\b/.exec(command.trim())?.[1] ?? '';
    for (const [, name, value] of assignments.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) variables[name!] = value!;
  }
  return variables;
}

/** The commands of a block, one a line, continuation lines joined and # comments left out. */
const commandLines = (block: DocBlock) => commandsOf(block).replace(/\\\n/g, ' ').split('\n');

/**
 * What a run block must do so that a wrong doc fails: every curl fails on an HTTP error status
 * (-f, --fail), since curl alone exits 0 on a 404.
 */
export function findUncheckedCommands(block: DocBlock): string[] {
  return commandLines(block)
    .filter((command) => /(?:^|[\s(|;&])curl\s/.test(command) && !/\s(?:-[a-zA-Z]*f[a-zA-Z]*|--fail)\b/.test(command))
    .map((command) => `${blockName(block)}: curl without -f (a 4xx would pass unnoticed): ${command.trim()}`);
}
