import { readdir, readFile } from 'node:fs/promises';

/**
 * The processes of a local service and their resident memory, read from /proc (Linux): the
 * service process (HTTP server, handlers, and the workflow runner when it runs there) and its
 * children (dynalite, and the workflow runner when it runs in a process of its own).
 */

export interface ServiceProcess {
  role: string;
  pid: number;
}

const commandLine = async (pid: number): Promise<string> =>
  (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ');

const parentOf = async (pid: number): Promise<number | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name may hold spaces or parentheses: fields follow its last ')'.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields?.[1] === undefined ? undefined : Number(fields[1]);
};

/** The service process and its children, named by what they run. */
export const serviceProcesses = async (servicePid: number): Promise<ServiceProcess[]> => {
  const found: ServiceProcess[] = [{ role: 'server', pid: servicePid }];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || (await parentOf(pid)) !== servicePid) continue;
    const command = await commandLine(pid);
    if (command.includes('dynalite-server')) found.push({ role: 'table (dynalite)', pid });
    else if (command.includes('workflow')) found.push({ role: 'workflow', pid });
  }
  return found;
};

/** Resident set size in MB, or undefined once the process is gone. */
export const residentMegabytes = async (pid: number): Promise<number | undefined> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const kilobytes = /VmRSS:\s+(\d+) kB/.exec(status ?? '')?.[1];
  return kilobytes === undefined ? undefined : Number(kilobytes) / 1024;
};

export interface MemorySample {
  at: number;
  role: string;
  rssMb: number;
}

/** Samples every process's RSS every `intervalMs` until stopped. */
export const sampleMemory = (processes: () => ServiceProcess[], intervalMs: number) => {
  const samples: MemorySample[] = [];
  const take = async () => {
    const at = Date.now();
    for (const { role, pid } of processes()) {
      const rssMb = await residentMegabytes(pid);
      if (rssMb !== undefined) samples.push({ at, role, rssMb });
    }
  };
  void take();
  const timer = setInterval(() => void take(), intervalMs);
  return {
    samples,
    stop: async () => {
      clearInterval(timer);
      await take();
    },
  };
};
