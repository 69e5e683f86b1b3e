import { measureCase } from './bill.ts';
import { benchCount, fixed } from './support.ts';

/**
 * `npx tsx scripts/bench/write-kinds.ts`: what each table call of a settled transfer is, by kind of
 * item, with the write units it costs (the item's, and each index's), for the bill's happy path and
 * its case with one webhook endpoint. Prints only; the bill itself is `npm run bench -- bill`.
 */
const transfers = benchCount('BENCH_BILL_TRANSFERS', process.env.BENCH_BILL_TRANSFERS, 20);
const cases = [
  { name: 'Happy path (no webhook endpoint)', transfers, logLevel: 'INFO' },
  { name: 'Happy path with one webhook endpoint', transfers, logLevel: 'INFO', webhookEndpoint: true },
];

for (const options of cases) {
  const figures = await measureCase(options);
  const byKind = figures.table.byKind ?? {};
  const rows = new Map<string, { calls: number; units: number; refused: number; index: string[] }>();
  const row = (kind: string) => {
    const found = rows.get(kind) ?? { calls: 0, units: 0, refused: 0, index: [] };
    rows.set(kind, found);
    return found;
  };
  for (const [name, value] of Object.entries(byKind)) {
    const index = / index (\S+)$/.exec(name);
    if (index) {
      const kind = name.slice(0, index.index);
      row(`${kind} (index writes)`).index.push(`${index[1]} ${fixed(value, 2)}`);
      row(`${kind} (index writes)`).units += value;
    } else if (name.endsWith(' units')) row(name.slice(0, -' units'.length)).units += value;
    else if (name.endsWith(' refused')) row(name.slice(0, -' refused'.length)).refused += value;
    else row(name).calls += value;
  }
  const writes = [...rows.entries()].filter(([name]) => !/ (GetItem|Query|Scan|BatchGetItem)$/.test(name));
  const unitsOf = (rows: typeof writes) => rows.reduce((sum, [, r]) => sum + r.units + r.refused, 0);
  // The bill counts the service's items only: not sandbox clearing's, nor the local bus offset.
  const service = writes.filter(([name]) => !/^(SANDBOX_CLEARING|LOCAL_)/.test(name));
  console.log(
    `\n## ${options.name}: ${fixed(unitsOf(service), 2)} write units of the service per settled transfer (${fixed(unitsOf(writes), 2)} with sandbox clearing and the local bus)`,
  );
  for (const [name, r] of [...rows.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const reads = / (GetItem|Query|Scan|BatchGetItem)$/.test(name);
    console.log(
      `${name}: ${r.calls > 0 ? `${fixed(r.calls, 2)} calls, ` : ''}${fixed(r.units, 2)} ${reads ? 'read' : 'write'} units` +
        `${r.refused > 0 ? `, ${fixed(r.refused, 2)} refused` : ''}${r.index.length > 0 ? ` (${r.index.join(', ')})` : ''}`,
    );
  }
}
