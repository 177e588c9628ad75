// Servers the tests start as child processes: waiting for one to accept connections on its port,
// and stopping one.
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves once 127.0.0.1:port accepts a connection; rejects past timeoutMs, or once exited() says the server is gone. */
export async function waitForPort(port: number, timeoutMs: number, name: string, exited: () => boolean = () => false): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (exited()) throw new Error(`${name} exited before it listened on ${port}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (performance.now() > deadline) throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** How long a server may take to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5000;

/** SIGTERM, then the exit, waited for; a server still running after STOP_GRACE_MS is killed. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const escalation = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(escalation);
}
