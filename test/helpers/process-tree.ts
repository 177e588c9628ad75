// A process and its descendants as Linux's /proc shows them: to find the server behind a launcher
// (npm, sh, bin/orderpay.js) and to check that none of them outlives a signal.
import { readdirSync, readFileSync } from 'node:fs';

interface ProcessStat {
  pid: number;
  ppid: number;
  /** R, S, D, Z (exited, not yet reaped), … */
  state: string;
}

/** /proc/<pid>/stat; undefined once the process is gone. The command name may hold spaces and ')'. */
function readStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(ppid), state: state! };
}

function allProcesses(): ProcessStat[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((stat) => stat !== undefined);
}

/** The process and every descendant still running, parents first. */
export function processTree(root: number): number[] {
  const processes = allProcesses();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const { pid, ppid } of processes) if (ppid === tree[i]) tree.push(pid);
  }
  return tree.filter(isRunning);
}

/** A zombie has exited: only its parent's wait is missing. */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
