import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { groq } from '../../plugins/providers/groq/index.js';
import { assertAgentRan, type AgentUpstream, FINAL_ANSWER, packagePath, run, setUpAgent } from './agent-harness.js';

/**
 * The Codex CLI (`@openai/codex`, pinned; its Linux binary comes as the optional dependency
 * `@openai/codex-linux-x64`) with only a base URL, a key and a model: a provider of its own in
 * `$CODEX_HOME/config.toml` (`base_url` the gateway's `/v1`, `env_key` naming the variable that
 * holds a virtual key, `wire_api = "responses"`). `codex exec` answers a question about a file by
 * running `cat` with its `exec_command` tool: natively on OpenAI's Responses API, and on a provider
 * with chat only (Groq), where the gateway translates each turn.
 *
 * What the configuration turns off so that nothing leaves loopback: the update check
 * (`check_for_update_on_startup`), the plugin catalogue and its sync (`features.plugins`), analytics
 * and feedback. The command runs without Codex's sandbox (`sandbox_mode = "danger-full-access"`):
 * the sandbox needs kernel features a test machine may lack, and the command is the test's own.
 */

const CODEX_CONFIG = (gatewayUrl: string) =>
  [
    'model = "gpt-5"',
    'model_provider = "gateway"',
    'check_for_update_on_startup = false',
    'sandbox_mode = "danger-full-access"',
    'approval_policy = "never"',
    '',
    '[model_providers.gateway]',
    'name = "LLM gateway"',
    `base_url = "${gatewayUrl}/v1"`,
    'env_key = "LLM_GATEWAY_KEY"',
    'wire_api = "responses"',
    '',
    '[features]',
    'plugins = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
  ].join('\n');

async function runCodex(t: ExecutionContext, upstream: AgentUpstream = {}) {
  const setup = await setUpAgent(t, 'codex', () => ({ toolName: 'exec_command', toolArguments: { cmd: 'cat notes.txt' } }), upstream);
  const codexHome = join(setup.home, '.codex');
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'config.toml'), CODEX_CONFIG(setup.url));
  const result = await run(process.execPath, [packagePath('@openai/codex/bin/codex.js'), 'exec', '--skip-git-repo-check', 'What do the notes in notes.txt say?'], {
    cwd: setup.workspace,
    env: { ...setup.environment, CODEX_HOME: codexHome, LLM_GATEWAY_KEY: setup.key },
  });
  t.false(result.failed, result.stderr);
  // `codex exec` prints the last message alone on standard output (its progress goes to standard error).
  t.is(result.stdout.trim(), FINAL_ANSWER);
  return setup;
}

test.serial('the Codex CLI runs a task that uses its shell tool, through the gateway with a virtual key (Responses API on OpenAI)', async (t) => {
  const setup = await runCodex(t);
  t.true(setup.fake.requests.every((request) => request.url === '/v1/responses'));
  t.true(setup.fake.bodies().every((body) => body.model === 'gpt-5' && body.stream === true));
  await assertAgentRan(t, setup, ['responses']);
});

test.serial('the Codex CLI runs a task that uses its shell tool on a provider with chat only (Responses translated to chat)', async (t) => {
  const setup = await runCodex(t, { provider: 'groq', registrations: [groq()] });
  t.true(setup.fake.requests.every((request) => request.url === '/v1/chat/completions'));
  const names = setup.fake.bodies()[0].tools.map((declared: { function: { name: string } }) => declared.function.name);
  t.true(names.includes('exec_command'));
  t.false(names.includes('web_search'), 'a hosted tool Groq lacks is dropped, not sent');
  await assertAgentRan(t, setup, ['responses']);
});
