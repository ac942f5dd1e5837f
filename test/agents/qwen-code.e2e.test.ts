import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertAgentRan, FINAL_ANSWER, packagePath, run, setUpAgent } from './agent-harness.js';

/**
 * Qwen Code (`@qwen-code/qwen-code`, pinned) with only a base URL, a key and a model:
 * `OPENAI_BASE_URL` (the gateway's `/v1`), `OPENAI_API_KEY` (a virtual key) and `OPENAI_MODEL`, and
 * `security.auth.selectedType: "openai"` in `~/.qwen/settings.json`, which also turns off usage
 * statistics, telemetry and update checks. `qwen -p` answers a question about a file with its
 * `read_file` tool; it streams chat completions.
 */

test.serial('Qwen Code runs a prompt that reads a file with its tool, through the gateway with a virtual key', async (t) => {
  const setup = await setUpAgent(t, 'qwen-code', (notesPath) => ({ toolName: 'read_file', toolArguments: { file_path: notesPath } }));
  mkdirSync(join(setup.home, '.qwen'));
  const settings = {
    security: { auth: { selectedType: 'openai' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false },
  };
  writeFileSync(join(setup.home, '.qwen', 'settings.json'), JSON.stringify(settings));
  const result = await run(process.execPath, [packagePath('@qwen-code/qwen-code/cli-entry.js'), '-p', 'What do the notes in notes.txt say?'], {
    cwd: setup.workspace,
    env: { ...setup.nodeEnvironment, OPENAI_BASE_URL: `${setup.url}/v1`, OPENAI_API_KEY: setup.key, OPENAI_MODEL: 'gpt-4o', QWEN_CODE_NO_RELAUNCH: 'true' },
  });
  t.false(result.failed, result.stderr);
  t.is(result.stdout.trim(), FINAL_ANSWER);
  t.true(setup.fake.bodies().every((body) => body.model === 'gpt-4o' && body.stream === true));
  await assertAgentRan(t, setup, ['chat']);
});
