// A new password for a command, kept off the command line (where `ps`, shell history and
// `npm run`'s echo of its script would show it): typed at a prompt that does not echo when
// standard input is a terminal, or read from standard input with --password-stdin.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from './command.ts';

export interface PasswordOptions {
  password?: string;
  'password-stdin'?: boolean;
}

export const PASSWORD_OPTIONS = {
  password: { type: 'string' },
  'password-stdin': { type: 'boolean', default: false },
} as const;

export const PASSWORD_ARGUMENT_WARNING =
  '--password is deprecated: it shows the password to other users of this machine (ps) and keeps it in shell history; use --password-stdin, or the prompt on a terminal';

/** All of standard input, less one final line break (`echo`, `printf '%s\n'`, a file's last line). */
async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new UsageError('--password-stdin reads one line; standard input has several');
  return password;
}

/**
 * Asks on stderr (stdout stays for --json) and reads one line from the terminal. readline runs the
 * terminal in raw mode, so the terminal echoes nothing, and readline's own echo goes to an output
 * muted once the prompt is written. Ctrl-C and Ctrl-D cancel.
 */
function promptHidden(prompt: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const terminal = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve, reject) => {
    let answer: string | undefined;
    terminal.once('line', (line) => {
      answer = line;
      terminal.close();
    });
    terminal.once('SIGINT', () => terminal.close());
    terminal.once('close', () => {
      process.stderr.write('\n');
      if (answer === undefined) reject(new UsageError('password entry canceled'));
      else resolve(answer);
    });
    terminal.setPrompt(`${prompt} `);
    terminal.prompt();
    muted = true;
  });
}

async function promptNewPassword(): Promise<string> {
  const password = await promptHidden('Password:');
  if ((await promptHidden('Repeat the password:')) !== password) throw new UsageError('the two passwords differ');
  return password;
}

/** The password from --password-stdin, the terminal, or (deprecated) --password, in that order of preference. */
export async function readNewPassword(options: PasswordOptions, warn: (line: string) => void): Promise<string> {
  if (options.password !== undefined && options['password-stdin'])
    throw new UsageError('give either --password or --password-stdin, not both');
  if (options['password-stdin']) return readPasswordFromStdin();
  if (options.password !== undefined) {
    warn(PASSWORD_ARGUMENT_WARNING);
    return options.password;
  }
  if (process.stdin.isTTY) return promptNewPassword();
  throw new UsageError('no password: pipe it in with --password-stdin, or run the command on a terminal to be asked for it');
}
