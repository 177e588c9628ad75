// The typed client (clients/typescript/) as a project that depends on it gets it: `npm pack`, whose
// prepare script builds dist/, unpacked into node_modules/@orderpay/client of a temporary project,
// its dependencies beside it, as `npm install <tarball>` leaves them.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../cli/orderpay-process.ts';

export const CLIENT_DIR = path.join(ROOT, 'clients/typescript');

export interface PackageManifest {
  name: string;
  private?: boolean;
  type?: string;
  sideEffects?: boolean;
  engines?: Record<string, string>;
  exports?: Record<string, Record<string, string>>;
  dependencies?: Record<string, string>;
}

export interface PackedClient {
  /** The temporary project: package.json ("type": "module") and node_modules/. */
  projectDir: string;
  /** node_modules/@orderpay/client of that project: the tarball's contents. */
  packageDir: string;
  /** The paths the tarball holds, as `npm pack` lists them. */
  files: string[];
  manifest: PackageManifest;
  remove(): void;
}

const run = promisify(execFile);

/** Packs the client (building it) and installs the tarball into a new temporary project. */
export async function packClient(): Promise<PackedClient> {
  const projectDir = mkdtempSync(path.join(tmpdir(), 'orderpay-client-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', projectDir], { cwd: CLIENT_DIR, maxBuffer: 16 << 20 });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const packageDir = path.join(projectDir, 'node_modules/@orderpay/client');
    mkdirSync(packageDir, { recursive: true });
    await run('tar', ['-xzf', path.join(projectDir, packed!.filename), '-C', packageDir, '--strip-components=1']);
    const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as PackageManifest;
    linkDependencies(projectDir, manifest);
    writeFileSync(path.join(projectDir, 'package.json'), JSON.stringify({ name: 'a-project', private: true, type: 'module' }));
    return {
      projectDir,
      packageDir,
      files: packed!.files.map((file) => file.path).sort(),
      manifest,
      remove: () => rmSync(projectDir, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(projectDir, { recursive: true, force: true });
    throw error;
  }
}

/** The package's dependencies, linked to the copies this repository installed (their own resolve from there). */
function linkDependencies(projectDir: string, manifest: PackageManifest): void {
  const resolveFromClient = createRequire(path.join(CLIENT_DIR, 'package.json')).resolve;
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const installed = path.dirname(realpathSync(resolveFromClient(`${name}/package.json`)));
    mkdirSync(path.dirname(path.join(projectDir, 'node_modules', name)), { recursive: true });
    symlinkSync(installed, path.join(projectDir, 'node_modules', name), 'dir');
  }
}
