// A webhook receiver that verifies every delivery (Standard Webhooks) before it trusts a byte of it.
// Run: WEBHOOK_SECRET=whsec_... PORT=8080 node examples/webhook-receiver.mjs
// Prints each verified event as one JSON line; answers 204, or 400 to a delivery that fails the check.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the endpoint secret (whsec_...) the registration answered');
  process.exit(1);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT ?? 8080);
const seen = new Set(); // event ids applied already: deliveries come at least once

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // The raw body exactly as it arrived: the signature covers these bytes, not a re-serialized object.
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let event;
    try {
      // Checks the signature and that webhook-timestamp is within 5 minutes; answers the parsed event.
      event = webhook.verify(rawBody, request.headers);
    } catch (error) {
      console.error(`refused a delivery: ${error.message}`);
      response.writeHead(400).end();
      return;
    }
    if (!seen.has(event.id)) {
      seen.add(event.id);
      // Apply it here, idempotently; drop a status change whose data.sequence is not above the last applied.
      console.log(JSON.stringify(event));
    }
    response.writeHead(204).end();
  });
}).listen(port, '127.0.0.1', () => console.error(`Receiving webhooks on http://127.0.0.1:${port}/webhooks`));
