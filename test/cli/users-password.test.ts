// `orderpay users create` takes the password off the command line: from standard input with
// --password-stdin (a real pipe), or typed at a prompt that does not echo when standard input is a
// terminal (a real pseudo-terminal, through util-linux's `script`). --password still works, with a
// warning. The rows the commands leave are read back and the stored hash checked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { verifyPassword } from '../../src/auth/passwords.ts';
import { PASSWORD_ARGUMENT_WARNING } from '../../src/cli/password-input.ts';
import {
  CLI_ENTRY,
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  ROOT,
  runOrderpay,
  withTargetDatabase,
  type Env,
  type TargetDatabase,
} from './orderpay-process.ts';

let target: TargetDatabase;
let env: Env;
before(async () => {
  target = await createTargetDatabase();
  env = commandEnv(target.env);
  const migrated = await runOrderpay(['migrate', '--json'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
});
after(cleanUpProcessesAndDatabases);

/** The stored hash of a user's password, or undefined when there is no such user. */
async function storedHash(email: string): Promise<string | undefined> {
  return withTargetDatabase(target, async (db) => {
    const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [email]);
    return rows[0]?.password_hash;
  });
}

async function createWithStdin(email: string, input: string, extra: string[] = []) {
  return runOrderpay(['users', 'create', '--email', email, '--password-stdin', ...extra, '--json'], env, { input });
}

describe(`orderpay users create --password-stdin (${DATABASE_LABEL})`, () => {
  test('reads the password from a pipe, less its final line break', async () => {
    for (const [email, input] of [
      ['pipe-lf@example.com', 'piped password 1\n'],
      ['pipe-crlf@example.com', 'piped password 1\r\n'],
      ['pipe-bare@example.com', 'piped password 1'],
    ] as const) {
      const result = await createWithStdin(email, input);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.equal(parseJsonOutput(result.stdout).email, email);
      assert.equal(await verifyPassword((await storedHash(email))!, 'piped password 1'), true, email);
    }
  });

  test('refuses several lines, a short password, and --password beside it, leaving no user', async () => {
    const refusals = [
      [
        await createWithStdin('pipe-lines@example.com', 'first line\nsecond line\n'),
        '--password-stdin reads one line; standard input has several',
      ],
      [await createWithStdin('pipe-lines@example.com', '1234567\n'), 'password must be at least 8 characters'],
      [
        await createWithStdin('pipe-lines@example.com', 'stdin password\n', ['--password', 'argument password']),
        'give either --password or --password-stdin, not both',
      ],
    ] as const;
    for (const [result, error] of refusals) {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
      assert.deepEqual(parseJsonOutput(result.stderr), { error });
    }
    assert.equal(await storedHash('pipe-lines@example.com'), undefined);
  });

  test('without a password, and stdin not a terminal, exits 2 naming both ways to give one', async () => {
    const result = await runOrderpay(['users', 'create', '--email', 'nopass@example.com'], env);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      'orderpay: no password: pipe it in with --password-stdin, or run the command on a terminal to be asked for it\n',
    );
    assert.equal(await storedHash('nopass@example.com'), undefined);
  });

  test('--password still works, with a warning that it is deprecated', async () => {
    const json = await runOrderpay(['users', 'create', '--email', 'argument@example.com', '--password', 'argument pass', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(parseJsonOutput(json.stderr), { warning: PASSWORD_ARGUMENT_WARNING });
    assert.equal(await verifyPassword((await storedHash('argument@example.com'))!, 'argument pass'), true);

    const human = await runOrderpay(['users', 'create', '--email', 'argument2@example.com', '--password', 'argument pass'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stderr, `orderpay: ${PASSWORD_ARGUMENT_WARNING}\n`);
    assert.match(PASSWORD_ARGUMENT_WARNING, /deprecated.*--password-stdin/);
  });
});

interface TerminalRun {
  code: number | null;
  /** Everything the terminal showed: prompts, echo (if any) and output. */
  screen: string;
}

/**
 * Runs `orderpay <args>` on a pseudo-terminal (`script -q -e -c … /dev/null`) and types each of
 * `keystrokes` once the screen shows its prompt. Typing waits for the prompt because a terminal
 * echoes what arrives before the program has turned echo off, whatever the program does.
 */
async function runOnTerminal(args: string[], keystrokes: { after: string; type: string }[]): Promise<TerminalRun> {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const commandLine = [process.execPath, CLI_ENTRY, ...args].map(quote).join(' ');
  const child = spawn('script', ['-q', '-e', '-c', commandLine, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    let shown = 0;
    for (const { after: prompt, type } of keystrokes) {
      while (screen.indexOf(prompt, shown) === -1) {
        if (child.exitCode !== null) assert.fail(`exited before "${prompt}":\n${screen}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      shown = screen.indexOf(prompt, shown) + prompt.length;
      child.stdin.write(type);
    }
    const code = await closed;
    child.stdin.end();
    return { code, screen };
  } finally {
    clearTimeout(deadline);
  }
}

describe(`orderpay users create on a terminal (${DATABASE_LABEL})`, () => {
  const SECRET = 'typed-but-hidden-1';

  test('asks twice without echoing, and stores the password typed', async () => {
    const run = await runOnTerminal(
      ['users', 'create', '--email', 'terminal@example.com', '--json'],
      [
        { after: 'Password: ', type: `${SECRET}\r` },
        { after: 'Repeat the password: ', type: `${SECRET}\r` },
      ],
    );
    assert.equal(run.code, 0, run.screen);
    assert.ok(!run.screen.includes(SECRET), `the password appeared on the terminal:\n${run.screen}`);
    assert.ok(!run.screen.includes('*'), 'not even masked');
    assert.match(run.screen, /\{"id":\d+,"email":"terminal@example\.com","name":"terminal","role":"customer"\}/);
    assert.equal(await verifyPassword((await storedHash('terminal@example.com'))!, SECRET), true);
  });

  test('two different passwords, Ctrl-C or Ctrl-D: exit 2 and no user', async () => {
    const attempts = [
      {
        keystrokes: [
          { after: 'Password: ', type: `${SECRET}\r` },
          { after: 'Repeat the password: ', type: 'something-else-1\r' },
        ],
        error: 'the two passwords differ',
      },
      { keystrokes: [{ after: 'Password: ', type: 'half-typed\x03' }], error: 'password entry canceled' },
      { keystrokes: [{ after: 'Password: ', type: '\x04' }], error: 'password entry canceled' },
    ];
    for (const { keystrokes, error } of attempts) {
      const run = await runOnTerminal(['users', 'create', '--email', 'refused@example.com'], keystrokes);
      assert.equal(run.code, 2, run.screen);
      assert.ok(run.screen.includes(`orderpay: ${error}`), run.screen);
      assert.ok(!run.screen.includes(SECRET) && !run.screen.includes('half-typed'), run.screen);
    }
    assert.equal(await storedHash('refused@example.com'), undefined);
  });
});
