import test from 'ava';
import { ESLint } from 'eslint';

// The lint configuration's import rules, run through ESLint's Node API on code given as text with a
// virtual path inside the tree: the bad files never exist, so neither tsc nor `npm run lint` sees them.
const eslint = new ESLint({ cwd: process.cwd(), overrideConfigFile: '.ci/eslint.config.js' });

/** The `no-restricted-imports` messages ESLint reports for `code` as if it were the file at `filePath`. */
async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  assertParsed(result);
  return result.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

function assertParsed(result: ESLint.LintResult): void {
  const fatal = result.messages.find((message) => message.fatal);
  if (fatal) throw new Error(`fixture did not parse: ${fatal.message}`);
}

const PLUGIN_RULE = /'(.+)' import is restricted .*Plugin code imports only core\/spec \(its index, the plugin toolkit\) and plugins\/shared\./;
const CORE_RULE = /'(.+)' import is restricted .*core\/ and config\/ never import plugins\//;

test('a provider importing core modules past core/spec fails lint, each import named', async (t) => {
  const messages = await restrictedImports(
    'plugins/providers/bad/index.ts',
    [
      "import { errors } from '../../../core/errors.js';",
      "import { invalid } from '../../../core/api/validate.js';",
      "import { encodeMultipart } from '../../../core/http/multipart.js';",
      "import type { ErrorBody } from '../../../core/spec/unified.js';",
      "export { SseDecoder } from '../../../core/http/sse.js';",
      'export const used: unknown[] = [errors, invalid, encodeMultipart];',
      'export type Used = ErrorBody;',
    ].join('\n'),
  );
  t.deepEqual(
    messages.map((message) => PLUGIN_RULE.exec(message)?.[1]),
    ['../../../core/errors.js', '../../../core/api/validate.js', '../../../core/http/multipart.js', '../../../core/spec/unified.js', '../../../core/http/sse.js'],
  );
});

test('a guardrail or shared file importing core, test or config fails lint', async (t) => {
  t.is((await restrictedImports('plugins/guardrails/bad/index.ts', "import { defineGuardrail } from '../../../core/guardrails/define.js';\nexport const d = defineGuardrail;\n")).length, 1);
  t.is((await restrictedImports('plugins/shared/bad.ts', "import { GatewayError } from '../../core/errors.js';\nexport const g = GatewayError;\n")).length, 1);
  t.is((await restrictedImports('plugins/providers/bad/bad-chat.ts', "import { startGateway } from '../../../test/harness.js';\nexport const s = startGateway;\n")).length, 1);
  t.is((await restrictedImports('plugins/providers/bad/index.ts', "import { resolveConfig } from '../../../config/index.js';\nexport const r = resolveConfig;\n")).length, 1);
});

test('a plugin importing only core/spec, plugins/shared and another plugin passes', async (t) => {
  const code = [
    "import { errors, isRecord, type ProviderRegistration } from '../../../core/spec/index.js';",
    "import { parseDataUrl } from '../../shared/chat-mapping.js';",
    "import { mapOpenAIError } from '../openai/openai-error.js';",
    'export const used: unknown[] = [errors, isRecord, parseDataUrl, mapOpenAIError];',
    'export type Used = ProviderRegistration;',
  ].join('\n');
  t.deepEqual(await restrictedImports('plugins/providers/good/index.ts', code), []);
  t.deepEqual(await restrictedImports('plugins/guardrails/good/index.ts', "import { defineGuardrail } from '../../../core/spec/index.js';\nexport const d = defineGuardrail;\n"), []);
});

test('tests inside plugins may import the core and test helpers; a fake or a conformance subject may not', async (t) => {
  const code = "import { errors } from '../../../core/errors.js';\nimport { startGateway } from '../../../test/harness.js';\nexport const used: unknown[] = [errors, startGateway];\n";
  t.deepEqual(await restrictedImports('plugins/providers/bad/bad.test.ts', code), []);
  for (const file of ['bad-fake.ts', 'bad-conformance.ts']) t.is((await restrictedImports(`plugins/providers/bad/${file}`, code)).length, 2, file);
  // What a fake and a subject need is part of the toolkit behind core/spec.
  const toolkit = "import { type ProviderFakeRenderer, requestJson } from '../../../core/spec/index.js';\nexport const used: unknown[] = [requestJson];\nexport type R = ProviderFakeRenderer;\n";
  t.deepEqual(await restrictedImports('plugins/providers/good/good-fake.ts', toolkit), []);
});

test('core or config importing a plugin fails lint; a core test may', async (t) => {
  const core = await restrictedImports('core/api/bad.ts', "import { openai } from '../../plugins/providers/openai/index.js';\nexport const o = openai;\n");
  t.is(CORE_RULE.exec(core[0] ?? '')?.[1], '../../plugins/providers/openai/index.js');
  t.is((await restrictedImports('core/bad.ts', "export { pii } from '../plugins/guardrails/index.js';\n")).length, 1);
  t.is((await restrictedImports('config/bad.ts', "import type { CohereParams } from '../plugins/providers/cohere/index.js';\nexport type C = CohereParams;\n")).length, 1);
  t.deepEqual(await restrictedImports('core/bad.test.ts', "import { openai } from '../plugins/providers/openai/index.js';\nexport const o = openai;\n"), []);
});

test('a plugin may import the toolkit of its audience, but not a file inside it', async (t) => {
  const provider = "import { NdjsonDecoder, type ProviderRegistration } from '../../../core/spec/provider/index.js';\nexport const used: unknown[] = [NdjsonDecoder];\nexport type Used = ProviderRegistration;\n";
  t.deepEqual(await restrictedImports('plugins/providers/good/index.ts', provider), []);
  t.deepEqual(await restrictedImports('examples/ndjson-provider/index.ts', provider), []);
  t.deepEqual(await restrictedImports('plugins/guardrails/good/index.ts', "import { defineGuardrail } from '../../../core/spec/guardrail/index.js';\nexport const d = defineGuardrail;\n"), []);
  const inside = [
    "import { stopList } from '../../../core/spec/provider/chat-mapping.js';",
    "import { NdjsonDecoder } from '../../core/spec/provider/ndjson.js';",
    "import { parseRoute } from '../../../core/spec/config/index.js';",
    'export const used: unknown[] = [stopList, NdjsonDecoder, parseRoute];',
  ].join('\n');
  t.deepEqual(
    (await restrictedImports('plugins/providers/bad/index.ts', inside)).map((message) => PLUGIN_RULE.exec(message)?.[1]),
    ['../../../core/spec/provider/chat-mapping.js', '../../core/spec/provider/ndjson.js', '../../../core/spec/config/index.js'],
  );
  t.is((await restrictedImports('examples/ndjson-provider/bad.ts', "import { errors } from '../../core/errors.js';\nexport const e = errors;\n")).length, 1, 'the NDJSON example is plugin code too');
});
