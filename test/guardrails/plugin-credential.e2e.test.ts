import test from 'ava';
import { defineGuardrail } from '../../core/spec/index.js';
import { answering, ask, assertDenied, policyGateway } from './helpers.js';

// The core's side of vendor credentials: a plugin's `credential(id)` opens a credential stored in
// the vault when a check asks for it (not at boot), sees a rotation from the next check, and
// rejects for an unknown id (so the step's fail mode decides).

/** Allows only when the stored credential named by `target.id` holds the expected key and field. */
const secretChecked = defineGuardrail<{ target: { id: string; expected: string } }>(
  { id: 'secret-checked', version: '1.0.0', description: 'Reads a stored credential per check (test).', stages: ['input'], incremental: false },
  (params, { credential }) =>
    async () => {
      const opened = await credential(params.target.id);
      return opened.apiKey === params.target.expected && opened.fields?.region === 'eu-west-1' ? { action: 'allow' } : { action: 'deny', reason: 'wrong secret', flagged: [] };
    },
);

test.serial('a plugin opens a stored credential by id per check; a rotation applies at once; an unknown id fails the check', async (t) => {
  // The id is known only once the vault has stored it: the params object is read per check.
  const target = { id: 'cred_not_yet', expected: 'first-secret-0123456789' };
  const setup = await policyGateway({ input: [secretChecked({ target })] }, answering('ok'));
  t.teardown(() => setup.close());
  await assertDenied(t, ask(setup.client, 'before'));
  const [failed] = await setup.gateway.waitForEntries(1);
  t.like(failed.guardrails[0], { guardrail: 'secret-checked', action: 'deny', failure: 'error', onError: 'fail-closed' });

  const { vault } = setup.gateway.gateway;
  const stored = await vault.credentials.create({ name: 'vendor', secret: { api_key: target.expected, fields: { region: 'eu-west-1' } } });
  target.id = stored.id;
  t.like(await ask(setup.client, 'hello'), { content: 'ok' });

  target.expected = 'second-secret-9876543210';
  await assertDenied(t, ask(setup.client, 'still the old secret'));
  await vault.credentials.replaceSecret(stored.id, { api_key: target.expected, fields: { region: 'eu-west-1' } });
  t.like(await ask(setup.client, 'rotated'), { content: 'ok' });
  const entries = await setup.gateway.waitForEntries(4);
  t.deepEqual(
    entries.map((entry) => [entry.guardrails[0].action, entry.guardrails[0].failure]),
    [
      ['deny', 'error'],
      ['allow', undefined],
      ['deny', undefined],
      ['allow', undefined],
    ],
  );
  for (const secret of ['first-secret-0123456789', 'second-secret-9876543210']) t.false(setup.gateway.rawLog().includes(secret));
});
