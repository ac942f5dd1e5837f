import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';

const dist = (path: string) => pathToFileURL(join(process.cwd(), 'dist', path)).href;

test('a gateway on the shipped configuration never loads axios; the first control-plane use does', (t) => {
  const script = `
    import { createRequire } from 'node:module';
    const { createGateway } = await import(${JSON.stringify(dist('core/app.js'))});
    const config = (await import(${JSON.stringify(dist('gateway.config.js'))})).default;
    const { lazyControlPlaneHttp } = await import(${JSON.stringify(dist('core/http/control-plane.js'))});
    // axios's own CommonJS dependencies: loaded by its ES module entry and by its CommonJS build alike.
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/follow-redirects/'));
    const gateway = createGateway(config);
    const atBoot = loaded();
    const http = lazyControlPlaneHttp()();
    console.log(JSON.stringify({ atBoot, afterUse: loaded(), hasPost: typeof http.post === 'function' }));
    await gateway.close();
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'lazy-axios-')), LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  t.is(run.status, 0, run.stderr);
  t.deepEqual(JSON.parse(run.stdout.trim().split('\n').at(-1)!), { atBoot: false, afterUse: true, hasPost: true });
});
