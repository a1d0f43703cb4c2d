// The gateway's release, as package.json names it: a constant in the source, so the Worker's bundle has it without
// reading package.json at run time (version.test.ts holds it to package.json's `version`).

export const GATEWAY_NAME = 'callerid-gateway';
export const GATEWAY_VERSION = '0.1.0';
