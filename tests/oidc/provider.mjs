// OpenID providers for chainrule's sign-on tests: oidc-provider (certified, on Node), one per entry of the
// configuration, all in this one process.
//
//   node provider.mjs CONFIG.json    // {"providers": [{"port", "clients": [...], "accounts": {...}, "jwks": {...}}]}
//
// People sign in through oidc-provider's own development pages (any password; then consent). POST /test/mode
// {"id_token_audience": "..."} makes a provider misbehave on purpose: its token endpoint then answers with an
// id_token for another audience (signed with its real key), as a misconfigured or hostile provider would.
import fs from 'node:fs';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));

for (const entry of config.providers) {
  const issuer = `http://127.0.0.1:${entry.port}`;
  const mode = {};
  const provider = new Provider(issuer, {
    clients: entry.clients,
    jwks: entry.jwks,
    cookies: { keys: ['chainrule-test-cookie-key'] },
    claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: false, // the id_token carries the profile (the userinfo endpoint is not needed)
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    async findAccount(ctx, id) {
      const person = entry.accounts[id] ?? { name: id };
      return { accountId: id, async claims() { return { sub: id, ...person }; } };
    },
  });
  provider.proxy = false;
  const key = await jose.importJWK(entry.jwks.keys[0], 'RS256');
  provider.use(async (ctx, next) => {
    if (ctx.path === '/test/mode' && ctx.method === 'POST') {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      Object.assign(mode, JSON.parse(Buffer.concat(chunks).toString() || '{}'));
      ctx.body = mode;
      return;
    }
    await next();
    if (ctx.path === '/token' && mode.id_token_audience && ctx.body && ctx.body.id_token) {
      const claims = jose.decodeJwt(ctx.body.id_token);
      claims.aud = mode.id_token_audience;
      claims.azp = mode.id_token_audience;
      ctx.body = { ...ctx.body, id_token: await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: entry.jwks.keys[0].kid }).sign(key) };
    }
  });
  provider.listen(entry.port, '127.0.0.1');
}
console.log('providers ready');
