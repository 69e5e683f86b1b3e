import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import serverlessChromium from '@sparticuz/chromium';

const CACHE = fileURLToPath(new URL('../../node_modules/.cache', import.meta.url));
const PACKAGE_FOLDER = join(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))), '..');
const { version } = JSON.parse(readFileSync(join(PACKAGE_FOLDER, 'package.json'), 'utf8')) as {
  version: string;
};
/** One folder per version: `npm ci` removes it with the package, so it is never another version's. */
const HOME = join(CACHE, `chromium-${version}`);

/**
 * The Chromium that @sparticuz/chromium ships inside its npm package, decompressed once into
 * node_modules/.cache and kept for later runs. The package decompresses into the temporary folder
 * and takes any `chromium` file already there as finished, so a second file starting meanwhile
 * would launch half a binary: it decompresses into a folder of its own here, renamed into place
 * whole; when two race, the first rename wins and the other's copy is removed.
 */
export const chromiumExecutable = async (): Promise<string> => {
  const executable = join(HOME, 'chromium');
  if (existsSync(executable)) return executable;
  await mkdir(CACHE, { recursive: true });
  const staging = await mkdtemp(join(CACHE, `chromium-${version}-partial-`));
  try {
    // The package's only say over where it writes is the temporary folder, read before its first
    // await: set for that call alone.
    const temporary = process.env.TMPDIR;
    process.env.TMPDIR = staging;
    const decompressed = serverlessChromium.executablePath();
    if (temporary === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = temporary;
    await decompressed;
    await rename(staging, HOME);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(executable)) throw error;
  }
  return executable;
};

/**
 * The package's flags for a serverless run, less those a local test of a page must not take:
 * one process for everything (a Lambda's need), the same-origin and mixed-content rules turned
 * off (the page must meet them as a reader's browser does), and its feature lists (Chromium keeps
 * the last of a repeated switch, so they would replace Playwright's). Playwright sets headless.
 */
const NOT_FOR_A_LOCAL_TEST = new Set([
  '--single-process',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--disable-features',
  '--enable-features',
  '--headless',
]);

// No WebGL: the pages under test draw none, and the GPU is off (--disable-gpu).
serverlessChromium.setGraphicsMode = false;

export const CHROMIUM_ARGS: readonly string[] = [
  ...serverlessChromium.args.filter((arg) => !NOT_FOR_A_LOCAL_TEST.has(arg.split('=')[0] ?? arg)),
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
