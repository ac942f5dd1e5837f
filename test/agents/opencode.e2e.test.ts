import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { assertAgentRan, FINAL_ANSWER, packagePath, run, setUpAgent } from './agent-harness.js';

/**
 * opencode (`opencode-ai`, pinned; the package ships the Linux binary as its optional dependency
 * `opencode-linux-x64`) with only a base URL, a key and a model: an `opencode.json` in the project
 * declaring one OpenAI-compatible provider (`@ai-sdk/openai-compatible`, bundled in the binary) whose
 * `baseURL` is the gateway's `/v1` and whose `apiKey` is read from the environment (a virtual key).
 * `opencode run` answers a question about a file with its `read` tool; the title request it sends
 * beside the task goes through the gateway too. Update checks and the models.dev fetch are off.
 *
 * opencode also installs its plugin package (`@opencode-ai/plugin`) into each configuration folder
 * in the background, from the npm registry, unless that folder's lockfile already lists it; the
 * fresh home's configuration folder is given such a lockfile, so the run stays on loopback.
 */

/** A configuration folder opencode considers installed: `node_modules` present, the plugin package in package.json and the lockfile. */
function installedConfigFolder(folder: string): void {
  mkdirSync(join(folder, 'node_modules'), { recursive: true });
  const plugin = { '@opencode-ai/plugin': '1.18.33' };
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ dependencies: plugin }));
  writeFileSync(join(folder, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: plugin } } }));
}

test.serial('opencode runs a task that reads a file with its tool, through the gateway with a virtual key', async (t) => {
  const setup = await setUpAgent(t, 'opencode', (notesPath) => ({ toolName: 'read', toolArguments: { filePath: notesPath } }));
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: {
      gateway: {
        npm: '@ai-sdk/openai-compatible',
        name: 'LLM gateway',
        options: { baseURL: `${setup.url}/v1`, apiKey: '{env:LLM_GATEWAY_KEY}' },
        models: { 'gpt-4o': { name: 'gpt-4o', tool_call: true } },
      },
    },
    model: 'gateway/gpt-4o',
  };
  writeFileSync(join(setup.workspace, 'opencode.json'), JSON.stringify(config));
  installedConfigFolder(join(setup.environment.XDG_CONFIG_HOME!, 'opencode'));
  const result = await run(packagePath('opencode-ai/bin/opencode.exe'), ['run', 'What do the notes in notes.txt say?'], {
    cwd: setup.workspace,
    env: {
      ...setup.environment,
      LLM_GATEWAY_KEY: setup.key,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    },
  });
  t.false(result.failed, result.stderr);
  t.is(result.stdout.trim().split('\n').at(-1), FINAL_ANSWER);
  await assertAgentRan(t, setup, ['chat']);
});
