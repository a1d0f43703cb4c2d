// Decides whether a request comes from a phone: the console is for tablets and larger screens.

// Tablets first: iPad Safari and some Android tablets still carry "Mobile" in their User-Agent.
const TABLET = /iPad|Tablet|PlayBook|Kindle|Silk\/|Nexus (7|9|10)\b/i;
// "Mobi" is the marker Mozilla recommends for phones; Android phones carry "Mobile", tablets do not.
const PHONE = /iPhone|iPod|Windows Phone|IEMobile|BlackBerry|BB10|Opera Mini|KaiOS|Mobi/i;

/**
 * True when the client says it is a phone: `Sec-CH-UA-Mobile: ?1` (Chromium's client hint, which a
 * tablet sends as `?0`), or a phone User-Agent. A tablet User-Agent passes unless the hint says phone.
 */
export function isPhone(headers: { secChUaMobile: string | undefined; userAgent: string | undefined }): boolean {
  if (headers.secChUaMobile?.trim() === '?1') return true;
  const ua = headers.userAgent ?? '';
  if (TABLET.test(ua)) return false;
  return PHONE.test(ua);
}
