import { cursorKeyFromEnvironment } from '#adapters/commons/cursor-key';

/**
 * The key that signs and checks the position cursors of the webhook endpoint and events lists,
 * read at first use. Only those routes import it, so only they bundle the KMS client that reads it.
 */
export const listCursorKey = (): Promise<Uint8Array> => cursorKeyFromEnvironment()();
