import test from 'ava';
import { assertAgentRan, FINAL_ANSWER, packagePath, run, setUpAgent } from './agent-harness.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`, pinned; its Linux binary comes as the optional
 * dependency `@anthropic-ai/claude-code-linux-x64`, linked in place by the package's postinstall)
 * with only a base URL, a key and a model: `ANTHROPIC_BASE_URL` (the gateway), `ANTHROPIC_AUTH_TOKEN`
 * (a virtual key bound to OpenAI) and `ANTHROPIC_MODEL`. `claude -p` answers a question about a file
 * with its `Read` tool (allowed with `--allowedTools Read`); its Messages requests are translated to
 * OpenAI chat and back by the gateway. Everything but the model requests is off:
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_AUTOUPDATER`, `DISABLE_TELEMETRY`,
 * `DISABLE_ERROR_REPORTING`.
 */

test.serial('Claude Code runs a prompt that reads a file with its tool, through the gateway with a virtual key (Messages translated to chat)', async (t) => {
  const setup = await setUpAgent(t, 'claude-code', (notesPath) => ({ toolName: 'Read', toolArguments: { file_path: notesPath } }));
  const result = await run(packagePath('@anthropic-ai/claude-code/bin/claude.exe'), ['-p', 'What do the notes in notes.txt say?', '--allowedTools', 'Read'], {
    cwd: setup.workspace,
    env: {
      ...setup.environment,
      ANTHROPIC_BASE_URL: setup.url,
      ANTHROPIC_AUTH_TOKEN: setup.key,
      ANTHROPIC_MODEL: 'gpt-4o',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  });
  t.false(result.failed, result.stderr);
  t.is(result.stdout.trim(), FINAL_ANSWER);
  t.true(setup.fake.requests.every((request) => request.url === '/v1/chat/completions'));
  t.true(setup.fake.bodies().every((body) => body.model === 'gpt-4o'));
  await assertAgentRan(t, setup, ['messages']);
});
