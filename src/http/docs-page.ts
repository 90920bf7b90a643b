/**
 * `GET /v1/docs`: an interactive reference of the OpenAPI document (Swagger UI, from the
 * swagger-ui-dist package, served by Edifice itself: the page loads nothing from elsewhere).
 * Keys typed into its Authorize dialog stay in the page.
 */
import { join } from 'node:path';
import type { TemplatedApp } from 'uWebSockets.js';
import type { HttpContext } from './context.ts';
import { fileReply, packageDir, serveStatic } from './static-files.ts';

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
  const dist = packageDir('swagger-ui-dist');
  serveStatic(app, ctx, `${base}/docs`, '/docs', {
    status: 200,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'public, max-age=300' },
    body: PAGE,
  });
  for (const [name, type] of Object.entries(ASSETS)) {
    serveStatic(app, ctx, `${base}/docs/${name}`, `/docs/${name}`, fileReply(join(dist, name), type, 86_400));
  }
}
