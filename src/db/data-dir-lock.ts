// One process at a time on an embedded data directory: PGlite has no locking of its own, and two
// processes writing one directory would corrupt it. The lock file holds the owner's pid; a lock
// left by a process that no longer runs is taken over.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';

export class DataDirInUseError extends Error {}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock; returns its release function. */
export function lockDataDir(dataDir: string): () => void {
  const lockPath = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      const release = () => {
        process.off('exit', release);
        try {
          if (readFileSync(lockPath, 'utf8') === String(process.pid)) unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
      process.on('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) {
        throw new DataDirInUseError(
          `the embedded database ${dataDir} is in use by another orderpay process (pid ${owner}); stop it first, or use DATABASE_URL for several processes`,
        );
      }
      unlinkSync(lockPath);
    }
  }
  throw new DataDirInUseError(`could not lock ${dataDir}`);
}
