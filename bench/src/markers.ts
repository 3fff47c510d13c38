/**
 * Generated blocks inside hand-written markdown: the text between `<!-- NAME:start -->` and
 * `<!-- NAME:end -->` is replaced, everything around it is kept byte for byte.
 */

export function replaceBetweenMarkers(doc: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  if (i < 0 || j < 0 || j < i) throw new Error(`markers ${start} … ${end} not found (in that order)`);
  if (doc.indexOf(start, i + 1) >= 0 || doc.indexOf(end, j + 1) >= 0) throw new Error(`markers ${start} … ${end} appear more than once`);
  return `${doc.slice(0, i + start.length)}\n${content.trim()}\n${doc.slice(j)}`;
}
