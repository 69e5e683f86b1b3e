/** The fenced code blocks of the guides, as the documentation test reads them. */
const SKIP_MARKER = /^<!--\s*doc-test:\s*skip\b.*-->$/;

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
}

export interface FencedBlock extends ShellBlock {
  info: string;
  skipped: boolean;
}

/** Every fenced block of a Markdown text (fences may be indented, as in list items). */
export const fencedBlocks = (markdown: string): FencedBlock[] => {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,})\s*([^`\s]*)/.exec(lines[index] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '```', info = ''] = open;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[end] ?? '')) {
      body.push(
        (lines[end] ?? '').startsWith(indent) ? (lines[end] ?? '').slice(indent.length) : (lines[end] ?? ''),
      );
      end++;
    }
    let before = index - 1;
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--;
    blocks.push({
      line: index + 1,
      info: info.toLowerCase(),
      code: body.join('\n'),
      skipped: before >= 0 && SKIP_MARKER.test((lines[before] ?? '').trim()),
    });
    index = end;
  }
  return blocks;
};
