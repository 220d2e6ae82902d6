import type { Logger } from '../logger.ts';
import type { Reservation } from './billing.types.ts';

type Hold = Pick<Reservation, 'id' | 'leaseId'>;

/**
 * Gives back the hold of a call that charges nothing (it failed, or delivered nothing). A failed release must not
 * replace the call's own outcome, so it is only logged: the hold expires and the reservation sweeper releases it.
 */
export async function releaseOrLog(
  billing: { release(reservation: Hold): Promise<unknown> },
  reservation: Hold,
  logger: Pick<Logger, 'error'>,
): Promise<void> {
  await billing.release(reservation).catch((error: unknown) => {
    logger.error({ err: error, reservationId: reservation.id }, 'release failed; the sweeper will retry');
  });
}
