import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { canonicalQuery, canonicalUri, signRequest } from './sigv4.js';

interface SuiteCase {
  name: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  sessionToken?: string;
  authorization: string;
}
const suite = JSON.parse(readFileSync(join(process.cwd(), 'plugins/shared/aws-sigv4/__fixtures__/sigv4-test-suite.json'), 'utf8')) as {
  credentials: { accessKeyId: string; secretAccessKey: string };
  region: string;
  service: string;
  date: string;
  cases: SuiteCase[];
  intermediate: { name: string; canonicalRequest: string; stringToSign: string };
};
const scope = { region: suite.region, service: suite.service };

for (const vector of suite.cases) {
  test(`AWS test suite: ${vector.name}`, (t) => {
    const signed = signRequest(
      { method: vector.method, url: vector.url, headers: vector.headers, body: vector.body },
      { ...suite.credentials, sessionToken: vector.sessionToken },
      scope,
      new Date(suite.date),
    );
    t.is(signed.headers.authorization, vector.authorization);
    t.is(signed.headers['x-amz-date'], '20150830T123600Z');
    t.is(signed.headers['x-amz-security-token'] as string | undefined, vector.sessionToken);
  });
}

test('AWS test suite: canonical request and string to sign of get-vanilla-query-order-key', (t) => {
  const vector = suite.cases.find((candidate) => candidate.name === suite.intermediate.name)!;
  const signed = signRequest({ ...vector }, suite.credentials, scope, new Date(suite.date));
  t.is(signed.canonicalRequest, suite.intermediate.canonicalRequest);
  t.is(signed.stringToSign, suite.intermediate.stringToSign);
});

test('a path segment already percent-encoded is encoded again, as the AWS SDKs sign Bedrock model ids', (t) => {
  t.is(canonicalUri('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse'), '/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse');
  t.is(canonicalQuery('b=2&a=%20x&a=1'), 'a=%20x&a=1&b=2');
});

test('a different secret, body, date or region changes the signature', (t) => {
  const base = { method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', headers: {}, body: '{}' };
  const credentials = { accessKeyId: 'AKID', secretAccessKey: 'secret' };
  const date = new Date('2026-01-01T00:00:00Z');
  const reference = signRequest(base, credentials, { region: 'us-east-1', service: 'bedrock' }, date).signature;
  t.not(signRequest(base, { ...credentials, secretAccessKey: 'other' }, { region: 'us-east-1', service: 'bedrock' }, date).signature, reference);
  t.not(signRequest({ ...base, body: '{ }' }, credentials, { region: 'us-east-1', service: 'bedrock' }, date).signature, reference);
  t.not(signRequest(base, credentials, { region: 'us-west-2', service: 'bedrock' }, date).signature, reference);
  t.not(signRequest(base, credentials, { region: 'us-east-1', service: 'bedrock' }, new Date('2026-01-01T00:00:01Z')).signature, reference);
});
