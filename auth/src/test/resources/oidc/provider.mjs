// A local OpenID provider (panva's oidc-provider) for the auth tests: one client that gets JWT
// access tokens by the client credentials grant, for the resource it names (its audience).
// Prints {"issuer": "http://127.0.0.1:PORT"} once listening; stops when its input closes.
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = { ...privateKey.export({ format: 'jwk' }), kid: 'provider-key', use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'toolhost-test',
    client_secret: 'toolhost-test-secret',
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_post',
  }],
  jwks: { keys: [key] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: 'tools',
        audience: resource,
        accessTokenTTL: 600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  extraTokenClaims: () => ({ toolhost_profiles: 'main' }),
});
server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ issuer }) + '\n');
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
