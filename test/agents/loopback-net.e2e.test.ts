import test from 'ava';
import { run, setUpAgent } from './agent-harness.js';

/**
 * The agent tests' claim that nothing left loopback rests on two nets: the proxy variables that
 * send every proxied request to a loopback trap, and the guard preloaded into Node processes. Both
 * must catch what they are there for, or that claim proves nothing.
 */

const NO_TASK = () => ({ toolName: 'none', toolArguments: {} });

test.serial('a Node process that follows the proxy variables lands in the trap, and its attempt is recorded', async (t) => {
  const setup = await setUpAgent(t, 'loopback-net', NO_TASK);
  const script = "fetch('https://example.com/').then((response) => console.log(response.status), (error) => console.log('failed'))";
  const result = await run(process.execPath, ['-e', script], { cwd: setup.workspace, env: setup.environment });
  t.is(result.stdout.trim(), 'failed');
  t.deepEqual(setup.escapes, ['CONNECT example.com:443']);
});

test.serial('the preloaded guard refuses and reports a connect beyond loopback that ignores the proxy variables', async (t) => {
  const setup = await setUpAgent(t, 'loopback-net', NO_TASK);
  const script = "require('node:net').connect(443, '192.0.2.1').on('error', (error) => console.log(error.code))";
  const result = await run(process.execPath, ['-e', script], { cwd: setup.workspace, env: setup.nodeEnvironment });
  t.is(result.stdout.trim(), 'ECONNREFUSED');
  t.deepEqual(setup.refused(), ['connect 192.0.2.1']);
  t.deepEqual(setup.escapes, []);
});
