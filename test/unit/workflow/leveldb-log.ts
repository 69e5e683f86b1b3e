import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * LevelDB's write-ahead log format: 32 KiB blocks of physical records, each a 7-byte header
 * (CRC32C, 2-byte little-endian length, type) and its data; a block tail shorter than a header is
 * zero padding. A power loss keeps some prefix of the file: these are the places it can end.
 */
const BLOCK = 32 * 1024;
const HEADER = 7;

/** The newest NNNNNN.log of a LevelDB folder: where the last writes are. */
export const newestLog = (folder: string): string => {
  const logs = readdirSync(folder)
    .filter((name) => /^\d+\.log$/.test(name))
    .sort();
  const newest = logs.at(-1);
  if (newest === undefined) throw new Error(`no LevelDB log in ${folder}`);
  return join(folder, newest);
};

/** Offsets where a physical record starts, then the end of the file. */
export const recordBoundaries = (log: Buffer): number[] => {
  const boundaries: number[] = [];
  let offset = 0;
  while (offset < log.length) {
    const leftInBlock = BLOCK - (offset % BLOCK);
    if (leftInBlock < HEADER) {
      offset += leftInBlock;
      continue;
    }
    if (offset + HEADER > log.length) break;
    const length = log.readUInt16LE(offset + 4);
    const type = log[offset + 6];
    if (type === 0 && length === 0) break;
    boundaries.push(offset);
    offset += HEADER + length;
  }
  boundaries.push(log.length);
  return boundaries;
};
