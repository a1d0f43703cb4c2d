// An access token from an identity provider's token endpoint with the client credentials grant and a resource
// indicator (RFC 8707), with the Fetch API alone: for Node's tests, the benches and the tests inside workerd alike.

export async function fetchIdpToken(issuer, audience, app) {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: app.id,
      client_secret: app.secret,
      scope: 'search',
      resource: audience,
    }),
  });
  const body = await res.json();
  if (res.status !== 200 || body.access_token === undefined)
    throw new Error(`the provider refused: ${JSON.stringify(body)}`);
  return body.access_token;
}
