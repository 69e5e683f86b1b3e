/** The detail of the 503 the local service answers while it starts: how a client tells it from any other 503. */
export const STARTING_DETAIL = 'The service is starting';
