/**
 * `GET /v1/docs`: an interactive reference of the OpenAPI document (Swagger UI, from the
 * swagger-ui-dist package, served by Edifice itself: the page loads nothing from elsewhere).
 * Keys typed into its Authorize dialog stay in the page.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TemplatedApp } from 'uWebSockets.js';
import { finish, type HttpContext } from './context.ts';
import { refuseOtherMethods } from './methods.ts';
import type { Reply } from './reply.ts';

const ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
} as const;

/** The page: relative links, so that it works under any base path and behind a proxy. */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Edifice API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
</script>
</body>
</html>
`;

export function registerDocsPage(app: TemplatedApp, ctx: HttpContext): void {
  const base = ctx.config.basePath;
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files: [string, string, Reply][] = [
    [`${base}/docs`, '/docs', { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'public, max-age=300' }, body: PAGE }],
  ];
  for (const [name, type] of Object.entries(ASSETS)) {
    files.push([`${base}/docs/${name}`, `/docs/${name}`, { status: 200, headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' }, body: readFileSync(join(dist, name)) }]);
  }
  for (const [pattern, route, reply] of files) {
    app.get(pattern, (res, req) => finish(ctx, res, route, 'GET', req.getUrl(), performance.now(), reply));
    app.head(pattern, (res, req) => finish(ctx, res, route, 'HEAD', req.getUrl(), performance.now(), reply));
    refuseOtherMethods(app, ctx, pattern, route, ['GET', 'HEAD'], false);
  }
}
