// Waiting for a server started as a child process to accept connections on its port.
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
