import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertAgentRan, FINAL_ANSWER, packagePath, run, setUpAgent } from './agent-harness.js';

/**
 * The Continue CLI (`@continuedev/cli`, pinned; the command `cn`) with only a base URL, a key and a
 * model: a `config.yaml` whose one model has `provider: openai`, `apiBase` (the gateway's `/v1`),
 * `apiKey` (a virtual key) and `model`, passed with `--config`. `cn -p` answers a question about a
 * file with its `Read` tool. Telemetry is off (`CONTINUE_CLI_ENABLE_TELEMETRY=0`,
 * `CONTINUE_METRICS_ENABLED=0`).
 *
 * At start the CLI asks its vendor's API for its latest version (`GET /cn/info` with a machine id),
 * which no setting turns off; the trap refuses that tunnel, the CLI carries on, and the test allows
 * that one attempt and nothing else.
 */

const VERSION_CHECK = 'CONNECT api.continue.dev:443';

test.serial('the Continue CLI runs a prompt that reads a file with its tool, through the gateway with a virtual key', async (t) => {
  const setup = await setUpAgent(t, 'continue-cli', (notesPath) => ({ toolName: 'Read', toolArguments: { filepath: notesPath } }));
  const configPath = join(setup.home, 'gateway.yaml');
  const config = [
    'name: LLM gateway',
    'version: 0.0.1',
    'schema: v1',
    'models:',
    '  - name: gpt-4o through the gateway',
    '    provider: openai',
    '    model: gpt-4o',
    `    apiBase: ${setup.url}/v1`,
    `    apiKey: ${setup.key}`,
    '    roles: [chat, edit, apply]',
    '    capabilities: [tool_use]',
    '',
  ].join('\n');
  writeFileSync(configPath, config);
  const result = await run(process.execPath, [packagePath('@continuedev/cli/dist/cn.js'), '--config', configPath, '-p', 'What do the notes in notes.txt say?'], {
    cwd: setup.workspace,
    env: { ...setup.nodeEnvironment, CONTINUE_CLI_ENABLE_TELEMETRY: '0', CONTINUE_METRICS_ENABLED: '0' },
  });
  t.false(result.failed, result.stderr);
  t.is(result.stdout.trim(), FINAL_ANSWER);
  t.true(setup.fake.bodies().every((body) => body.model === 'gpt-4o'));
  await assertAgentRan(t, setup, ['chat'], [VERSION_CHECK]);
});
