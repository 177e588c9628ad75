// One bash, kept open like a reader's terminal: blocks run in it one after another (set -euo
// pipefail), so a variable one block sets is there for the next, as the docs mean it to be. A
// terminal may also be given a command that runs until it is stopped (a webhook receiver), whose
// output is read as it comes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const DONE = '__orderpay_block_done__';

export interface BlockRun {
  /** 0 when the block ran through; the shell's exit status (or -1, timed out) when it stopped. */
  status: number;
  stdout: string;
  stderr: string;
}

export class ShellSession {
  private readonly dir: string;
  private readonly child: ChildProcess;
  private stdout = '';
  private stderr = '';
  private exited: number | undefined;
  private readonly exit: Promise<void>;
  private blocks = 0;
  /** Called on every change: output arrived, or the shell ended. */
  private readonly listeners = new Set<() => void>();

  private constructor(dir: string, cwd: string, env: Record<string, string>) {
    this.dir = dir;
    // A process group of its own, so that a block timing out takes its commands down with the shell.
    this.child = spawn('bash', ['--noprofile', '--norc', '-euo', 'pipefail'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.changed(() => (this.stdout += chunk)));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.changed(() => (this.stderr += chunk)));
    this.exit = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.changed(() => (this.exited = code ?? (signal ? 128 : 1)));
        resolve();
      }),
    );
  }

  static async open(cwd: string, env: Record<string, string>): Promise<ShellSession> {
    return new ShellSession(await mkdtemp(path.join(tmpdir(), 'orderpay-docs-')), cwd, env);
  }

  private changed(update: () => void): void {
    update();
    for (const listener of this.listeners) listener();
  }

  /**
   * Waits until `done` holds, rechecked whenever output arrives or the shell ends; false when the
   * shell ended or the time ran out first.
   */
  private async waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return true;
    if (this.exited !== undefined) return false;
    return new Promise((resolve) => {
      const finish = (result: boolean) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(result);
      };
      const check = () => {
        if (done()) finish(true);
        else if (this.exited !== undefined) finish(false);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.listeners.add(check);
    });
  }

  /**
   * Sources code in the session from a file with stdin from /dev/null, so that a command in it that
   * reads stdin cannot swallow the blocks after it; under set -e a failing command ends the shell.
   */
  private async source(code: string): Promise<void> {
    const file = path.join(this.dir, `block-${++this.blocks}.sh`);
    await writeFile(file, `${code}\n`);
    this.child.stdin!.write(`source '${file}' </dev/null\nprintf '\\n${DONE}\\n'; printf '\\n${DONE}\\n' >&2\n`);
  }

  /** Runs code in the session and waits for it. */
  async run(code: string, timeoutMs = 90_000): Promise<BlockRun> {
    if (this.exited !== undefined) return { status: this.exited, stdout: '', stderr: 'the session ended with an earlier block' };
    const [outFrom, errFrom] = [this.stdout.length, this.stderr.length];
    await this.source(code);
    const finished = () => this.stdout.includes(DONE, outFrom) && this.stderr.includes(DONE, errFrom);
    const ranThrough = await this.waitUntil(finished, timeoutMs);
    const stdout = this.stdout.slice(outFrom).split(`\n${DONE}\n`)[0]!;
    const stderr = this.stderr.slice(errFrom).split(`\n${DONE}\n`)[0]!;
    if (ranThrough) return { status: 0, stdout, stderr };
    if (this.exited === undefined) {
      this.kill();
      return { status: -1, stdout, stderr: `${stderr}\n(timed out after ${timeoutMs} ms)` };
    }
    return { status: this.exited, stdout, stderr };
  }

  /** Starts code that runs until it is stopped (a server), as a reader starts one in a terminal of its own. */
  async start(code: string): Promise<void> {
    if (this.exited !== undefined) throw new Error('the session ended before the command could start');
    await this.source(code);
  }

  /** All the session has printed on stdout and stderr so far. */
  get output(): { stdout: string; stderr: string } {
    return { stdout: this.stdout, stderr: this.stderr };
  }

  /** Waits until `done` holds of what the session has printed; false when it ended or the time ran out first. */
  waitForOutput(done: (stdout: string) => boolean, timeoutMs: number): Promise<boolean> {
    return this.waitUntil(() => done(this.stdout), timeoutMs);
  }

  /** The value of a variable the blocks set ('' when unset). */
  async read(name: string): Promise<string> {
    const { status, stdout } = await this.run(`printf '%s' "\${${name}:-}"`);
    if (status !== 0) throw new Error(`the session ended before ${name} could be read`);
    return stdout;
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.child.pid!, signal);
    } catch {
      // The group is gone already.
    }
  }

  private kill(): void {
    this.signal('SIGKILL');
  }

  /** Waits a moment for the shell to end, then kills it and whatever it runs. */
  private async ended(): Promise<void> {
    if (!(await this.waitUntil(() => this.exited !== undefined, 5_000))) this.kill();
    await this.exit;
  }

  /** Stops what the terminal runs as a reader does, with Ctrl-C (SIGINT to its process group), and closes it. */
  async stop(): Promise<void> {
    if (this.exited === undefined) {
      this.signal('SIGINT');
      await this.ended();
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Ends the shell once its blocks have run. */
  async close(): Promise<void> {
    if (this.exited === undefined) {
      this.child.stdin!.end('exit 0\n');
      await this.ended();
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
