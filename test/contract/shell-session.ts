// One bash, kept open like a reader's terminal: blocks run in it one after another (set -euo
// pipefail), so a variable one block sets is there for the next, as the docs mean it to be.
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
  private blocks = 0;

  private constructor(dir: string, cwd: string, env: Record<string, string>) {
    this.dir = dir;
    // A process group of its own, so that a block timing out takes its commands down with the shell.
    this.child = spawn('bash', ['--noprofile', '--norc', '-euo', 'pipefail'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.child.once('exit', (code, signal) => (this.exited = code ?? (signal ? 128 : 1)));
  }

  static async open(cwd: string, env: Record<string, string>): Promise<ShellSession> {
    return new ShellSession(await mkdtemp(path.join(tmpdir(), 'orderpay-docs-')), cwd, env);
  }

  /**
   * Runs code in the session and waits for it. The block is sourced from a file with stdin from
   * /dev/null, so a command in it that reads stdin cannot swallow the blocks after it; under set -e
   * a failing command ends the shell, and with it the session.
   */
  async run(code: string, timeoutMs = 90_000): Promise<BlockRun> {
    if (this.exited !== undefined) return { status: this.exited, stdout: '', stderr: 'the session ended with an earlier block' };
    const file = path.join(this.dir, `block-${++this.blocks}.sh`);
    await writeFile(file, `${code}\n`);
    const [outFrom, errFrom] = [this.stdout.length, this.stderr.length];
    this.child.stdin!.write(`source '${file}' </dev/null\nprintf '\\n${DONE}\\n'; printf '\\n${DONE}\\n' >&2\n`);
    const deadline = Date.now() + timeoutMs;
    const finished = () => this.stdout.includes(DONE, outFrom) && this.stderr.includes(DONE, errFrom);
    while (!finished() && this.exited === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const stdout = this.stdout.slice(outFrom).split(`\n${DONE}\n`)[0]!;
    const stderr = this.stderr.slice(errFrom).split(`\n${DONE}\n`)[0]!;
    if (finished()) return { status: 0, stdout, stderr };
    if (this.exited === undefined) {
      this.kill();
      return { status: -1, stdout, stderr: `${stderr}\n(timed out after ${timeoutMs} ms)` };
    }
    return { status: this.exited, stdout, stderr };
  }

  /** The value of a variable the blocks set ('' when unset). */
  async read(name: string): Promise<string> {
    const { status, stdout } = await this.run(`printf '%s' "\${${name}:-}"`);
    if (status !== 0) throw new Error(`the session ended before ${name} could be read`);
    return stdout;
  }

  private kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }

  async close(): Promise<void> {
    if (this.exited === undefined) {
      const exit = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.stdin!.end('exit 0\n');
      await exit;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
