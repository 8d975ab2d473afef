<?php

declare(strict_types=1);

namespace IapFcgi;

/** What an event asks of the game's inventory. */
enum GrantAction: string
{
    /** `delivered`: add the goods. */
    case Grant = 'grant';
    /** `refunded`: remove Grant::share() of the goods (1.0 unless Apple refunded a part). */
    case TakeBack = 'take_back';
    /**
     * `refund_reversed`: give back what the `refunded` event of the same transaction took back. The
     * service clears the revocation on a reversal, so the game's own record of that take-back says how much.
     */
    case GiveBack = 'give_back';
    /** `refund_requested`: nothing changes yet; answer with the consumption (ConsumptionReporter). */
    case None = 'none';
}
