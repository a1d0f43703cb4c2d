// Media types compared as RFC 9110 section 8.3.1 has them: type and subtype, case-insensitive, parameters apart;
// read by the `content-type` library, so `application/x-www-form-urlencoded-evil` is not a form.
import { parse } from 'content-type';

/** The form media type of RFC 6749's endpoints (appendix B). */
export const FORM_URLENCODED = 'application/x-www-form-urlencoded';

/**
 * Whether a Content-Type field names `essence` (`type/subtype`, lowercase). A field that is not a media type
 * (no subtype, stray characters, a malformed parameter) names none. `charset`, the one parameter a form may carry,
 * must be UTF-8 where it is given: the body is read as UTF-8.
 */
export function contentTypeIs(field: string | undefined, essence: string): boolean {
  if (field === undefined) return false;
  let mediaType: ReturnType<typeof parse>;
  try {
    // RFC 9110 section 5.6.6 allows empty parameters (`type/subtype;`), which the library's RFC 7231 grammar does not.
    mediaType = parse(field.replace(/;[ \t]*(?=;|$)/g, ''));
  } catch {
    return false;
  }
  const charset = mediaType.parameters.charset;
  return mediaType.type === essence && (charset === undefined || charset.toLowerCase() === 'utf-8');
}
