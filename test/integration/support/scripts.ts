import { spawn } from 'node:child_process';
import { collectOutput, scriptArguments } from '#local/service-process';
import type { LocalService } from './local-service.ts';

/** An operator's command (`npm run clients`, `npm run keys`) against the running local service and its data folder. */
export const runScript = async (
  service: Pick<LocalService, 'dataDir'>,
  script: 'clients' | 'keys',
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  const child = spawn(process.execPath, [...scriptArguments(`scripts/${script}.ts`), ...args], {
    env: { ...process.env, DATA_DIR: service.dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const output = collectOutput(child);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr: output().replace(stdout, '') };
};
