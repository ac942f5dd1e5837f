import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { CHART, helm, MANIFESTS, manifestText, objectsOf, RENDERED, renderChart, strictCheck, validateObject } from './helm.js';

// The Helm chart (deploy/helm/llm-gateway), rendered offline by the pinned helm binary and checked
// against Kubernetes' schemas (test/deploy/helm.ts says which and why): with its defaults and with
// every option, each rendered object is valid for its kind, the committed plain manifests are what
// the chart renders, and what the gateway needs of Kubernetes is there (probes, drain, security).

const rendered = (values: readonly string[] = [], set: readonly string[] = []) => objectsOf(renderChart(values, set));
const deploymentOf = (objects: ReadonlyArray<Record<string, any>>) => objects.find((object) => object.kind === 'Deployment')!;
const envOf = (deployment: Record<string, any>): Array<{ name: string; value?: string; valueFrom?: any }> => deployment.spec.template.spec.containers[0].env;

test('helm lint --strict passes', (t) => {
  t.regex(helm(['lint', '--strict', CHART]), /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

for (const entry of RENDERED) {
  test(`deploy/kubernetes/${entry.file} is the chart rendered with ${entry.about}`, (t) => {
    const committed = readFileSync(join(MANIFESTS, entry.file), 'utf8');
    t.true(committed === manifestText(entry), `deploy/kubernetes/${entry.file} is stale: run npm run deploy:manifests`);
  });

  test(`every object rendered with ${entry.about} is valid against Kubernetes' schemas, with no unknown field`, async (t) => {
    const objects = rendered(entry.values);
    for (const object of objects) await t.notThrowsAsync(validateObject(object), `${object.kind} ${object.metadata?.name}`);
    t.deepEqual(strictCheck(objects), []);
  });
}

test("the validators refuse what Kubernetes would: a wrong type, a misspelt field", async (t) => {
  const deployment = structuredClone(deploymentOf(rendered()));
  deployment.spec.template.spec.containers[0].readinessProb = deployment.spec.template.spec.containers[0].readinessProbe;
  t.regex(strictCheck([deployment]).join('\n'), /'"readinessProb"' does not exist in type 'IContainer'/);
  deployment.spec.replicas = 'three';
  await t.throwsAsync(validateObject(deployment), { message: /replicas must be integer/ });
});

test('defaults: one pod, probes on /ready and /health, non-root and read-only with emptyDirs for the data dir and /tmp, no autoscaler or budget', (t) => {
  const objects = rendered();
  t.deepEqual(objects.map((object) => object.kind).sort(), ['Deployment', 'Service', 'ServiceAccount']);
  const deployment = deploymentOf(objects);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  t.is(deployment.spec.replicas, 1);
  t.like(container.readinessProbe, { httpGet: { path: '/ready', port: 'http' } });
  t.like(container.livenessProbe, { httpGet: { path: '/health', port: 'http' } });
  t.like(pod.securityContext, { runAsNonRoot: true, runAsUser: 1000 });
  t.like(container.securityContext, { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  t.deepEqual(container.volumeMounts.map((mount: { mountPath: string }) => mount.mountPath), ['/data', '/tmp']);
  t.true(pod.volumes.every((volume: Record<string, unknown>) => volume.emptyDir !== undefined));
  t.like(envOf(deployment).find((variable) => variable.name === 'GATEWAY_DATA_DIR'), { value: '/data/gateway' });
  t.is(pod.topologySpreadConstraints.length, 2);
});

test('the drain after SIGTERM fits the grace period: GATEWAY_SHUTDOWN_GRACE_MS = (terminationGracePeriodSeconds - preStop sleep - margin) s', (t) => {
  for (const [values, grace, sleep] of [[[], 45, 5], [['ci/full-values.yaml'], 75, 10]] as const) {
    const deployment = deploymentOf(rendered(values));
    const pod = deployment.spec.template.spec;
    t.is(pod.terminationGracePeriodSeconds, grace);
    t.deepEqual(pod.containers[0].lifecycle.preStop.exec.command, ['sleep', String(sleep)]);
    const drainMs = Number(envOf(deployment).find((variable) => variable.name === 'GATEWAY_SHUTDOWN_GRACE_MS')?.value);
    t.is(drainMs, (grace - sleep - 5) * 1000);
  }
  const error = t.throws(() => renderChart([], ['terminationGracePeriodSeconds=8']));
  t.regex(String((error as { stderr?: string }).stderr), /terminationGracePeriodSeconds must exceed/);
});

test('every option: Redis and PostgreSQL, keys and provider keys by Secret reference only, gateway.config.ts from a ConfigMap, autoscaler and disruption budget', (t) => {
  const objects = rendered(['ci/full-values.yaml']);
  t.deepEqual(objects.map((object) => object.kind).sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service', 'ServiceAccount']);
  const deployment = deploymentOf(objects);
  t.is(deployment.spec.replicas, undefined, 'the autoscaler owns the replica count');
  const env = envOf(deployment);
  const fromSecret = (name: string) => env.find((variable) => variable.name === name)?.valueFrom?.secretKeyRef;
  t.deepEqual(fromSecret('REDIS_URL'), { name: 'llm-gateway-redis', key: 'REDIS_URL' });
  t.deepEqual(fromSecret('DATABASE_URL'), { name: 'llm-gateway-postgres', key: 'DATABASE_URL' });
  t.deepEqual(fromSecret('GATEWAY_MASTER_KEY'), { name: 'llm-gateway-keys', key: 'GATEWAY_MASTER_KEY' });
  t.deepEqual(fromSecret('GATEWAY_API_KEY'), { name: 'llm-gateway-keys', key: 'GATEWAY_API_KEY' });
  t.deepEqual(fromSecret('OPENAI_API_KEY'), { name: 'provider-keys', key: 'openai' });
  // No secret as a plain value anywhere in what is rendered.
  t.false(objects.some((object) => object.kind === 'Secret'));
  t.true(env.filter((variable) => /KEY|URL|SECRET|TOKEN|PASSWORD/.test(variable.name) && variable.name !== 'OTEL_EXPORTER_OTLP_ENDPOINT').every((variable) => variable.value === undefined));
  const configMap = objects.find((object) => object.kind === 'ConfigMap')!;
  t.regex(configMap.data['gateway.config.ts'], /export default defineConfig/);
  t.like(env.find((variable) => variable.name === 'GATEWAY_CONFIG'), { value: '/app/gateway.config.ts' });
  t.like(deployment.spec.template.spec.containers[0].volumeMounts.find((mount: { name: string }) => mount.name === 'config'), { mountPath: '/app/gateway.config.ts', subPath: 'gateway.config.ts', readOnly: true });
  t.like(objects.find((object) => object.kind === 'HorizontalPodAutoscaler'), { spec: { minReplicas: 3, maxReplicas: 12, scaleTargetRef: { kind: 'Deployment', name: 'llm-gateway' } } });
  t.like(objects.find((object) => object.kind === 'PodDisruptionBudget'), { spec: { maxUnavailable: 1 } });
});

test('several pods without shared state or shared keys are refused at render time', (t) => {
  const refused = (set: string[]) => String((t.throws(() => renderChart([], set)) as { stderr?: string }).stderr);
  t.regex(refused(['replicaCount=2']), /needs shared state: set redis.enabled and redis.existingSecret/);
  t.regex(refused(['autoscaling.enabled=true', 'redis.enabled=true', 'redis.existingSecret=r']), /needs one master key/);
  t.regex(refused(['replicaCount=2', 'redis.enabled=true', 'redis.existingSecret=r', 'secrets.masterKey.name=k']), /needs one account key/);
  t.regex(refused(['postgresql.enabled=true']), /postgresql.existingSecret/);
});
