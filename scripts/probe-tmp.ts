import { pain001Reader } from '#adapters/iso20022/xml-schemas';
import { submitBatch } from '#domain/iso20022/submit-batch';
import { deepPain001, manyElementsPain001, minimalPain001 } from './bench/hostile-pain001.ts';

const cpu = () => process.cpuUsage().user / 1000;
const within = manyElementsPain001('M', 199_000 * 4);
const tx2000 = minimalPain001('M', 2000);
for (const [name, xml] of [
  ['min3', minimalPain001('M', 3)],
  ['within-elements', within],
  ['deep-within', deepPain001('M', 2000, 30)],
  ['tx2000', tx2000],
] as const) {
  const t = cpu();
  try {
    const r = await submitBatch(
      {
        store: { create: async () => true } as any,
        batches: {
          create: async () => true,
          claimMessageId: async () => ({ claimed: true }),
          markStored: async () => true,
          discard: async () => {},
        } as any,
        reader: pain001Reader,
        clock: { now: () => new Date() },
      },
      { tenant: 't', clientId: 'c', servicer: {}, body: { kind: 'xml', text: xml } },
    );
    console.log(name, xml.length, 'ok', r.paymentIds.length, cpu() - t);
  } catch (e) {
    console.log(
      name,
      xml.length,
      (e as Error).message,
      JSON.stringify((e as any).invalidParams?.slice(0, 2)),
      cpu() - t,
    );
  }
}
console.log('rss', process.memoryUsage().rss / 1e6);
