// Types of idp-token.mjs.
export function fetchIdpToken(issuer: string, audience: string, app: { id: string; secret: string }): Promise<string>;
