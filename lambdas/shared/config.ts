/** Configuration comes from the environment, read once per use site, failing loudly when unset. */
export const requiredEnv = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Environment variable ${name} is not set`);
  }
  return value;
};

export const optionalEnv = (name: string): string | undefined => {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
};

/** A whole number from the environment within its bounds, the fallback when unset; anything else fails loudly. */
export const wholeNumberEnv = (
  name: string,
  fallback: number,
  bounds: { min: number; max: number },
): number => {
  const text = optionalEnv(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || value < bounds.min || value > bounds.max) {
    throw new Error(
      `Environment variable ${name} must be a whole number from ${bounds.min} to ${bounds.max}`,
    );
  }
  return value;
};

/**
 * The absolute URL clients reach the service at (PUBLIC_URL: the local address or a proxy in
 * front locally, the custom domain or the stage URL on AWS), without a trailing slash. Every
 * absolute URL the service writes starts with it; none is built from the request's Host, which a
 * client chooses.
 */
export const publicUrl = (): string => {
  const value = requiredEnv('PUBLIC_URL');
  if (!/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(value)) {
    throw new Error(`Environment variable PUBLIC_URL must be an absolute http(s) URL; got ${value}`);
  }
  return value.replace(/\/+$/, '');
};
