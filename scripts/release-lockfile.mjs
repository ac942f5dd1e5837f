// Writes the package.json and package-lock.json of a production install of the packed gateway:
// the tarball as the one dependency, and its dependencies pinned to exactly the versions (and
// integrity hashes) of this repository's lockfile. `npm ci` then installs what was tested, and can
// do so from npm's cache alone (npm_config_offline=true), without asking the registry to resolve.
// usage: node scripts/release-lockfile.mjs <repository lockfile> <tarball> <target dir>
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const [lockfilePath, tarballPath, targetDir] = process.argv.slice(2);
if (!lockfilePath || !tarballPath || !targetDir) {
  process.stderr.write('usage: node scripts/release-lockfile.mjs <package-lock.json> <llm-gateway-x.y.z.tgz> <target dir>\n');
  process.exit(2);
}
const lockfile = JSON.parse(readFileSync(lockfilePath, 'utf8'));
// The package's own manifest (bin, dependencies) is the one beside the lockfile.
const root = JSON.parse(readFileSync(join(dirname(lockfilePath), 'package.json'), 'utf8'));
const tarball = basename(tarballPath);
copyFileSync(tarballPath, join(targetDir, tarball));
const integrity = `sha512-${createHash('sha512').update(readFileSync(tarballPath)).digest('base64')}`;

const runtime = Object.fromEntries(
  Object.entries(lockfile.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true && !entry.link),
);
const manifest = { name: 'llm-gateway-release', private: true, type: 'module', dependencies: { [root.name]: `file:${tarball}` } };
const gateway = {
  version: root.version,
  resolved: `file:${tarball}`,
  integrity,
  license: root.license,
  dependencies: root.dependencies,
  ...(root.peerDependencies ? { peerDependencies: root.peerDependencies, peerDependenciesMeta: root.peerDependenciesMeta } : {}),
  ...(root.bin ? { bin: root.bin } : {}),
  engines: root.engines,
};
writeFileSync(join(targetDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
writeFileSync(
  join(targetDir, 'package-lock.json'),
  `${JSON.stringify({ name: manifest.name, lockfileVersion: 3, requires: true, packages: { '': { name: manifest.name, dependencies: manifest.dependencies }, [`node_modules/${root.name}`]: gateway, ...runtime } }, null, 2)}\n`,
);
