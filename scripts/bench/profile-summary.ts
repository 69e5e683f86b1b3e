import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type RawSourceMap, SourceMapConsumer } from 'source-map-js';

/** The parts of a V8 CPU profile (`node --cpu-prof`) read here. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  samples: number[];
  /** Microseconds before each sample. */
  timeDeltas: number[];
}

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/**
 * `@smithy/core` for a file under node_modules, the project-relative path for the service's own
 * (a source map names its sources relative to the bundle's folder).
 */
const moduleOf = (source: string | null, bundleDir: string): string => {
  if (source === null) return '(bundle, unmapped)';
  const path = resolve(bundleDir, source);
  const dependency = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  return dependency?.[1] ?? path.slice(PROJECT_ROOT.length + 1);
};

/**
 * Where a cold start's CPU time goes: the self time of every sampled function in the profiles
 * of `profileDir`, each from one process that loaded `bundleFile`, summed by the module it comes
 * from (a package or a file of the service, found through the bundle's source map; a Node
 * built-in by its name; V8's own work, such as garbage collection, in parentheses) and averaged
 * over the processes. The `top` largest, in milliseconds.
 */
export const profileSummary = (
  profileDir: string,
  bundleFile: string,
  top = 12,
): { processes: number; rows: [module: string, ms: number][] } => {
  const map = new SourceMapConsumer(JSON.parse(readFileSync(`${bundleFile}.map`, 'utf8')) as RawSourceMap);
  const bundleName = basename(bundleFile);
  const files = readdirSync(profileDir).filter((file) => file.endsWith('.cpuprofile'));
  const byModule = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
    const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    profile.samples.forEach((id, index) => {
      const frame = frames.get(id);
      if (frame === undefined) return;
      const module = frame.url.endsWith(bundleName)
        ? moduleOf(
            map.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber }).source,
            dirname(bundleFile),
          )
        : frame.url || `(${frame.functionName})`;
      const ms = (profile.timeDeltas[index + 1] ?? 0) / 1000 / files.length;
      byModule.set(module, (byModule.get(module) ?? 0) + ms);
    });
  }
  const rows = [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { processes: files.length, rows };
};
