/**
 * A tiny well-formedness check for the SVG the plot writes (Node has no DOMParser): one root
 * `<svg>`, every element closed in order, attribute values quoted, no raw `<` or `&` in text.
 * Returns the problems (empty when well formed) and the element names seen.
 */
export function checkXml(text: string): { problems: string[]; elements: string[] } {
  const problems: string[] = [];
  const elements: string[] = [];
  const open: string[] = [];
  let i = 0;
  let roots = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '&') {
      const end = text.indexOf(';', i);
      const entity = end < 0 ? '' : text.slice(i + 1, end);
      if (!['amp', 'lt', 'gt', 'quot', 'apos'].includes(entity) && !/^#\d+$/.test(entity)) {
        problems.push(`bare & at ${i}`);
      }
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    if (c !== '<') {
      if (c === '>') problems.push(`bare > at ${i}`);
      i++;
      continue;
    }
    const end = findTagEnd(text, i);
    if (end < 0) {
      problems.push(`unterminated tag at ${i}`);
      break;
    }
    const tag = text.slice(i + 1, end);
    i = end + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      const expected = open.pop();
      if (name !== expected) problems.push(`</${name}> closes <${expected ?? 'nothing'}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const name = tag.split(/[\s/]/)[0]!;
    if (!/^[A-Za-z][\w:.-]*$/.test(name)) problems.push(`bad element name "${name}"`);
    const attributes = tag.slice(name.length, selfClosing ? -1 : undefined).trim();
    if (attributes !== '' && !/^([\w:-]+="[^"<]*"\s*)*$/.test(attributes))
      problems.push(`bad attributes in <${name}>`);
    elements.push(name);
    if (open.length === 0) roots++;
    if (!selfClosing) open.push(name);
  }
  if (open.length > 0) problems.push(`not closed: ${open.join(', ')}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  if (!text.startsWith('<svg')) problems.push('does not start with <svg');
  return { problems, elements };
}

/** The `>` that ends the tag opened at `start` (a `>` inside a quoted value does not). */
function findTagEnd(text: string, start: number): number {
  let quoted = false;
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '"') quoted = !quoted;
    else if (text[i] === '>' && !quoted) return i;
    else if (text[i] === '<' && !quoted) return -1;
  }
  return -1;
}
