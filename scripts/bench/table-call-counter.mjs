// Preloaded (node --import) into the local service's processes by `scripts/bench/settle.ts --count-calls`
// and `npm run bench`; it acts in dynalite's process only (dynalite-server.mjs). It counts every call
// dynalite serves, by operation and by whose item it is (the service's, or sandbox clearing's: the
// sandbox rail keeps clearing's record in the same table, as a bank's clearing system keeps its own),
// and the capacity units each one consumed, as DynamoDB on-demand bills them:
// - table units: dynalite's own ConsumedCapacity, asked for on every call (ReturnConsumedCapacity
//   TOTAL) and taken out of the answer again when the caller had not asked;
// - index units, which dynalite does not report: for each global secondary index, a write that
//   changes the item's index entry costs one put (its size in KB, rounded up), one that moves its
//   key also one delete, and one that leaves the entry as it was nothing;
// - a conditional write refused is counted as one write unit (DynamoDB bills the size of the item it
//   looked at, which is about 1 KB here).
// Each call and each unit is also counted by kind of item (`byKind`: `<kind> <Operation>` calls and
// `<kind> <Operation> units`, `<kind> index <indexName>` for index units), the kind read from the key
// (its prefix, and for events which of the two items), so the bench can say what each write is.
// Every process writes its figures so far to $TABLE_CALL_COUNTS_DIR/<pid>.json on SIGUSR2.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const directory = process.env.TABLE_CALL_COUNTS_DIR;
const figures = { calls: {}, readUnits: {}, writeUnits: {}, conditionFailures: 0, byKind: {} };

const add = (table, name, amount) => {
  table[name] = (table[name] ?? 0) + amount;
};

const WRITES = new Set(['putItem', 'updateItem', 'deleteItem', 'batchWriteItem']);
const OPERATIONS = {
  getItem: 'GetItem',
  putItem: 'PutItem',
  updateItem: 'UpdateItem',
  deleteItem: 'DeleteItem',
  query: 'Query',
  scan: 'Scan',
  batchGetItem: 'BatchGetItem',
  batchWriteItem: 'BatchWriteItem',
};

const keyOf = (data) =>
  data.Key ??
  data.Item ??
  Object.values(data.RequestItems ?? {})[0]?.Keys?.[0] ??
  Object.values(data.RequestItems ?? {})[0]?.[0]?.PutRequest?.Item ??
  Object.values(data.RequestItems ?? {})[0]?.[0]?.DeleteRequest?.Key;

/** `service`, `sandbox clearing` or `local runtime`, from the key of the item a call names (its first one for batches). */
const ownerOf = (data) => {
  const key = keyOf(data);
  const pk = String(key?.pk?.S ?? '');
  if (pk.startsWith('SANDBOX_CLEARING#')) return 'sandbox clearing';
  // The local runtime's own bookkeeping (where it has read the events file to): no item on AWS.
  return pk.startsWith('LOCAL_') ? 'local runtime' : 'service';
};

/** The kind of an item, from its key: the partition key's prefix (events: which of the two items) and the sort key's. */
const kindOf = (key) => {
  const pk = String(key?.pk?.S ?? '').split('#');
  const sk = String(key?.sk?.S ?? '').split('#')[0];
  const prefix = pk[0] === 'EVENT' ? `EVENT#${pk[2] ?? ''}` : (pk[0] ?? '');
  return /^[A-Z_]+$/.test(sk) ? `${prefix}/${sk}` : prefix;
};

const hookDynalite = () => {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const db = fromDynalite('./db');

  const projection = (item, table, index) => {
    const keys = index.KeySchema.map((key) => key.AttributeName);
    if (!item || !keys.every((name) => item[name] != null)) return undefined;
    if (index.Projection.ProjectionType === 'ALL') return item;
    const names = [
      ...keys,
      ...table.KeySchema.map((key) => key.AttributeName),
      ...(index.Projection.NonKeyAttributes ?? []),
    ];
    return Object.fromEntries(
      names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]),
    );
  };
  const kilobytes = (item) => Math.max(1, Math.ceil(db.itemSize(item) / 1024));
  const indexKey = (entry, index) => JSON.stringify(index.KeySchema.map((key) => entry[key.AttributeName]));

  const updateIndexes = db.updateIndexes;
  db.updateIndexes = (store, table, existingItem, item, cb) => {
    let units = 0;
    for (const index of table.GlobalSecondaryIndexes ?? []) {
      const before = projection(existingItem, table, index);
      const after = projection(item, table, index);
      if (after && before && JSON.stringify(after) === JSON.stringify(before)) continue;
      let indexUnits = after ? kilobytes(after) : 0;
      if (before && (!after || indexKey(before, index) !== indexKey(after, index)))
        indexUnits += kilobytes(before);
      units += indexUnits;
      if (indexUnits > 0)
        add(figures.byKind, `${kindOf(item ?? existingItem)} index ${index.IndexName}`, indexUnits);
    }
    // Only the service's items carry index keys.
    add(figures.writeUnits, 'service', units);
    return updateIndexes(store, table, existingItem, item, cb);
  };

  // Every action loaded before any is replaced: the batch actions keep the item actions they call
  // uncounted, so a batch counts once.
  const loaded = Object.entries(OPERATIONS).map(([action, operation]) => {
    const path = fromDynalite.resolve(`./actions/${action}`);
    return { action, operation, path, serve: fromDynalite(path) };
  });
  for (const { action, operation, path, serve } of loaded) {
    fromDynalite.cache[path].exports = function counted(store, data, cb) {
      const owner = ownerOf(data);
      const kind = `${kindOf(keyOf(data))} ${operation}`;
      add(figures.calls, `${owner} ${operation}`, 1);
      add(figures.byKind, kind, 1);
      const asked = data.ReturnConsumedCapacity;
      const isWrite = WRITES.has(action);
      serve(store, { ...data, ReturnConsumedCapacity: 'TOTAL' }, (error, answer) => {
        if (error?.body?.__type?.endsWith('ConditionalCheckFailedException')) {
          figures.conditionFailures += 1;
          add(figures.writeUnits, owner, 1);
          add(figures.byKind, `${kind} refused`, 1);
        }
        if (answer) {
          const consumed = [answer.ConsumedCapacity ?? []].flat();
          const units = consumed.reduce((sum, entry) => sum + (entry?.CapacityUnits ?? 0), 0);
          add(isWrite ? figures.writeUnits : figures.readUnits, owner, units);
          add(figures.byKind, `${kind} units`, units);
          if (asked !== 'TOTAL' && asked !== 'INDEXES') delete answer.ConsumedCapacity;
        }
        cb(error, answer);
      });
    };
  }
};

if (directory) {
  const isTable = process.argv[1]?.endsWith('dynalite-server.mjs');
  if (isTable) hookDynalite();
  // Every process of the service is asked; the signal would end one without a handler.
  process.on('SIGUSR2', () => {
    if (isTable) writeFileSync(join(directory, `${process.pid}.json`), JSON.stringify(figures));
  });
}
