import { spawn } from 'node:child_process';
import { startDynalite } from '../local/dynalite-process.ts';
import { createDynamoDbClient, ensureTable } from '../local/table.ts';
const dynalite = await startDynalite({ host: '127.0.0.1', port: 0, path: '/tmp/recon-ddb' });
await ensureTable(createDynamoDbClient(dynalite.endpoint), 'bench-bundles');
const env = { ...process.env, AWS_REGION: 'local', TABLE_NAME: 'bench-bundles', DYNAMODB_ENDPOINT: dynalite.endpoint, STATE_MACHINE_ARN: 'arn:aws:states:local:000000000000:stateMachine:bench', EVENT_BUS_NAME: 'bench', POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'SILENT' };
const probe = `const {handler}=await import('/work/main/node_modules/.cache/bench-bundles/reconciler/index.mjs'); console.log('T', Number(process.hrtime.bigint()/1000n)); await handler({}, {awsRequestId:'x', getRemainingTimeInMillis:()=>1e4});`;
await new Promise((r) => spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/recon-prof', '--input-type=module', '-e', probe], { env, stdio: 'inherit' }).on('exit', r));
dynalite.child.kill();
