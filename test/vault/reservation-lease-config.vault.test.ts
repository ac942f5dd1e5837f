import test from 'ava';
import { resolveConfig } from '../../config/index.js';

// vault.reservationLeaseMs (docs/limits.md#reservations-and-their-lease): twice upstream.timeoutMs
// unless set; the environment wins over the file.

test('the reservation lease defaults to twice the upstream timeout', (t) => {
  t.is(resolveConfig({ providers: [] }, {}).vault.reservationLeaseMs, 1_200_000);
  t.is(resolveConfig({ providers: [], upstream: { timeoutMs: 900_000 } }, {}).vault.reservationLeaseMs, 1_800_000);
});

test('vault.reservationLeaseMs sets it; GATEWAY_RESERVATION_LEASE_MS wins; a bad value stops the boot', (t) => {
  t.is(resolveConfig({ providers: [], vault: { reservationLeaseMs: 3_600_000 } }, {}).vault.reservationLeaseMs, 3_600_000);
  t.is(resolveConfig({ providers: [], vault: { reservationLeaseMs: 3_600_000 } }, { GATEWAY_RESERVATION_LEASE_MS: '15000' }).vault.reservationLeaseMs, 15_000);
  t.throws(() => resolveConfig({ providers: [] }, { GATEWAY_RESERVATION_LEASE_MS: 'soon' }), { message: /GATEWAY_RESERVATION_LEASE_MS/ });
});
