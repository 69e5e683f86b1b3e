const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `15m`, `2h`, `1d`, `500ms` in milliseconds; undefined when not such a duration. */
export const parseDuration = (text: string): number | undefined => {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
};
