import { connect } from 'node:net';

/** An answer read off the socket: status, lower-cased headers (every value), body text. */
export interface RawReply {
  status: number;
  headers: Record<string, string[]>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect problem bodies field by field
  json: any;
  /** Milliseconds from the first byte sent to the socket's close. */
  elapsedMs: number;
}

const parseReply = (raw: Buffer, elapsedMs: number): RawReply => {
  const text = raw.toString('utf8');
  const headerEnd = text.indexOf('\r\n\r\n');
  if (headerEnd < 0) throw new Error(`no HTTP answer before the connection closed: ${JSON.stringify(text)}`);
  const [statusLine = '', ...lines] = text.slice(0, headerEnd).split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] = [...(headers[name] ?? []), line.slice(colon + 1).trim()];
  }
  // Chunk sizes count bytes, so the body is decoded from the bytes, not from the text.
  let bodyBytes = raw.subarray(Buffer.byteLength(text.slice(0, headerEnd + 4)));
  if (headers['transfer-encoding']?.includes('chunked')) {
    const chunks: Buffer[] = [];
    let rest = bodyBytes;
    for (;;) {
      const sizeEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.subarray(0, sizeEnd).toString('latin1'), 16);
      if (!size) break;
      chunks.push(rest.subarray(sizeEnd + 2, sizeEnd + 2 + size));
      rest = rest.subarray(sizeEnd + 2 + size + 2);
    }
    bodyBytes = Buffer.concat(chunks);
  }
  const body = bodyBytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, json, elapsedMs };
};

/**
 * Writes the given pieces to a fresh connection exactly as they are (a header line twice, a
 * malformed request line, bytes no client library would send), waiting `gapMs` between pieces,
 * and reads the answer until the server closes the connection.
 */
export const rawRequest = (
  baseUrl: string,
  pieces: (string | Buffer)[],
  options: { gapMs?: number } = {},
): Promise<RawReply> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const started = Date.now();
    let closed = false;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      // A reset after the answer is the server closing on a client it gave up on.
      if (chunks.length === 0) reject(error);
    });
    socket.on('close', () => {
      closed = true;
      try {
        resolve(parseReply(Buffer.concat(chunks), Date.now() - started));
      } catch (error) {
        reject(error);
      }
    });
    socket.on('connect', async () => {
      for (const [index, piece] of pieces.entries()) {
        if (closed) return;
        if (index > 0 && options.gapMs) await new Promise((wait) => setTimeout(wait, options.gapMs));
        if (!closed) socket.write(piece);
      }
    });
  });

/** A request as text: request line, `Connection: close`, the header lines as given, then the body. */
export const requestText = (
  baseUrl: string,
  method: string,
  path: string,
  headerLines: [string, string][],
  body = '',
): string => {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${new URL(baseUrl).host}`, 'Connection: close'];
  for (const [name, value] of headerLines) lines.push(`${name}: ${value}`);
  if (body !== '' && !headerLines.some(([name]) => name.toLowerCase() === 'content-length')) {
    lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
};
