// Types of oidc-idp.mjs.
import type { JWK } from 'jose';

export interface IdpApp {
  id: string;
  secret: string;
}

export interface RunningIdp {
  issuer: string;
  port: number;
  /** The path and query of every request the provider received, in order. */
  requests: string[];
  token(app: IdpApp): Promise<string>;
  rotate(keys: JWK[]): void;
  stop(): Promise<void>;
}

export function signingKey(kid: string, alg?: string): Promise<JWK>;
export function startIdp(options: {
  port?: number;
  audience: string;
  apps: IdpApp[];
  keys: JWK[];
}): Promise<RunningIdp>;
