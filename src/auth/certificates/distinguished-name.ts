// One spelling of an RFC 4514 distinguished name, so that a subject in the clients file matches the one a runtime
// reports however either spaced it or cased its attribute types: `cn = pbx, o=Example` and `CN=pbx,O=Example` are one.

/** Splits at each separator not escaped by a backslash (RFC 4514 section 2.4). */
function splitUnescaped(text: string, separators: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text[++i]!;
    } else if (separators.includes(ch)) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** `type=value` with the type uppercased and the spaces around both dropped (an escaped trailing space kept). */
function attributeOf(text: string): string {
  const eq = text.indexOf('=');
  if (eq === -1) return text.trim();
  const value = text.slice(eq + 1).replace(/^\s+/, '');
  const trimmed = value.endsWith('\\ ') ? value : value.trimEnd();
  return `${text.slice(0, eq).trim().toUpperCase()}=${trimmed}`;
}

/** The canonical text of a distinguished name: RDNs joined by `,`, a multi-valued RDN's attributes by `+`. */
export function canonicalDn(dn: string): string {
  return splitUnescaped(dn, ',')
    .map((rdn) => splitUnescaped(rdn, '+').map(attributeOf).join('+'))
    .join(',');
}
