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

/** A setting the operator gave that cannot be used: the message names it and what it must be. */
export class SettingError extends Error {
  override name = 'SettingError';
}

export interface WholeNumberBounds {
  min: number;
  /** No upper bound when absent (up to the largest safe integer). */
  max?: number;
}

/**
 * A setting (an environment variable, a context value, a flag) read as a whole number within its
 * bounds: digits only, so "1e3", "2.5", " 7" and "" are refused, naming the setting and the value.
 */
export const wholeNumber = (label: string, text: string, bounds: WholeNumberBounds): number => {
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  if (!(value >= bounds.min && value <= max)) {
    const range = bounds.max === undefined ? `at least ${bounds.min}` : `from ${bounds.min} to ${bounds.max}`;
    throw new SettingError(`${label} must be a whole number ${range}, not "${text}"`);
  }
  return value;
};

/** A whole number from the environment within its bounds, the fallback when unset; anything else fails loudly. */
export const wholeNumberEnv = (name: string, fallback: number, bounds: WholeNumberBounds): number => {
  const text = optionalEnv(name);
  return text === undefined ? fallback : wholeNumber(`Environment variable ${name}`, text, bounds);
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
