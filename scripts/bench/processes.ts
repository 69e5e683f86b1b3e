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

/** The fields of /proc/<pid>/stat from field 3 on (index 0 is field 3), or undefined once it is gone. */
const statFields = async (pid: number): Promise<string[] | undefined> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name may hold spaces or parentheses: fields follow its last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
};

const parentOf = async (pid: number): Promise<number | undefined> => {
  const ppid = (await statFields(pid))?.[1];
  return ppid === undefined ? undefined : Number(ppid);
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

/**
 * CPU time (user and system) the process has used so far, in ms, or undefined once it is gone.
 * /proc counts it in clock ticks of 1/100 s (USER_HZ, fixed at 100 for user space on Linux).
 */
export const cpuMilliseconds = async (pid: number): Promise<number | undefined> => {
  // utime and stime are fields 14 and 15.
  const fields = await statFields(pid);
  if (fields?.[12] === undefined) return undefined;
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** The whole machine's CPU time so far, in ms summed over its cores: busy and in all. */
const machineMilliseconds = async (): Promise<{ busyMs: number; totalMs: number }> => {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const total = ticks.reduce((sum, tick) => sum + tick, 0);
  return { busyMs: (total - idle) * 10, totalMs: total * 10 };
};

/** A field of /proc/<pid>/status given in kB, in MB. */
const statusMegabytes = (status: string, field: string): number | undefined => {
  const kilobytes = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return kilobytes === undefined ? undefined : Number(kilobytes) / 1024;
};

/**
 * Resident memory in MB: all of it (RSS), and the part that is the process's own allocations
 * (anonymous: heaps, buffers, stacks). The rest is files mapped into it: its program, and for
 * the table stand-in LevelDB's table files, which it maps to read them, so they count in its RSS
 * as they grow on disk, though they are the page cache's to drop.
 */
const memoryMegabytes = async (pid: number): Promise<{ rssMb: number; anonymousMb: number } | undefined> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  if (status === undefined) return undefined;
  const rssMb = statusMegabytes(status, 'VmRSS');
  const anonymousMb = statusMegabytes(status, 'RssAnon');
  return rssMb === undefined || anonymousMb === undefined ? undefined : { rssMb, anonymousMb };
};

/** Resident set size in MB, or undefined once the process is gone. */
export const residentMegabytes = async (pid: number): Promise<number | undefined> =>
  (await memoryMegabytes(pid))?.rssMb;

export interface ProcessSample {
  at: number;
  role: string;
  rssMb: number;
  /** The anonymous part of the RSS (see memoryMegabytes). */
  anonymousMb: number;
  /** CPU time used since the process began, in ms. */
  cpuMs: number;
}

export interface MachineSample {
  at: number;
  busyMs: number;
  totalMs: number;
}

/** Samples every process's RSS and CPU time, and the machine's CPU, every `intervalMs` until stopped. */
export const sampleProcesses = (processes: () => ServiceProcess[], intervalMs: number) => {
  const samples: ProcessSample[] = [];
  const machine: MachineSample[] = [];
  const take = async () => {
    const at = Date.now();
    machine.push({ at, ...(await machineMilliseconds()) });
    for (const { role, pid } of processes()) {
      const [memory, cpuMs] = await Promise.all([memoryMegabytes(pid), cpuMilliseconds(pid)]);
      if (memory !== undefined && cpuMs !== undefined) samples.push({ at, role, ...memory, cpuMs });
    }
  };
  void take();
  const timer = setInterval(() => void take(), intervalMs);
  return {
    samples,
    machine,
    stop: async () => {
      clearInterval(timer);
      await take();
    },
  };
};
