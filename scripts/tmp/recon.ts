import { spawn } from 'node:child_process';
import { startDynalite } from '../local/dynalite-process.ts';
import { createDynamoDbClient, ensureTable } from '../local/table.ts';
const dynalite = await startDynalite({ host: '127.0.0.1', port: 0, path: '/tmp/recon-ddb' });
await ensureTable(createDynamoDbClient(dynalite.endpoint), 'bench-bundles');
const env = { ...process.env, AWS_REGION: 'local', TABLE_NAME: 'bench-bundles', DYNAMODB_ENDPOINT: dynalite.endpoint, STATE_MACHINE_ARN: 'arn:aws:states:local:000000000000:stateMachine:bench', EVENT_BUS_NAME: 'bench', POWERTOOLS_METRICS_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'SILENT' };
const probe = `${process.env.PRE ?? ''}; const s=performance.now(); const {handler}=await import('/work/main/node_modules/.cache/bench-bundles/reconciler/index.mjs'); const l=performance.now(); await handler({}, {awsRequestId:'x', getRemainingTimeInMillis:()=>1e4}); const e=performance.now(); const w=performance.now(); await handler({}, {awsRequestId:'y', getRemainingTimeInMillis:()=>1e4}); console.log('load', (l-s).toFixed(0), 'invoke', (e-l).toFixed(0), 'warm', (performance.now()-w).toFixed(0))`;
for (let i = 0; i < 5; i++) {
  const args = process.argv[2] === 'prof' && i === 0 ? ['--cpu-prof', '--cpu-prof-dir=/tmp/recon-prof'] : [];
  await new Promise((r) => spawn(process.execPath, [...args, '--input-type=module', '-e', probe], { env, stdio: 'inherit' }).on('exit', r));
}
dynalite.child.kill();
