// The one parser of `Authorization: Bearer <token>` (RFC 6750 section 2.1: the token68 syntax), shared by the app's
// routes and the Node hit path.

const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*$/i;
const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i;

/** The token of a Bearer header, or undefined when the header is absent or not a well-formed Bearer one. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/** Whether the header names the Bearer scheme at all (well-formed or not). */
export const isBearerScheme = (header: string): boolean => BEARER_SCHEME.test(header);
