/** XML text and attribute escaping, and one element per call: what the reports are written with. */
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
};

export const escapeXml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? '');

/** `<name>text</name>`, or nothing when the value is absent. */
export const leaf = (name: string, value: string | undefined): string =>
  value === undefined ? '' : `<${name}>${escapeXml(value)}</${name}>`;

/** `<name>children</name>`, or nothing when every child is empty. */
export const node = (name: string, ...children: string[]): string => {
  const content = children.join('');
  return content === '' ? '' : `<${name}>${content}</${name}>`;
};
