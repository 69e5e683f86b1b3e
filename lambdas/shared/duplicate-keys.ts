/**
 * The first object key that appears twice in a JSON text, as a field path, or undefined.
 * JSON.parse keeps the last of two equal keys; on a payment two amounts must not be read as one.
 * Expects text that JSON.parse has accepted.
 */
export const firstDuplicateKey = (text: string): string | undefined => {
  interface Frame {
    path: string;
    keys?: Set<string>;
    index: number;
    expectingKey: boolean;
    key?: string;
  }
  const stack: Frame[] = [];
  const childPath = (parent: Frame | undefined): string => {
    if (parent === undefined) return '';
    if (parent.keys) return parent.path === '' ? (parent.key ?? '') : `${parent.path}.${parent.key ?? ''}`;
    return `${parent.path}[${parent.index}]`;
  };
  for (let position = 0; position < text.length; position++) {
    const character = text[position];
    const top = stack.at(-1);
    if (character === '{' || character === '[') {
      stack.push({
        path: childPath(top),
        ...(character === '{' && { keys: new Set<string>() }),
        index: 0,
        expectingKey: character === '{',
      });
    } else if (character === '}' || character === ']') {
      stack.pop();
    } else if (character === ',') {
      if (top?.keys) top.expectingKey = true;
      else if (top) top.index++;
    } else if (character === '"') {
      let end = position + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.expectingKey) {
        const key = JSON.parse(text.slice(position, end + 1)) as string;
        if (top.keys.has(key)) return top.path === '' ? key : `${top.path}.${key}`;
        top.keys.add(key);
        top.key = key;
        top.expectingKey = false;
      }
      position = end;
    }
  }
  return undefined;
};
