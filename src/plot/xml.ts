/** Text and attribute values for SVG: every loop name and event message passes through here. */
export function escapeXml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
      // Control characters other than tab and newline are not allowed in XML 1.0 at all.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  );
}

/** A coordinate with one decimal: enough at 1000 px, and keeps the file small. */
export function px(value: number): string {
  return String(Math.round(value * 10) / 10);
}
